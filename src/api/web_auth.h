// Sign-in for the web interface: the server's token exchanged once for a
// signed, expiring cookie, and the CSRF token that goes with it.
//
//   web_auth auth(token);
//   auto s = auth.issue(now);             // Set-Cookie: tether_session=<s.cookie>; …
//   if (auto c = auth.check(cookie_header, now)) … c->csrf …
//   auth.revoke(cookie_header, now);      // sign-out
//
// A cookie is `v1.<expiry unix s>.<nonce>.<mac>`: a random 128-bit nonce and
// HMAC-SHA256 over the rest under a key derived from the token. Nothing is
// kept per cookie, so a cookie outlives a restart of the server, and a new
// token invalidates every cookie made under the old one. The CSRF token is
// another HMAC of the nonce: a page learns it from the sign-in answer or GET
// /v1/auth/session (same-origin reads only), and every request it makes
// with the cookie other than GET/HEAD must send it as X-Tether-CSRF.
//
// Sign-out revokes the cookie's nonce until the cookie would have expired.
// The list is in memory (a restart forgets it; the browser dropped the
// cookie at sign-out anyway) and bounded: at most max_revoked nonces, about
// 100 bytes each; past that the one closest to its expiry is forgotten first.
//
// Comparisons of MACs and CSRF tokens take the same time whatever the input.
// Thread-safe.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

namespace tether::api {

inline constexpr std::string_view session_cookie_name = "tether_session";
inline constexpr std::string_view csrf_header_name = "X-Tether-CSRF";

class web_auth {
 public:
  static constexpr std::int64_t default_lifetime_s = 12 * 3600;
  static constexpr std::size_t max_revoked = 10'000;

  explicit web_auth(std::string_view token, std::int64_t lifetime_s = default_lifetime_s);

  struct signed_in {
    std::string cookie;  // the cookie's value
    std::string csrf;    // 32 hex digits
    std::int64_t expires_unix = 0;
  };

  // A new cookie valid until now + lifetime.
  [[nodiscard]] signed_in issue(std::int64_t now_unix) const;
  // The sign-in the Cookie header's tether_session names, when it is well
  // formed, signed by this token, unexpired and not revoked.
  [[nodiscard]] std::optional<signed_in> check(std::string_view cookie_header, std::int64_t now_unix) const;
  // Whether `given` is the CSRF token of `s`.
  [[nodiscard]] static bool csrf_matches(const signed_in& s, std::string_view given);
  // Sign-out: the cookie is refused from now on (nothing when it is invalid).
  void revoke(std::string_view cookie_header, std::int64_t now_unix);
  [[nodiscard]] std::int64_t lifetime() const { return lifetime_; }

 private:
  [[nodiscard]] std::string mac(std::string_view what) const;

  std::string key_;
  std::int64_t lifetime_;
  mutable std::mutex mu_;
  std::map<std::string, std::int64_t, std::less<>> revoked_;  // nonce → expiry
};

// The value of cookie `name` in a Cookie header, or nullopt.
std::optional<std::string_view> cookie_value(std::string_view header, std::string_view name);
// Seconds since the epoch, now.
std::int64_t unix_now();

}  // namespace tether::api
