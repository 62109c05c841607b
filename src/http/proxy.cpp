#include "http/proxy.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdlib>

#include <boost/url/parse.hpp>
#include <boost/url/url_view.hpp>

namespace tether::http {

namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return std::tolower(c); });
  return out;
}

std::uint16_t default_port(std::string_view scheme) { return scheme == "https" ? 443 : 80; }

bool is_ipv6(std::string_view host) { return host.find(':') != std::string_view::npos; }

std::string env_first(const char* a, const char* b) {
  if (const char* v = std::getenv(a); v != nullptr) return v;
  if (const char* v = std::getenv(b); v != nullptr) return v;
  return {};
}

// One NO_PROXY entry against a lower-cased host.
bool entry_matches(std::string_view entry, std::string_view host, std::uint16_t port) {
  if (entry == "*") return true;
  std::optional<std::uint16_t> want_port;
  // "[v6]:port", "[v6]", "host:port", "host", bare IPv6 (several colons)
  if (entry.starts_with('[')) {
    const auto close = entry.find(']');
    if (close == std::string_view::npos) return false;
    std::string_view rest = entry.substr(close + 1);
    entry = entry.substr(1, close - 1);
    if (rest.starts_with(':')) {
      std::uint16_t p = 0;
      rest.remove_prefix(1);
      if (std::from_chars(rest.data(), rest.data() + rest.size(), p).ec != std::errc{}) return false;
      want_port = p;
    }
  } else if (std::count(entry.begin(), entry.end(), ':') == 1) {
    const auto colon = entry.find(':');
    std::string_view p_text = entry.substr(colon + 1);
    std::uint16_t p = 0;
    if (std::from_chars(p_text.data(), p_text.data() + p_text.size(), p).ec != std::errc{}) return false;
    want_port = p;
    entry = entry.substr(0, colon);
  }
  if (want_port && *want_port != port) return false;
  while (entry.starts_with('.')) entry.remove_prefix(1);
  if (entry.empty()) return false;
  if (host == entry) return true;
  // A subdomain: "api.example.com" under "example.com".
  return host.size() > entry.size() && host.ends_with(entry) && host[host.size() - entry.size() - 1] == '.';
}

result<http_url> parse_proxy_url(std::string_view text) {
  std::string with_scheme(text);
  if (with_scheme.find("://") == std::string::npos) with_scheme = "http://" + with_scheme;
  auto u = boost::urls::parse_uri(with_scheme);
  if (!u) return make_error(util_errc::invalid_argument, "proxy URL is not a URL: " + std::string(text));
  const std::string scheme = lower(u->scheme());
  if (scheme != "http")
    return make_error(util_errc::invalid_argument,
                      "unsupported proxy scheme \"" + scheme + "\" (only http:// proxies)");
  http_url out;
  out.scheme = scheme;
  out.host = lower(u->host_address());
  if (out.host.empty()) return make_error(util_errc::invalid_argument, "proxy URL has no host");
  out.port = u->has_port() ? u->port_number() : 1080;
  if (out.port == 0) return make_error(util_errc::invalid_argument, "proxy URL has a bad port");
  out.target = "/";
  if (u->has_userinfo()) out.userinfo = u->userinfo();
  return out;
}

}  // namespace

std::string http_url::authority() const {
  std::string h = is_ipv6(host) ? "[" + host + "]" : host;
  if (port != default_port(scheme)) h += ":" + std::to_string(port);
  return h;
}

std::string http_url::host_port() const {
  return (is_ipv6(host) ? "[" + host + "]" : host) + ":" + std::to_string(port);
}

result<http_url> parse_http_url(std::string_view text) {
  auto u = boost::urls::parse_uri(text);
  if (!u) return make_error(util_errc::invalid_argument, "not a URL: " + std::string(text));
  http_url out;
  out.scheme = lower(u->scheme());
  if (out.scheme != "http" && out.scheme != "https")
    return make_error(util_errc::invalid_argument, "not an http(s) URL: " + std::string(text));
  out.host = lower(u->host_address());
  if (out.host.empty()) return make_error(util_errc::invalid_argument, "URL has no host: " + std::string(text));
  out.port = u->has_port() ? u->port_number() : default_port(out.scheme);
  if (out.port == 0) return make_error(util_errc::invalid_argument, "URL has a bad port: " + std::string(text));
  out.target = std::string(u->encoded_path());
  if (out.target.empty()) out.target = "/";
  if (u->has_query()) out.target += "?" + std::string(u->encoded_query());
  return out;
}

bool no_proxy_matches(std::string_view no_proxy, std::string_view host, std::uint16_t port) {
  const std::string h = lower(host);
  const std::string list = lower(no_proxy);
  std::size_t i = 0;
  while (i < list.size()) {
    const auto end = list.find_first_of(", \t", i);
    const std::string_view entry = std::string_view(list).substr(i, end == std::string::npos ? end : end - i);
    if (!entry.empty() && entry_matches(entry, h, port)) return true;
    if (end == std::string::npos) break;
    i = end + 1;
  }
  return false;
}

result<std::optional<http_url>> select_proxy(const http_url& target, const proxy_config& config) {
  const std::string no_proxy = config.no_proxy ? *config.no_proxy : env_first("no_proxy", "NO_PROXY");
  if (no_proxy_matches(no_proxy, target.host, target.port)) return std::optional<http_url>{};
  std::string proxy;
  if (target.tls())
    proxy = config.https_proxy ? *config.https_proxy : env_first("https_proxy", "HTTPS_PROXY");
  else
    proxy = config.http_proxy ? *config.http_proxy : env_first("http_proxy", "HTTP_PROXY");
  if (proxy.empty()) return std::optional<http_url>{};
  auto p = parse_proxy_url(proxy);
  if (!p) return p.error();
  return std::optional<http_url>(std::move(*p));
}

}  // namespace tether::http
