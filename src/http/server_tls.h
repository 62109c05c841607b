// The certificate side of an HTTPS server: a self-signed identity made at
// start, or one read from PEM files, turned into a server TLS context.
//
//   auto id = http::make_self_signed_identity();          // localhost, 127.0.0.1, ::1
//   write(cert_file, id->certificate_pem);                // what clients trust
//   auto ctx = http::make_server_tls_context(*id);        // shared_ptr<ssl::context>
//
// A self-signed identity is an EC P-256 key and a certificate signed by that
// key: subject CN "tether", subjectAltName listing the given names and
// addresses, extended key usage serverAuth, valid from one hour ago for 30
// days. A client that adds the certificate PEM to its trust store (OpenSSL:
// SSL_CERT_FILE, or load_verify_file) verifies it with host name checking on,
// for exactly those names; nothing else trusts it.
//
// The context speaks TLS 1.2 and 1.3 only and keeps OpenSSL's server session
// cache and tickets, so clients can resume sessions.
//
// Errors: server_errc::tls_failed, with a message naming what failed (a file
// that cannot be read, a PEM that does not parse, a key that does not match
// the certificate).
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "http/server_errors.h"
#include "util/result.h"

namespace boost::asio::ssl {
class context;
}

namespace tether::http {

struct tls_identity {
  std::string certificate_pem;  // the certificate (chain) the server presents
  std::string private_key_pem;  // its private key; never logged, never written by this component
};

struct self_signed_names {
  std::vector<std::string> dns = {"localhost"};
  std::vector<std::string> ip = {"127.0.0.1", "::1"};
};

result<tls_identity> make_self_signed_identity(const self_signed_names& names = {});
result<tls_identity> load_tls_identity(const std::filesystem::path& certificate_file,
                                       const std::filesystem::path& private_key_file);
result<std::shared_ptr<boost::asio::ssl::context>> make_server_tls_context(const tls_identity& identity);

}  // namespace tether::http
