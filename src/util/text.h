// Text checks applied to everything that enters from outside.
#pragma once

#include <string_view>

#include "util/result.h"

namespace tether {

// True when s is well-formed UTF-8 (no overlongs, no surrogates, <= U+10FFFF).
bool is_valid_utf8(std::string_view s);

// util_errc::invalid_utf8 or util_errc::too_large (limit in bytes), naming `what`.
result<void> check_text(std::string_view what, std::string_view s, std::size_t max_bytes);

}  // namespace tether
