#include "api/guard.h"

#include <algorithm>
#include <cmath>

#include <boost/asio/ip/address.hpp>

namespace tether::api {

namespace {

bool iequal(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
         });
}

// The name or address of a Host header, without its port.
std::string_view host_part(std::string_view host) {
  if (host.starts_with('[')) {
    const auto close = host.find(']');
    return close == std::string_view::npos ? host : host.substr(0, close + 1);
  }
  const auto colon = host.rfind(':');
  return colon == std::string_view::npos ? host : host.substr(0, colon);
}

}  // namespace

bool host_allowed(std::string_view host, const std::vector<std::string>& allowed) {
  if (host.empty()) return true;
  auto name = host_part(host);
  if (name.ends_with('.')) name.remove_suffix(1);  // "localhost." is localhost
  if (name.starts_with('[') && name.ends_with(']')) {
    boost::system::error_code ec;
    boost::asio::ip::make_address_v6(std::string(name.substr(1, name.size() - 2)), ec);
    return !ec;
  }
  boost::system::error_code ec;
  boost::asio::ip::make_address_v4(std::string(name), ec);
  if (!ec) return true;
  if (iequal(name, "localhost")) return true;
  return std::any_of(allowed.begin(), allowed.end(), [&](const std::string& a) { return iequal(name, a); });
}

void credential_throttle::refill(bucket& b, clock::time_point now) const {
  const double elapsed = std::chrono::duration<double>(now - b.at).count();
  if (elapsed > 0) b.tokens = std::min(o_.burst, b.tokens + elapsed * o_.per_second);
  b.at = now;
}

int credential_throttle::wait_s(const std::string& peer, clock::time_point now) {
  const std::lock_guard lock(mu_);
  const auto it = buckets_.find(peer);
  if (it == buckets_.end()) return 0;
  refill(it->second, now);
  if (it->second.tokens >= 1) return 0;
  return std::max(1, static_cast<int>(std::ceil((1 - it->second.tokens) / o_.per_second)));
}

void credential_throttle::failed(const std::string& peer, clock::time_point now) {
  const std::lock_guard lock(mu_);
  auto it = buckets_.find(peer);
  if (it == buckets_.end()) {
    if (buckets_.size() >= o_.max_addresses && !order_.empty()) {
      buckets_.erase(order_.front());
      order_.pop_front();
    }
    order_.push_back(peer);
    it = buckets_.emplace(peer, bucket{o_.burst, now, std::prev(order_.end())}).first;
  } else {
    order_.splice(order_.end(), order_, it->second.order);
  }
  refill(it->second, now);
  it->second.tokens = std::max(0.0, it->second.tokens - 1);
}

}  // namespace tether::api
