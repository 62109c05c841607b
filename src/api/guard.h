// The API's guards against clients that have no token: which Host names it
// answers to, and how fast one address may try credentials.
//
// Host (DNS rebinding): a page on an attacker's domain that resolves to
// 127.0.0.1 reaches a loopback server with `Host: evil.example`. Such a
// request is refused (421) before any route, health and sign-in included.
// Allowed: no Host at all (HTTP/1.0 tools), any IP literal (IPv4, or IPv6 in
// brackets: rebinding needs a name), `localhost`, and the names the server
// was told to answer to (`tether serve --allow-host NAME`); any port; names
// compare without case.
//
// Credentials (brute force): each address has a bucket of `burst` tries,
// refilled at `per_second`; every failed credential (a wrong bearer token, a
// wrong sign-in token, an invalid sign-in cookie) takes one, and while the
// bucket is empty every credential from that address, right or wrong, is
// answered 429 with Retry-After before it is checked. At most `max_addresses`
// addresses are remembered (the least recently failed one is forgotten
// first). Thread-safe.
#pragma once

#include <chrono>
#include <cstddef>
#include <list>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace tether::api {

// Whether a request with this Host header may be answered.
bool host_allowed(std::string_view host, const std::vector<std::string>& allowed);

class credential_throttle {
 public:
  struct options {
    double burst = 20;
    double per_second = 2;
    std::size_t max_addresses = 10'000;
  };
  using clock = std::chrono::steady_clock;

  credential_throttle() : credential_throttle(options{}) {}
  explicit credential_throttle(options o) : o_(o) {}

  // 0: `peer` may try now; else the seconds until it may.
  [[nodiscard]] int wait_s(const std::string& peer, clock::time_point now = clock::now());
  // `peer` presented a wrong credential.
  void failed(const std::string& peer, clock::time_point now = clock::now());

 private:
  struct bucket {
    double tokens = 0;
    clock::time_point at;
    std::list<std::string>::iterator order;
  };
  void refill(bucket& b, clock::time_point now) const;

  options o_;
  std::mutex mu_;
  std::unordered_map<std::string, bucket> buckets_;
  std::list<std::string> order_;  // least recently failed first
};

}  // namespace tether::api
