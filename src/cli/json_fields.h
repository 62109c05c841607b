// Lenient readers of the server's JSON for the CLI: a missing or mistyped
// field reads as empty, so a newer server's extra or changed fields never
// crash an older client (what is shown may just be blank).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include <boost/json/value.hpp>

namespace tether::cli {

// A string field; other non-null values as their JSON text; else "".
std::string str_of(const boost::json::value& v, std::string_view key);
// An integer field, else 0.
std::int64_t int_of(const boost::json::value& v, std::string_view key);
// A field of any type, else a null value.
const boost::json::value& member(const boost::json::value& v, std::string_view key);
// An array field, else nullptr.
const boost::json::array* array_of(const boost::json::value& v, std::string_view key);

}  // namespace tether::cli
