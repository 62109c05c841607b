// What the API client verbs share: the --server/--token/--data/--config/--json
// options (commands.h documents the defaults), turning them into
// client_options, and reporting errors the same way everywhere.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include <CLI/CLI.hpp>
#include <boost/json/value.hpp>

#include "cli/client.h"
#include "util/result.h"

namespace tether::cli {

enum class output_format { text, json };

struct common_args {
  std::string server;
  std::string token;
  std::string data;
  std::string config;
  std::string store;  // doctor: the store to check (default: the config's)
  bool json = false;

  [[nodiscard]] output_format format() const { return json ? output_format::json : output_format::text; }
};

void add_common_options(CLI::App& cmd, common_args& args);

// Where the token comes from, in order: --token, $TETHER_TOKEN, <data>/token.
struct token_lookup {
  std::string token;                   // empty when none was found
  std::string source;                  // "--token", "$TETHER_TOKEN", "the file X"
  std::string file;                    // <data>/token, whether or not it exists
  std::optional<std::string> problem;  // e.g. the config does not parse
};
token_lookup find_token(const common_args& args);

// The server URL: --server, $TETHER_SERVER, http://127.0.0.1:7420.
std::string server_url(const common_args& args);

client_options resolve_client_options(const common_args& args);

// Prints "tether: MESSAGE" on stderr and returns the error's exit code.
int report(const error& e);
// Prints "tether: MESSAGE" on stderr and returns 2.
int usage_error(std::string_view message);

// One JSON document on one line of stdout.
void print_json_line(const boost::json::value& v);

// A path segment for a user-given id (ids are [A-Za-z0-9_-]; anything else
// is percent-encoded so a typo cannot change the route).
std::string path_segment(std::string_view id);

}  // namespace tether::cli
