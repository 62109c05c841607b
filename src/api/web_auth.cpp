#include "api/web_auth.h"

#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <algorithm>
#include <array>
#include <charconv>

#include "util/random.h"

namespace tether::api {

namespace {

constexpr std::string_view version_tag = "v1";

std::string hex(const unsigned char* p, std::size_t n) {
  static constexpr char digits[] = "0123456789abcdef";
  std::string out;
  out.reserve(n * 2);
  for (std::size_t i = 0; i < n; ++i) {
    out += digits[p[i] >> 4U];
    out += digits[p[i] & 0xFU];
  }
  return out;
}

std::string hmac_hex(std::string_view key, std::string_view data) {
  std::array<unsigned char, EVP_MAX_MD_SIZE> out{};
  unsigned int len = 0;
  ::HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()), reinterpret_cast<const unsigned char*>(data.data()),
         data.size(), out.data(), &len);
  return hex(out.data(), len);
}

// Same time for any two strings of the expected length.
bool same(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  unsigned diff = 0;
  for (std::size_t i = 0; i < a.size(); ++i) diff |= static_cast<unsigned char>(a[i]) ^ static_cast<unsigned char>(b[i]);
  return diff == 0;
}

bool is_hex(std::string_view s, std::size_t n) {
  return s.size() == n && std::all_of(s.begin(), s.end(), [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
         });
}

struct parsed_cookie {
  std::int64_t expiry = 0;
  std::string_view nonce;
  std::string_view signed_part;  // "v1.<expiry>.<nonce>"
  std::string_view mac;
};

std::optional<parsed_cookie> parse(std::string_view v) {
  // v1.<expiry>.<nonce 32 hex>.<mac 64 hex>
  const auto last = v.rfind('.');
  if (last == std::string_view::npos) return std::nullopt;
  parsed_cookie p;
  p.signed_part = v.substr(0, last);
  p.mac = v.substr(last + 1);
  const auto first = p.signed_part.find('.');
  const auto second = p.signed_part.rfind('.');
  if (first == std::string_view::npos || second == first || p.signed_part.substr(0, first) != version_tag)
    return std::nullopt;
  const auto expiry = p.signed_part.substr(first + 1, second - first - 1);
  p.nonce = p.signed_part.substr(second + 1);
  const auto [end, ec] = std::from_chars(expiry.data(), expiry.data() + expiry.size(), p.expiry);
  if (ec != std::errc{} || end != expiry.data() + expiry.size() || !is_hex(p.nonce, 32) || !is_hex(p.mac, 64))
    return std::nullopt;
  return p;
}

}  // namespace

std::int64_t unix_now() {
  return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::optional<std::string_view> cookie_value(std::string_view header, std::string_view name) {
  // "a=1; b=2" (RFC 6265 §5.4); the first cookie of that name wins.
  while (!header.empty()) {
    const auto semi = header.find(';');
    std::string_view pair = header.substr(0, semi);
    header = semi == std::string_view::npos ? std::string_view() : header.substr(semi + 1);
    while (!pair.empty() && pair.front() == ' ') pair.remove_prefix(1);
    const auto eq = pair.find('=');
    if (eq != std::string_view::npos && pair.substr(0, eq) == name) return pair.substr(eq + 1);
  }
  return std::nullopt;
}

web_auth::web_auth(std::string_view token, std::int64_t lifetime_s)
    : key_(token.empty() ? std::string() : hmac_hex(token, "tether web sign-in v1")), lifetime_(lifetime_s) {}

std::string web_auth::mac(std::string_view what) const { return hmac_hex(key_, what); }

web_auth::signed_in web_auth::issue(std::int64_t now_unix) const {
  signed_in s;
  s.expires_unix = now_unix + lifetime_;
  const std::string nonce = random_hex(16);
  const std::string body = std::string(version_tag) + "." + std::to_string(s.expires_unix) + "." + nonce;
  s.cookie = body + "." + mac(body);
  s.csrf = mac("csrf." + nonce).substr(0, 32);
  return s;
}

std::optional<web_auth::signed_in> web_auth::check(std::string_view cookie_header, std::int64_t now_unix) const {
  if (key_.empty()) return std::nullopt;  // no token: nobody signs in
  const auto value = cookie_value(cookie_header, session_cookie_name);
  if (!value) return std::nullopt;
  const auto p = parse(*value);
  if (!p || !same(mac(p->signed_part), p->mac) || p->expiry <= now_unix) return std::nullopt;
  {
    std::lock_guard lock(mu_);
    if (revoked_.contains(p->nonce)) return std::nullopt;
  }
  signed_in s;
  s.cookie = std::string(*value);
  s.csrf = mac("csrf." + std::string(p->nonce)).substr(0, 32);
  s.expires_unix = p->expiry;
  return s;
}

bool web_auth::csrf_matches(const signed_in& s, std::string_view given) { return same(s.csrf, given); }

void web_auth::revoke(std::string_view cookie_header, std::int64_t now_unix) {
  if (!check(cookie_header, now_unix)) return;
  const auto p = parse(*cookie_value(cookie_header, session_cookie_name));
  std::lock_guard lock(mu_);
  std::erase_if(revoked_, [now_unix](const auto& kv) { return kv.second <= now_unix; });
  while (revoked_.size() >= max_revoked) {
    auto soonest = std::min_element(revoked_.begin(), revoked_.end(),
                                    [](const auto& a, const auto& b) { return a.second < b.second; });
    revoked_.erase(soonest);
  }
  revoked_.emplace(std::string(p->nonce), p->expiry);
}

}  // namespace tether::api
