// Helpers shared by the fuzz targets (fuzz/*.cpp, built by fuzz/fuzz.cmake).
//
// A target checks invariants with FUZZ_CHECK: a violation is
// __builtin_trap(), which libFuzzer records as a crash with its input. Every
// target also catches nothing: an exception escaping a parser is a crash too
// (libFuzzer aborts on it), since parsers report bad input as values.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#define FUZZ_CHECK(cond)          \
  do {                            \
    if (!(cond)) __builtin_trap(); \
  } while (false)

namespace tether::fuzz {

// RFC 3629 UTF-8: no overlong forms, no surrogates, nothing past U+10FFFF.
inline bool valid_utf8(std::string_view s) {
  std::size_t i = 0;
  const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
  while (i < s.size()) {
    const unsigned c = byte(i);
    if (c < 0x80) {
      ++i;
      continue;
    }
    std::size_t n = 0;
    unsigned lo = 0x80;
    unsigned hi = 0xBF;
    if (c >= 0xC2 && c <= 0xDF) {
      n = 1;
    } else if (c >= 0xE0 && c <= 0xEF) {
      n = 2;
      if (c == 0xE0) lo = 0xA0;
      if (c == 0xED) hi = 0x9F;
    } else if (c >= 0xF0 && c <= 0xF4) {
      n = 3;
      if (c == 0xF0) lo = 0x90;
      if (c == 0xF4) hi = 0x8F;
    } else {
      return false;
    }
    for (std::size_t k = 1; k <= n; ++k) {
      if (i + k >= s.size()) return false;
      const unsigned b = byte(i + k);
      if (k == 1 ? (b < lo || b > hi) : (b < 0x80 || b > 0xBF)) return false;
    }
    i += n + 1;
  }
  return true;
}

// Reads the input front to back: small decisions (which format, where to
// split) taken from its first bytes, the rest left as the payload.
class input_reader {
 public:
  input_reader(const std::uint8_t* data, std::size_t size)
      : rest_(reinterpret_cast<const char*>(data), size) {}
  std::uint8_t byte() {
    if (rest_.empty()) return 0;
    const auto b = static_cast<std::uint8_t>(rest_.front());
    rest_.remove_prefix(1);
    return b;
  }
  [[nodiscard]] std::string_view rest() const { return rest_; }

 private:
  std::string_view rest_;
};

// Deterministic split points for chunked feeding: xorshift over a seed.
class splitter {
 public:
  explicit splitter(std::uint64_t seed) : state_(seed * 0x9E3779B97F4A7C15ULL + 1) {}
  // The next chunk length, 1..max.
  std::size_t next(std::size_t max) {
    state_ ^= state_ << 13U;
    state_ ^= state_ >> 7U;
    state_ ^= state_ << 17U;
    return 1 + static_cast<std::size_t>(state_ % (max == 0 ? 1 : max));
  }

 private:
  std::uint64_t state_;
};

}  // namespace tether::fuzz
