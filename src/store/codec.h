// How stored text columns map to JSON and payloads, shared by the append
// path (which proves a payload reads back before storing it) and the reads.
//
// Error policy (documented in event_store.h):
//   text that is not JSON, or not the JSON shape a column needs -> store_errc::corrupt
//   a well-formed payload the catalogue cannot decode          -> model_errc::undecodable
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <boost/json/value.hpp>

#include "model/events.h"
#include "model/task.h"
#include "util/result.h"

namespace tether::store {

// Nesting limit for stored JSON; appends deeper than this are rejected.
inline constexpr unsigned max_json_depth = 256;

// Parses a stored JSON column; `what` names the row for the error message.
result<boost::json::value> parse_column(std::string_view text, std::string_view what);

// Decodes a stored event payload (type, version, data column).
result<model::payload> decode_payload(std::string_view type, int version, std::string_view data, std::string_view what);

std::string usage_text(const model::usage& u);
result<model::usage> parse_usage(std::string_view text, std::string_view what);

// A project's stored repositories (JSON text); corrupt when they do not read back.
result<std::vector<model::project_repository>> decode_repositories(std::string_view project, std::string_view text);
// Its setup commands (a JSON array of strings); corrupt when they do not read back.
result<std::vector<std::string>> decode_setup(std::string_view project, std::string_view text);
std::string encode_setup(const std::vector<std::string>& setup);

}  // namespace tether::store
