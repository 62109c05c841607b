// Small readers the dialects share: one line of an agent's JSON output, its
// fields read leniently (a missing or mistyped field reads as empty or 0),
// and the files they write into the agent's home.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

#include <boost/json/object.hpp>

#include "util/result.h"

namespace tether::runtime::agent {

// The line as a JSON object; an error quoting (the start of) what it is
// instead: the agent printed something that is not its protocol.
result<boost::json::object> parse_object(std::string_view line);

std::string str(const boost::json::object& o, std::string_view key);
std::int64_t integer(const boost::json::object& o, std::string_view key);
const boost::json::object* object_at(const boost::json::object& o, std::string_view key);

// A TOML basic string with its quotes.
std::string toml_string(std::string_view s);

// Writes `content` to `home`/`rel` (created 0600, parents 0700), replacing
// it. The agent can write its home: each step is opened beneath `home`
// without following a link (util/beneath.h), the file is renamed into the
// opened parent, so a link the agent planted there makes the write fail and
// never redirects it.
result<void> write_private_file(const std::filesystem::path& home, const std::filesystem::path& rel,
                                std::string_view content);

}  // namespace tether::runtime::agent
