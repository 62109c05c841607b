// `tether mock-llm`: runs mock::server in the foreground. Prints exactly one
// line on stdout once bound ("mock-llm listening on http://HOST:PORT", or
// https://), so a parent process can wait for it and read the port; logs go
// to stderr.
//
// --tls serves HTTPS. Without --tls-cert/--tls-key it makes a self-signed
// certificate for localhost, 127.0.0.1 and ::1 at start. The certificate a
// client must trust is written to --tls-cert-out FILE (kept after exit), or
// else to a temporary file named on stderr and removed at exit; either file
// is complete before the "listening" line is printed.
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include <fmt/format.h>
#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>

#include "cli/commands.h"
#include "http/server_tls.h"
#include "mock/server.h"

namespace tether::cli {

namespace {

namespace fs = std::filesystem;

struct mock_llm_args {
  std::string listen = "127.0.0.1:0";
  std::string record;
  std::size_t max_kept_bytes = mock::server_options{}.max_kept_bytes;
  bool tls = false;
  std::string tls_cert;
  std::string tls_key;
  std::string tls_cert_out;
};

// Writes `text` to a sibling file and renames it over `path`, so a reader
// never sees a partial certificate.
result<void> write_whole_file(const fs::path& path, const std::string& text) {
  const fs::path partial = path.string() + ".partial";
  {
    std::ofstream out(partial, std::ios::binary | std::ios::trunc);
    out << text;
    out.close();
    if (!out) return error(util_errc::invalid_argument, "cannot write " + partial.string());
  }
  std::error_code ec;
  fs::rename(partial, path, ec);
  if (ec) return error(util_errc::invalid_argument, "cannot write " + path.string() + ": " + ec.message());
  return ok();
}

// A fresh temporary file holding `text`; its path.
result<fs::path> write_temporary(const std::string& text) {
  const char* dir = std::getenv("TMPDIR");
  std::string pattern = std::string(dir != nullptr && *dir != '\0' ? dir : "/tmp") + "/tether-mock-llm-XXXXXX.pem";
  const int fd = ::mkstemps(pattern.data(), 4);
  if (fd < 0) return error(util_errc::invalid_argument, "cannot create a temporary file like " + pattern);
  const bool written = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  ::close(fd);
  if (!written) {
    ::unlink(pattern.c_str());
    return error(util_errc::invalid_argument, "cannot write " + pattern);
  }
  return fs::path(pattern);
}

// The identity to serve: the given files, or a new self-signed one.
result<http::tls_identity> tls_identity_for(const mock_llm_args& args) {
  if (!args.tls_cert.empty()) return http::load_tls_identity(args.tls_cert, args.tls_key);
  return http::make_self_signed_identity();
}

int run_mock_llm(const mock_llm_args& args) {
  mock::server_options options;
  options.listen = args.listen;
  if (!args.record.empty()) options.record_file = args.record;
  options.max_kept_bytes = args.max_kept_bytes;
  fs::path temporary_cert;
  if (args.tls) {
    auto identity = tls_identity_for(args);
    if (!identity) {
      fmt::print(stderr, "tether mock-llm: {}\n", identity.error().describe());
      return 2;
    }
    if (!args.tls_cert_out.empty()) {
      if (auto w = write_whole_file(args.tls_cert_out, identity->certificate_pem); !w) {
        fmt::print(stderr, "tether mock-llm: {}\n", w.error().describe());
        return 2;
      }
    } else if (args.tls_cert.empty()) {
      auto written = write_temporary(identity->certificate_pem);
      if (!written) {
        fmt::print(stderr, "tether mock-llm: {}\n", written.error().describe());
        return 2;
      }
      temporary_cert = *written;
      fmt::print(stderr, "mock-llm: self-signed certificate in {} (clients trust it with SSL_CERT_FILE={})\n",
                 temporary_cert.string(), temporary_cert.string());
    }
    options.tls = std::move(*identity);
  }
  mock::server server(options);
  const auto remove_temporary = [&] {
    std::error_code ignored;
    if (!temporary_cert.empty()) fs::remove(temporary_cert, ignored);
  };

  // Signals are caught before the server starts, so a signal sent right after
  // the "listening" line is never lost.
  boost::asio::io_context io;
  boost::asio::signal_set signals(io, SIGINT, SIGTERM);
  if (auto r = server.start(); !r) {
    fmt::print(stderr, "tether mock-llm: {}\n", r.error().describe());
    remove_temporary();
    return 2;
  }
  fmt::print("mock-llm listening on {}\n", server.base_url());
  std::fflush(stdout);
  signals.async_wait([](const boost::system::error_code&, int) {});
  io.run();
  server.stop();
  remove_temporary();
  return 0;
}

}  // namespace

void add_mock_llm_command(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<mock_llm_args>();
  auto* cmd = app.add_subcommand("mock-llm", "Serve the scripted model (OpenAI Chat/Responses, Anthropic Messages)");
  cmd->add_option("--listen", args->listen, "HOST:PORT to listen on (port 0 picks a free one)")->capture_default_str();
  cmd->add_option("--record", args->record, "append every model request to FILE as one JSON line");
  cmd->add_option("--max-kept-bytes", args->max_kept_bytes,
                  "memory for the requests /_mock/requests returns (the newest within it; --record keeps all)")
      ->capture_default_str();
  auto* tls = cmd->add_flag("--tls", args->tls,
                            "serve HTTPS; without --tls-cert, with a self-signed certificate made at start for "
                            "localhost, 127.0.0.1 and ::1");
  auto* cert = cmd->add_option("--tls-cert", args->tls_cert, "with --tls: the certificate (chain) PEM FILE to serve")
                   ->check(CLI::ExistingFile)
                   ->needs(tls);
  auto* key = cmd->add_option("--tls-key", args->tls_key, "with --tls-cert: its private key PEM FILE")
                  ->check(CLI::ExistingFile)
                  ->needs(cert);
  cert->needs(key);
  cmd->add_option("--tls-cert-out", args->tls_cert_out,
                  "with --tls: write the served certificate PEM to FILE (what clients trust, e.g. SSL_CERT_FILE); "
                  "without it a generated certificate goes to a temporary file named on stderr")
      ->needs(tls);
  cmd->callback([args, &exit_code] { exit_code = run_mock_llm(*args); });
}

}  // namespace tether::cli
