#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <random>

#include "util/check.h"
#include "util/clock.h"
#include "util/errors.h"
#include "util/ids.h"
#include "util/random.h"
#include "util/result.h"
#include "util/text.h"

namespace tether {

namespace detail {

void check_failed(std::string_view cond, std::string_view msg, const char* file, int line) {
  std::fprintf(stderr, "TETHER_CHECK failed at %s:%d: %.*s: %.*s\n", file, line, static_cast<int>(cond.size()),
               cond.data(), static_cast<int>(msg.size()), msg.data());
  std::fflush(stderr);
  std::abort();
}

std::string generate_id_body() {
  static constexpr std::string_view alphabet = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";
  thread_local std::mt19937_64 rng = [] {
    std::random_device rd;
    std::seed_seq seq{rd(), rd(), rd(), rd()};
    return std::mt19937_64(seq);
  }();
  const auto ms = static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
          .count());
  std::string out(26, '0');
  // 10 characters of time (50 bits, top 2 always zero), 16 of randomness.
  for (int i = 9; i >= 0; --i) out[static_cast<std::size_t>(9 - i)] = alphabet[(ms >> (i * 5)) & 31U];
  std::uint64_t a = rng();
  std::uint64_t b = rng();
  for (std::size_t i = 10; i < 26; ++i) {
    std::uint64_t& src = i < 22 ? a : b;
    out[i] = alphabet[src & 31U];
    src >>= 5;
  }
  return out;
}

result<void> validate_id(std::string_view prefix, std::string_view text) {
  if (!text.starts_with(prefix))
    return make_error(util_errc::malformed_id, "id must start with '" + std::string(prefix) + "'");
  const auto body = text.substr(prefix.size());
  if (body.empty() || body.size() > 64)
    return make_error(util_errc::malformed_id, "id body must be 1 to 64 characters");
  for (const char c : body) {
    const bool ok = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == '-';
    if (!ok) return make_error(util_errc::malformed_id, "id may contain only letters, digits, '_' and '-'");
  }
  return ok();
}

}  // namespace detail

std::string random_hex(std::size_t bytes) {
  static constexpr char digits[] = "0123456789abcdef";
  std::random_device rd;
  std::string out;
  out.reserve(2 * bytes);
  for (std::size_t i = 0; i < bytes; ++i) {
    const auto b = rd() & 0xFFU;
    out += digits[b >> 4U];
    out += digits[b & 0xFU];
  }
  return out;
}

namespace {
class util_category_impl final : public std::error_category {
 public:
  const char* name() const noexcept override { return "util"; }
  std::string message(int c) const override {
    switch (static_cast<util_errc>(c)) {
      case util_errc::invalid_argument: return "invalid argument";
      case util_errc::malformed_id: return "malformed id";
      case util_errc::invalid_utf8: return "invalid UTF-8";
      case util_errc::too_large: return "too large";
      case util_errc::malformed_json: return "malformed JSON";
      case util_errc::not_found: return "not found";
    }
    return "unknown util error";
  }
};
}  // namespace

const std::error_category& util_category() {
  static const util_category_impl c;
  return c;
}

std::string error::describe() const {
  std::string out = code.category().name();
  out += ": ";
  out += message.empty() ? code.message() : message;
  return out;
}

time_ms system_clock::now() const {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

const clock& real_clock() {
  static const system_clock c;
  return c;
}

std::size_t utf8_sequence(std::string_view s, std::size_t i, char32_t* cp_out) {
  const auto c = static_cast<unsigned char>(s[i]);
  if (c < 0x80) {
    if (cp_out != nullptr) *cp_out = c;
    return 1;
  }
  std::size_t len = 0;
  std::uint32_t cp = 0;
  if ((c & 0xE0) == 0xC0) { len = 2; cp = c & 0x1FU; }
  else if ((c & 0xF0) == 0xE0) { len = 3; cp = c & 0x0FU; }
  else if ((c & 0xF8) == 0xF0) { len = 4; cp = c & 0x07U; }
  else return 0;
  if (i + len > s.size()) return 0;
  for (std::size_t k = 1; k < len; ++k) {
    const auto cc = static_cast<unsigned char>(s[i + k]);
    if ((cc & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (cc & 0x3FU);
  }
  if ((len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000)) return 0;
  if (cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
  if (cp_out != nullptr) *cp_out = static_cast<char32_t>(cp);
  return len;
}

bool is_valid_utf8(std::string_view s) {
  for (std::size_t i = 0; i < s.size();) {
    const std::size_t len = utf8_sequence(s, i);
    if (len == 0) return false;
    i += len;
  }
  return true;
}

result<void> check_text(std::string_view what, std::string_view s, std::size_t max_bytes) {
  if (s.size() > max_bytes)
    return make_error(util_errc::too_large, std::string(what) + " is " + std::to_string(s.size()) +
                                                " bytes; the limit is " + std::to_string(max_bytes));
  if (!is_valid_utf8(s)) return make_error(util_errc::invalid_utf8, std::string(what) + " is not valid UTF-8");
  return ok();
}

std::string last_line(std::string_view text) {
  const auto end = text.find_last_not_of(" \t\r\n");
  if (end == std::string_view::npos) return "(no output)";
  const auto newline = text.rfind('\n', end);
  const auto start = newline == std::string_view::npos ? 0 : newline + 1;
  return std::string(text.substr(start, end - start + 1));
}

}  // namespace tether
