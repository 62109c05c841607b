// e2e JSON plumbing shared by the record files (internal to src/e2e).
//
// json_reader walks one JSON object and collects the first problem instead of
// stopping at every field, so a `_from_json` function reads like the schema:
//
//   json_reader r(v, "result record");
//   r.expect_schema("tether.e2e.result/v1");
//   c.cell = r.str("cell");                       // required string
//   c.model = r.opt_str("model");                 // missing or null → ""
//   r.each("turns", [&](json_reader& t) { ... }); // every element
//   if (!r.ok()) return r.failure();              // e2e_errc::bad_record
//
// Messages name the path of the field: `result record: turns[1].runDurationMs
// is not a number`. Readers made by object()/each() share their parent's
// error, so the first problem anywhere is the one reported.
//
// write_json_file / read_json_file (declared in result.h) live in json_io.cpp,
// with pretty_json(), the 2-space-indented form they write.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include <boost/json/value.hpp>

#include "e2e/errors.h"
#include "util/result.h"

namespace tether::e2e {

enum field_presence { required_field, optional_field };

class json_reader {
 public:
  json_reader(const boost::json::value& v, std::string where);

  // The "schema" field must equal `schema`.
  void expect_schema(std::string_view schema);

  std::string str(std::string_view key);  // required, a string
  std::string opt_str(std::string_view key, std::string_view fallback = {});
  std::int64_t integer(std::string_view key);  // required, a whole number
  std::int64_t integer(std::string_view key, std::int64_t fallback);
  std::optional<std::int64_t> opt_integer(std::string_view key);
  std::optional<double> opt_number(std::string_view key);
  bool boolean(std::string_view key);       // required
  std::int64_t time(std::string_view key);  // required ISO 8601 UTC → unix ms

  // A string field parsed by `parse`; an unknown value is an error.
  template <class E>
  std::optional<E> enumeration(std::string_view key, std::optional<E> (*parse)(std::string_view),
                               field_presence presence = required_field) {
    const std::string s = presence == required_field ? str(key) : opt_str(key);
    if (s.empty() && presence == optional_field) return std::nullopt;
    if (!ok()) return std::nullopt;
    auto e = parse(s);
    if (!e) fail(std::string(key), "has an unknown value \"" + s + "\"");
    return e;
  }

  // The nested object `key` (nullopt when absent/null and optional, or on error).
  std::optional<json_reader> object(std::string_view key, field_presence presence = required_field);
  // Calls `f` with a reader over each element of the array `key`.
  void each(std::string_view key, const std::function<void(json_reader&)>& f, field_presence presence = optional_field);
  // Calls `f` with each member of this object.
  void each_member(const std::function<void(const std::string&, json_reader&)>& f);
  // This value as a string (for arrays of strings and maps of strings).
  std::string self_str();

  [[nodiscard]] bool ok() const { return err_->empty(); }
  [[nodiscard]] tether::error failure() const;

 private:
  json_reader(const boost::json::value* v, std::string where, std::shared_ptr<std::string> err);
  const boost::json::value* field(std::string_view key, bool required);
  void fail(const std::string& key, const std::string& what);

  const boost::json::value* v_;
  std::string where_;  // "result record" or "result record: turns[1]"
  std::shared_ptr<std::string> err_;
};

// Writes `text` to `path` atomically: a temp file in the same directory,
// synced, renamed over the target (a reader sees the old file or the new
// one, never half of one); the parent directories are created.
result<void> write_file_atomic(const std::filesystem::path& path, std::string_view text);

// `v` as JSON text, 2-space indented, one member per line, ending in "\n".
std::string pretty_json(const boost::json::value& v);

// `text` as it appears inside a JSON string (escaped, without the quotes), to
// find a text in serialized JSON.
std::string json_escaped(std::string_view text);

// ISO 8601 UTC ("2026-11-30T09:01:02.345Z", milliseconds optional) → unix ms.
std::optional<std::int64_t> parse_iso8601(std::string_view s);

}  // namespace tether::e2e
