#include "api/handler.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <boost/json.hpp>

#include "api/body.h"
#include "api/errors.h"
#include "api/guard.h"
#include "api/routes.h"
#include "api/web_routes.h"
#include "util/text.h"

namespace tether::api {

namespace json = boost::json;
template <class T>
using task = boost::asio::awaitable<T>;

http_reply json_reply(unsigned status, const json::value& v) { return http_reply{status, json::serialize(v)}; }

std::vector<std::string_view> split_path(std::string_view target) {
  if (auto q = target.find('?'); q != std::string_view::npos) target = target.substr(0, q);
  std::vector<std::string_view> parts;
  while (!target.empty()) {
    if (target.front() == '/') {
      target.remove_prefix(1);
      continue;
    }
    auto slash = target.find('/');
    parts.push_back(target.substr(0, slash));
    if (slash == std::string_view::npos) break;
    target.remove_prefix(slash);
  }
  return parts;
}

// A non-negative whole number, or nothing.
std::optional<std::int64_t> whole_number(std::string_view text) {
  std::int64_t n = 0;
  const auto* end = text.data() + text.size();
  auto [p, ec] = std::from_chars(text.data(), end, n);
  if (text.empty() || ec != std::errc{} || p != end || n < 0) return std::nullopt;
  return n;
}

// The raw value of the query parameter `name`, or nothing when absent.
std::optional<std::string_view> query_value(std::string_view target, std::string_view name) {
  const auto q = target.find('?');
  if (q == std::string_view::npos) return std::nullopt;
  std::string_view rest = target.substr(q + 1);
  while (!rest.empty()) {
    const auto amp = rest.find('&');
    const std::string_view pair = rest.substr(0, amp);
    rest = amp == std::string_view::npos ? std::string_view() : rest.substr(amp + 1);
    const auto eq = pair.find('=');
    if (pair.substr(0, eq) == name) return eq == std::string_view::npos ? std::string_view() : pair.substr(eq + 1);
  }
  return std::nullopt;
}

result<std::optional<std::int64_t>> query_number(std::string_view target, std::string_view name) {
  if (const auto value = query_value(target, name)) {
    auto n = whole_number(*value);
    if (!n)
      return make_error(api_errc::bad_request, "query parameter '" + std::string(name) + "' must be a whole number");
    return std::optional<std::int64_t>{*n};
  }
  return std::optional<std::int64_t>{};
}

namespace {
// Messages quote what the client sent (a path segment, a field name), which
// need not be UTF-8; the reply is JSON text, so such bytes become U+FFFD.
std::string utf8_or_replaced(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size();) {
    const std::size_t n = utf8_sequence(s, i);
    if (n == 0) {
      out += "\xEF\xBF\xBD";
      ++i;
    } else {
      out.append(s.substr(i, n));
      i += n;
    }
  }
  return out;
}
}  // namespace

http_reply error_reply(const error& e) {
  const auto h = to_http(e);
  json::object inner;
  inner["code"] = std::string(h.code);
  inner["message"] = utf8_or_replaced(e.message.empty() ? e.code.message() : e.message);
  json::object out;
  out["error"] = std::move(inner);
  return json_reply(h.status, out);
}

bool bearer_matches(std::string_view header, std::string_view token) {
  // RFC 7235: the scheme is case-insensitive and followed by one or more spaces.
  constexpr std::string_view scheme = "bearer";
  if (token.empty() || header.size() <= scheme.size() || header[scheme.size()] != ' ') return false;
  for (std::size_t i = 0; i < scheme.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(header[i])) != scheme[i]) return false;
  std::string_view given = header.substr(scheme.size());
  while (!given.empty() && given.front() == ' ') given.remove_prefix(1);
  // Touches every byte of the expected token whatever the input, so the time
  // taken does not reveal how much of a guess was right.
  unsigned diff = given.size() == token.size() ? 0U : 1U;
  for (std::size_t i = 0; i < token.size(); ++i) {
    const auto g = i < given.size() ? static_cast<unsigned char>(given[i]) : 0U;
    diff |= g ^ static_cast<unsigned char>(token[i]);
  }
  return diff == 0;
}

// 429 while the client's address has used up its failed credentials
// (guard.h): asked of every request that carries a credential.
std::optional<http_reply> throttled(const handler_context* ctx, const http_request& req) {
  if (!ctx->throttle || !carries_credentials(req)) return std::nullopt;
  const int wait = ctx->throttle->wait_s(req.peer);
  if (wait == 0) return std::nullopt;
  auto r = error_reply(make_error(api_errc::too_many_requests,
                                  "too many wrong tokens from " + (req.peer.empty() ? "this address" : req.peer) +
                                      "; try again in " + std::to_string(wait) + " s"));
  r.headers.emplace_back("Retry-After", std::to_string(wait));
  return r;
}

task<http_reply> handle(const handler_context* ctx, http_request req) {
  if (!host_allowed(req.host, ctx->options.allowed_hosts))
    co_return error_reply(make_error(api_errc::misdirected,
                                     "this server does not answer to the host '" + req.host +
                                         "' (an IP address, localhost, or a name given to `tether serve "
                                         "--allow-host`)"));
  // A HEAD is answered as its GET (the server drops the body).
  auto match = match_route(req.method == "HEAD" ? std::string_view("GET") : std::string_view(req.method), req.target);
  // A path no route has is behind the token too: without one, nobody learns which paths exist.
  const access who = match.path_who.value_or(access::token);
  if (who != access::open) {
    if (auto wait = throttled(ctx, req)) co_return std::move(*wait);
  }
  if (who == access::token) {
    if (auto ok = authenticate(ctx, req); !ok) co_return error_reply(ok.error());
  }
  if (!match.path_who)
    co_return error_reply(make_error(api_errc::not_found, "no route " + req.method + " " + req.target));
  if (match.found == nullptr)
    co_return error_reply(make_error(api_errc::method_not_allowed, "use " + match.allowed));
  if (who != access::open) {
    if (auto media = check_media_type(req.content_type, req.body); !media) co_return error_reply(media.error());
  }
  // A named call, not a braced temporary in the co_await (g++ 12 destroys those twice).
  route_call call{ctx, std::move(req), std::move(match.params)};
  co_return co_await match.found->handle(std::move(call));
}

}  // namespace tether::api
