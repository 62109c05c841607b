// Error codes of the util layer (input validation shared by every layer).
#pragma once

#include <system_error>

namespace tether {

enum class util_errc {
  invalid_argument = 1,  // a value does not have the required shape
  malformed_id,          // an id lacks its prefix or has forbidden characters
  invalid_utf8,          // text is not valid UTF-8
  too_large,             // a value exceeds a configured limit
  malformed_json,        // JSON text does not parse or has the wrong shape
  not_found,             // what a name or a prefix refers to does not exist, or is not one thing
};

const std::error_category& util_category();
inline std::error_code make_error_code(util_errc e) { return {static_cast<int>(e), util_category()}; }

}  // namespace tether

template <>
struct std::is_error_code_enum<tether::util_errc> : std::true_type {};
