#include "cli/common.h"

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>

#include <fmt/format.h>
#include <boost/json.hpp>

#include "cli/commands.h"
#include "config/config.h"
#include "env/kinds.h"
#include "runtime/kind.h"

namespace tether::cli {

namespace {

namespace fs = std::filesystem;

std::string env_or(const char* name, std::string fallback) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' ? std::string(v) : std::move(fallback);
}

std::string trimmed(const std::string& s) {
  const auto first = s.find_first_not_of(" \t\r\n");
  if (first == std::string::npos) return {};
  const auto last = s.find_last_not_of(" \t\r\n");
  return s.substr(first, last - first + 1);
}

}  // namespace

void add_common_options(CLI::App& cmd, common_args& args) {
  cmd.add_option("--server", args.server, "the server's URL (default: $TETHER_SERVER, else http://127.0.0.1:7420)");
  cmd.add_option("--token", args.token, "the bearer token (default: $TETHER_TOKEN, else the file <data>/token)");
  cmd.add_option("--data", args.data,
                 "the server's data directory, for its token file (default: the config's "
                 "data_dir, else ./tether-data)");
  cmd.add_option("--config", args.config, "the TOML configuration (default: $TETHER_CONFIG)");
  cmd.add_flag("--json", args.json, "print the server's JSON (streams: one document per line)");
}

std::string server_url(const common_args& args) {
  return !args.server.empty() ? args.server : env_or("TETHER_SERVER", "http://127.0.0.1:7420");
}

token_lookup find_token(const common_args& args) {
  token_lookup t;
  std::string data = args.data;
  if (data.empty()) {
    auto settings = config::load(args.config.empty() ? std::nullopt : std::optional<fs::path>(args.config),
                                 runtime::config_kinds(), env::config_kinds());
    if (settings) {
      data = settings->data_dir;
    } else {
      t.problem = settings.error().message;
    }
  }
  if (data.empty()) data = config::default_data_dir();
  t.file = (fs::path(data) / "token").string();
  if (!args.token.empty()) {
    t.token = args.token;
    t.source = "--token";
    return t;
  }
  if (const char* env = std::getenv("TETHER_TOKEN"); env != nullptr && *env != '\0') {
    t.token = env;
    t.source = "$TETHER_TOKEN";
    return t;
  }
  std::ifstream in(t.file);
  if (in) {
    t.token = trimmed(std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()));
    t.source = "the file " + t.file;
  }
  return t;
}

client_options resolve_client_options(const common_args& args) {
  client_options o;
  o.server = server_url(args);
  auto t = find_token(args);
  o.token = std::move(t.token);
  o.token_source = o.token.empty() ? fmt::format(
                                         "no --token, no $TETHER_TOKEN, and no file {} (`tether serve --data DIR` "
                                         "writes DIR/token: pass --data DIR)",
                                         t.file)
                                   : std::move(t.source);
  return o;
}

int report(const error& e) {
  fmt::print(stderr, "tether: {}\n", e.message.empty() ? e.describe() : e.message);
  if (e == util_errc::invalid_argument) return exit_usage;
  return exit_code_for(e);
}

int usage_error(std::string_view message) {
  fmt::print(stderr, "tether: {}\n", message);
  return exit_usage;
}

void print_json_line(const boost::json::value& v) {
  const std::string line = boost::json::serialize(v) + "\n";
  std::fwrite(line.data(), 1, line.size(), stdout);
  std::fflush(stdout);
}

std::string path_segment(std::string_view id) {
  std::string out;
  for (const char c : id) {
    const auto u = static_cast<unsigned char>(c);
    if (std::isalnum(u) != 0 || c == '_' || c == '-' || c == '.' || c == '~') {
      out += c;
    } else {
      out += fmt::format("%{:02X}", u);
    }
  }
  return out;
}

}  // namespace tether::cli
