// The pieces the e2e record codecs share (internal to src/e2e): the schema
// names, null-for-absent writers and the suite tally's JSON form, used by
// the cell record (cell_record.cpp), the campaign record
// (campaign_record.cpp) and the history (history_record.cpp).
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include "e2e/json_io.h"
#include "e2e/result.h"

namespace tether::e2e::record_json {

constexpr std::string_view result_schema = "tether.e2e.result/v1";
constexpr std::string_view campaign_schema = "tether.e2e.campaign/v1";
constexpr std::string_view history_schema = "tether.e2e.history/v1";

// JSON null for an absent value (never 0: a missing cost is "unavailable").
template <class T>
boost::json::value or_null(const std::optional<T>& v) {
  if (!v) return nullptr;
  return boost::json::value(*v);
}

inline boost::json::value string_or_null(const std::string& s) {
  if (s.empty()) return nullptr;
  return boost::json::value(s);
}

// {suiteId?, selected, passed, failed, incomplete, retries}
boost::json::object tally_json(const suite_tally& t, bool with_id);
void read_tally(json_reader& r, suite_tally& t, bool with_id);

}  // namespace tether::e2e::record_json
