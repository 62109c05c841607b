// TETHER_CHECK: an always-on invariant. It is for things that must never
// happen (a bug in Tether), never for user input: a failed check logs the
// message with its location and aborts the process.
#pragma once

#include <string_view>

namespace tether::detail {
[[noreturn]] void check_failed(std::string_view cond, std::string_view msg, const char* file, int line);
}

#define TETHER_CHECK(cond, msg)                                             \
  do {                                                                      \
    if (!(cond)) [[unlikely]]                                               \
      ::tether::detail::check_failed(#cond, (msg), __FILE__, __LINE__);     \
  } while (0)
