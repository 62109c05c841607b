// Text checks applied to everything that enters from outside.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "util/result.h"

namespace tether {

// True when s is well-formed UTF-8 (no overlongs, no surrogates, <= U+10FFFF).
bool is_valid_utf8(std::string_view s);

// The length (1-4) of the well-formed UTF-8 sequence starting at s[i], or 0
// when the bytes there are not one; `cp`, when given, receives its code point.
std::size_t utf8_sequence(std::string_view s, std::size_t i, char32_t* cp = nullptr);

// The last line of `text` with something on it, without trailing blanks:
// what a failing program said last. "(no output)" when there is none.
std::string last_line(std::string_view text);

// util_errc::invalid_utf8 or util_errc::too_large (limit in bytes), naming `what`.
result<void> check_text(std::string_view what, std::string_view s, std::size_t max_bytes);

}  // namespace tether
