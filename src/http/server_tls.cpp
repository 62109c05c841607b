// Self-signed certificates with OpenSSL 3's EVP and X509 APIs; every OpenSSL
// object is owned by a unique_ptr with its free function.
#include "http/server_tls.h"

#include <fstream>
#include <sstream>

#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <boost/asio/ssl/context.hpp>

namespace tether::http {

namespace ssl = boost::asio::ssl;

namespace {

template <class T, void (*Free)(T*)>
struct deleter {
  void operator()(T* p) const { Free(p); }
};
using pkey_ptr = std::unique_ptr<EVP_PKEY, deleter<EVP_PKEY, EVP_PKEY_free>>;
using x509_ptr = std::unique_ptr<X509, deleter<X509, X509_free>>;
using ext_ptr = std::unique_ptr<X509_EXTENSION, deleter<X509_EXTENSION, X509_EXTENSION_free>>;
using bn_ptr = std::unique_ptr<BIGNUM, deleter<BIGNUM, BN_free>>;
void bio_free(BIO* b) { BIO_free(b); }
using bio_ptr = std::unique_ptr<BIO, deleter<BIO, bio_free>>;

constexpr long valid_before_now_seconds = 3600;
constexpr long valid_days = 30;

// The oldest queued OpenSSL error, for messages; clears the queue.
std::string openssl_reason() {
  const unsigned long code = ERR_get_error();
  ERR_clear_error();
  if (code == 0) return "unknown OpenSSL error";
  char text[256];
  ERR_error_string_n(code, text, sizeof text);
  return text;
}

tether::error tls_error(const std::string& what) { return {server_errc::tls_failed, what + ": " + openssl_reason()}; }

bool add_extension(X509* cert, int nid, const std::string& value) {
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, cert, cert, nullptr, nullptr, 0);
  ext_ptr ext(X509V3_EXT_conf_nid(nullptr, &ctx, nid, value.c_str()));
  return ext && X509_add_ext(cert, ext.get(), -1) == 1;
}

std::string subject_alt_names(const self_signed_names& names) {
  std::string out;
  const auto add = [&](const char* kind, const std::string& v) {
    if (!out.empty()) out += ',';
    out += kind;
    out += v;
  };
  for (const auto& d : names.dns) add("DNS:", d);
  for (const auto& a : names.ip) add("IP:", a);
  return out;
}

// Everything a memory BIO holds, as a string.
std::string drain(BIO* bio) {
  char* data = nullptr;
  const long n = BIO_get_mem_data(bio, &data);
  return n > 0 ? std::string(data, static_cast<std::size_t>(n)) : std::string();
}

result<std::string> read_file(const std::filesystem::path& p, const char* what) {
  std::ifstream in(p, std::ios::binary);
  if (!in) return tether::error(server_errc::tls_failed, std::string("cannot read the ") + what + " " + p.string());
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

result<tls_identity> make_self_signed_identity(const self_signed_names& names) {
  if (names.dns.empty() && names.ip.empty())
    return tether::error(server_errc::tls_failed, "a certificate needs at least one name or address");
  pkey_ptr key(EVP_EC_gen("P-256"));
  if (!key) return tls_error("cannot generate a key");
  x509_ptr cert(X509_new());
  if (!cert) return tls_error("cannot allocate a certificate");
  bn_ptr serial(BN_new());
  if (!serial || BN_rand(serial.get(), 120, BN_RAND_TOP_ANY, BN_RAND_BOTTOM_ANY) != 1 ||
      BN_to_ASN1_INTEGER(serial.get(), X509_get_serialNumber(cert.get())) == nullptr)
    return tls_error("cannot make a serial number");
  X509_NAME* subject = X509_get_subject_name(cert.get());
  const auto* cn = reinterpret_cast<const unsigned char*>("tether");
  if (X509_set_version(cert.get(), 2) != 1 ||
      X509_gmtime_adj(X509_getm_notBefore(cert.get()), -valid_before_now_seconds) == nullptr ||
      X509_gmtime_adj(X509_getm_notAfter(cert.get()), valid_days * 24 * 3600) == nullptr ||
      X509_set_pubkey(cert.get(), key.get()) != 1 ||
      X509_NAME_add_entry_by_txt(subject, "CN", MBSTRING_ASC, cn, -1, -1, 0) != 1 ||
      X509_set_issuer_name(cert.get(), subject) != 1)
    return tls_error("cannot fill the certificate");
  if (!add_extension(cert.get(), NID_basic_constraints, "critical,CA:FALSE") ||
      !add_extension(cert.get(), NID_key_usage, "critical,digitalSignature") ||
      !add_extension(cert.get(), NID_ext_key_usage, "serverAuth") ||
      !add_extension(cert.get(), NID_subject_key_identifier, "hash") ||
      !add_extension(cert.get(), NID_subject_alt_name, subject_alt_names(names)))
    return tls_error("cannot add the certificate's extensions (names: " + subject_alt_names(names) + ")");
  if (X509_sign(cert.get(), key.get(), EVP_sha256()) == 0) return tls_error("cannot sign the certificate");

  bio_ptr cert_bio(BIO_new(BIO_s_mem()));
  bio_ptr key_bio(BIO_new(BIO_s_mem()));
  if (!cert_bio || !key_bio || PEM_write_bio_X509(cert_bio.get(), cert.get()) != 1 ||
      PEM_write_bio_PrivateKey(key_bio.get(), key.get(), nullptr, nullptr, 0, nullptr, nullptr) != 1)
    return tls_error("cannot encode the certificate");
  return tls_identity{.certificate_pem = drain(cert_bio.get()), .private_key_pem = drain(key_bio.get())};
}

result<tls_identity> load_tls_identity(const std::filesystem::path& certificate_file,
                                       const std::filesystem::path& private_key_file) {
  auto cert = read_file(certificate_file, "certificate");
  if (!cert) return cert.error();
  auto key = read_file(private_key_file, "private key");
  if (!key) return key.error();
  tls_identity id{.certificate_pem = std::move(*cert), .private_key_pem = std::move(*key)};
  // Parse now, so a bad file is reported at start with its name.
  if (auto ctx = make_server_tls_context(id); !ctx)
    return tether::error(server_errc::tls_failed, certificate_file.string() + " / " + private_key_file.string() +
                                                      ": " + ctx.error().message);
  return id;
}

result<std::shared_ptr<ssl::context>> make_server_tls_context(const tls_identity& identity) {
  auto ctx = std::make_shared<ssl::context>(ssl::context::tls_server);
  boost::system::error_code ec;
  ctx->set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 | ssl::context::no_sslv3 |
                       ssl::context::no_tlsv1 | ssl::context::no_tlsv1_1 | ssl::context::single_dh_use,
                   ec);
  if (ec) return tether::error(server_errc::tls_failed, "cannot set TLS options: " + ec.message());
  ctx->use_certificate_chain(boost::asio::buffer(identity.certificate_pem), ec);
  if (ec) return tether::error(server_errc::tls_failed, "the certificate is not usable PEM: " + ec.message());
  ctx->use_private_key(boost::asio::buffer(identity.private_key_pem), ssl::context::pem, ec);
  if (ec) return tether::error(server_errc::tls_failed, "the private key is not usable PEM: " + ec.message());
  if (SSL_CTX_check_private_key(ctx->native_handle()) != 1)
    return tls_error("the private key does not match the certificate");
  return ctx;
}

}  // namespace tether::http
