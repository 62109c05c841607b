// URLs and proxy selection for the HTTP client.
//
// Which proxy a request uses (curl's rules, which most tools follow):
//   - https:// targets use HTTPS_PROXY (or https_proxy), http:// targets use
//     HTTP_PROXY (or http_proxy); the lower-case variable wins when both are
//     set. provider_options.http_proxy / https_proxy / no_proxy, when set
//     (even to ""), replace the environment.
//   - A proxy URL is "http://[user:pass@]host[:port]" (port 1080 by default,
//     as curl) or "host[:port]"; other proxy schemes are refused.
//   - NO_PROXY (or no_proxy) is a comma- or space-separated list:
//       "*"             no request is proxied
//       "example.com"   that host and every subdomain (api.example.com)
//       ".example.com"  the same (curl ignores the leading dot)
//       "example.com:8443"  that host (and subdomains) on that port only
//       "10.1.2.3", "[::1]"  that literal address
//     Matching ignores case. Loopback targets are NOT exempt by themselves:
//     as in curl, NO_PROXY alone decides (add "localhost,127.0.0.1,::1" to
//     keep local servers off the proxy).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "util/result.h"

namespace tether::http {

struct http_url {
  std::string scheme;  // "http" | "https"
  std::string host;    // without IPv6 brackets
  std::uint16_t port = 0;
  std::string target;    // origin-form: path + query, at least "/"
  std::string userinfo;  // "user:pass" (decoded), proxies only

  [[nodiscard]] bool tls() const { return scheme == "https"; }
  // "host" or "host:port" when the port is not the scheme's default; IPv6 in brackets.
  [[nodiscard]] std::string authority() const;
  // "host:port" always (CONNECT's target).
  [[nodiscard]] std::string host_port() const;
};

// Parses an absolute http:// or https:// URL. util_errc::invalid_argument otherwise.
result<http_url> parse_http_url(std::string_view text);

struct proxy_config {
  std::optional<std::string> http_proxy;  // nullopt: from the environment
  std::optional<std::string> https_proxy;
  std::optional<std::string> no_proxy;
};

// True when `no_proxy` says a request to host:port goes direct.
bool no_proxy_matches(std::string_view no_proxy, std::string_view host, std::uint16_t port);

// The proxy for `target`, or nullopt for a direct connection. A malformed
// proxy setting is util_errc::invalid_argument (never silently direct).
result<std::optional<http_url>> select_proxy(const http_url& target, const proxy_config& config);

}  // namespace tether::http
