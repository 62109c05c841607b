#include "api/web_routes.h"

#include <ctime>
#include <fstream>
#include <string>
#include <system_error>

#include <boost/json.hpp>

#include "api/body.h"
#include "api/errors.h"
#include "api/guard.h"
#include "api/web_auth.h"
#include "web/assets.h"

namespace tether::api {

namespace json = boost::json;
template <class T>
using task = boost::asio::awaitable<T>;
namespace fs = std::filesystem;

namespace {

constexpr std::size_t max_artifact_bytes = 16U << 20U;

// The policy of a dashboard page: its own inline style and data: images,
// nothing else, framed by the interface only.
constexpr std::string_view dashboard_policy =
    "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'; "
    "frame-ancestors 'self'";
constexpr std::string_view artifact_policy = "sandbox; default-src 'none'; frame-ancestors 'self'";

std::string iso8601(std::int64_t unix_s) {
  const std::time_t t = unix_s;
  std::tm tm{};
  ::gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

bool is_read(const http_request& req) { return req.method == "GET" || req.method == "HEAD"; }

http_reply signed_in_reply(const web_auth::signed_in& s) {
  json::object o;
  o["csrf"] = s.csrf;
  o["expires_at"] = iso8601(s.expires_unix);
  auto r = json_reply(200, o);
  r.headers.emplace_back("Cache-Control", "no-store");
  return r;
}

std::string set_cookie(const handler_context* ctx, std::string_view value, std::int64_t max_age) {
  std::string c = std::string(session_cookie_name) + "=" + std::string(value) +
                  "; Path=/; HttpOnly; SameSite=Strict; Max-Age=" + std::to_string(max_age);
  if (ctx->options.tls) c += "; Secure";
  return c;
}

http_reply asset_reply(const http_request& req, std::string_view name) {
  const auto* a = web::find_asset(name);
  if (a == nullptr) return error_reply(make_error(api_errc::not_found, "no file /ui/" + std::string(name)));
  http_reply r;
  r.content_type = std::string(a->content_type);
  r.headers.emplace_back("ETag", std::string(a->etag));
  r.headers.emplace_back("Cache-Control", "no-cache");
  if (req.if_none_match.find(a->etag) != std::string::npos) {
    r.status = 304;
    return r;
  }
  r.body = std::string(a->body);
  return r;
}

http_reply login(const handler_context* ctx, const http_request& req) {
  auto o = parse_body(req.body);
  if (!o) return error_reply(o.error());
  if (auto known = only_fields(*o, login_fields); !known) return error_reply(known.error());
  auto token = string_field(*o, "token");
  if (!token) return error_reply(token.error());
  if (!*token || !bearer_matches("Bearer " + **token, ctx->options.token)) {
    if (ctx->throttle) ctx->throttle->failed(req.peer);
    return error_reply(make_error(api_errc::unauthorized, "that is not the server's token"));
  }
  if (!ctx->auth) return error_reply(make_error(api_errc::not_found, "this server has no web sign-in"));
  const auto s = ctx->auth->issue(unix_now());
  auto r = signed_in_reply(s);
  r.headers.emplace_back("Set-Cookie", set_cookie(ctx, s.cookie, ctx->auth->lifetime()));
  return r;
}

http_reply session_check(const handler_context* ctx, const http_request& req) {
  const auto s = ctx->auth ? ctx->auth->check(req.cookie, unix_now()) : std::nullopt;
  if (!s) return error_reply(make_error(api_errc::unauthorized, "not signed in"));
  return signed_in_reply(*s);
}

http_reply logout(const handler_context* ctx, const http_request& req) {
  if (ctx->auth) ctx->auth->revoke(req.cookie, unix_now());
  auto r = json_reply(200, json::object{});
  r.headers.emplace_back("Set-Cookie", set_cookie(ctx, "", 0));
  r.headers.emplace_back("Cache-Control", "no-store");
  return r;
}

http_reply profiles(const handler_context* ctx) {
  json::array list;
  for (const auto& p : ctx->options.profiles) {
    json::object o;
    o["name"] = p.name;
    o["runtime"] = p.runtime;
    o["model"] = p.model;
    o["available"] = p.problem.empty();
    o["problem"] = p.problem;
    list.push_back(std::move(o));
  }
  json::object out;
  out["profiles"] = std::move(list);
  return json_reply(200, out);
}

http_reply history(const handler_context* ctx) {
  json::object out;
  const auto& q = ctx->options.qualification;
  out["configured"] = q.has_value();
  out["history"] = nullptr;
  if (q) {
    std::ifstream in(q->dir / "history.json", std::ios::binary);
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::error_code ec;
    auto v = json::parse(text, ec);
    if (in && !ec) out["history"] = std::move(v);
  }
  return json_reply(200, out);
}

bool campaign_id_ok(std::string_view id) {
  return !id.empty() && id.size() <= 128 && id.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                                                                 "0123456789._-") == std::string_view::npos;
}

http_reply dashboard(const handler_context* ctx, std::string id) {
  const auto& q = ctx->options.qualification;
  if (!q) return error_reply(make_error(api_errc::not_found, "no results folder is configured (serve --results)"));
  if (!id.empty() && !campaign_id_ok(id))
    return error_reply(make_error(api_errc::not_found, "no campaign " + id));
  auto page = q->dashboard(id);
  if (!page) return error_reply(page.error());
  http_reply r;
  r.content_type = "text/html; charset=utf-8";
  r.body = std::move(*page);
  r.headers.emplace_back("Content-Security-Policy", std::string(dashboard_policy));
  r.headers.emplace_back("Cache-Control", "no-cache");
  return r;
}

std::optional<std::string> percent_decoded(std::string_view s) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '%') {
      out += s[i];
      continue;
    }
    if (i + 2 >= s.size()) return std::nullopt;
    auto digit = [](char c) -> int {
      if (c >= '0' && c <= '9') return c - '0';
      if (c >= 'a' && c <= 'f') return c - 'a' + 10;
      if (c >= 'A' && c <= 'F') return c - 'A' + 10;
      return -1;
    };
    const int hi = digit(s[i + 1]);
    const int lo = digit(s[i + 2]);
    if (hi < 0 || lo < 0) return std::nullopt;
    out += static_cast<char>(hi * 16 + lo);
    i += 2;
  }
  return out;
}

http_reply artifact(const handler_context* ctx, const std::vector<std::string>& segments) {
  const auto& q = ctx->options.qualification;
  auto refused = [&] {
    return error_reply(make_error(api_errc::not_found, "no such artifact"));
  };
  if (!q) return error_reply(make_error(api_errc::not_found, "no results folder is configured (serve --results)"));
  fs::path rel;
  for (const auto& raw : segments) {
    auto seg = percent_decoded(raw);
    if (!seg || seg->empty() || *seg == "." || *seg == ".." ||
        seg->find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._@+-") !=
            std::string::npos)
      return refused();
    rel /= *seg;
  }
  std::error_code ec;
  const auto root = fs::canonical(q->dir / "campaigns", ec);
  if (ec) return refused();
  const auto file = fs::canonical(root / rel, ec);
  if (ec) return refused();
  const auto inside = file.lexically_relative(root);
  if (inside.empty() || *inside.begin() == ".." || !fs::is_regular_file(file, ec)) return refused();
  const auto size = fs::file_size(file, ec);
  if (ec || size > max_artifact_bytes)
    return error_reply(make_error(api_errc::too_large, "the artifact is over 16 MiB; read it on the server"));
  std::ifstream in(file, std::ios::binary);
  http_reply r;
  r.body.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  r.content_type = file.extension() == ".json" ? "application/json" : "text/plain; charset=utf-8";
  r.headers.emplace_back("Content-Security-Policy", std::string(artifact_policy));
  return r;
}

// A redirect to /ui/ that keeps the target's query. Its body is text like
// every reply that is not JSON, so no client reads an empty body as JSON.
http_reply to_the_interface(unsigned status, std::string_view target) {
  const auto query = target.find('?');
  std::string location = "/ui/";
  if (query != std::string_view::npos) location += target.substr(query);
  http_reply r;
  r.status = status;
  r.content_type = "text/plain; charset=utf-8";
  r.body = "the interface is at /ui/\n";
  r.headers.emplace_back("Location", std::move(location));
  return r;
}

}  // namespace

bool carries_credentials(const http_request& req) {
  if (!req.authorization.empty()) return true;
  if (cookie_value(req.cookie, session_cookie_name)) return true;
  const auto parts = split_path(req.target);
  return parts.size() == 3 && parts[0] == "v1" && parts[1] == "auth" && parts[2] == "login";
}

result<void> authenticate(const handler_context* ctx, const http_request& req) {
  if (bearer_matches(req.authorization, ctx->options.token)) return {};
  const auto s = ctx->auth ? ctx->auth->check(req.cookie, unix_now()) : std::nullopt;
  if (!s) {
    if (ctx->throttle && carries_credentials(req)) ctx->throttle->failed(req.peer);
    return make_error(api_errc::unauthorized,
                      "a valid 'Authorization: Bearer' token is required (or sign in at /ui/)");
  }
  if (!is_read(req) && !web_auth::csrf_matches(*s, req.csrf))
    return make_error(api_errc::forbidden,
                      "a request signed in by cookie must carry the " + std::string(csrf_header_name) + " header");
  return {};
}

namespace web_routes {

using reply = task<http_reply>;

reply root(route_call c) { co_return to_the_interface(302, c.req.target); }

reply interface(route_call c) {
  // Relative links in the page need the slash.
  if (!c.req.target.starts_with("/ui/")) co_return to_the_interface(301, c.req.target);
  co_return asset_reply(c.req, "");
}

reply file(route_call c) {
  // The files are one level deep: a longer path (../token too) is no file, and needs no token to be told so.
  if (c.params.size() != 1) co_return error_reply(make_error(api_errc::not_found, "no file " + c.req.target));
  co_return asset_reply(c.req, c.params.front());
}
reply login(route_call c) { co_return api::login(c.ctx, c.req); }
reply signed_in(route_call c) { co_return session_check(c.ctx, c.req); }
reply logout(route_call c) { co_return api::logout(c.ctx, c.req); }
reply profiles(route_call c) { co_return api::profiles(c.ctx); }
reply qualification(route_call c) { co_return history(c.ctx); }

reply dashboard(route_call c) {
  co_return api::dashboard(c.ctx, std::string(query_value(c.req.target, "campaign").value_or("")));
}

reply campaign_page(route_call c) { co_return api::dashboard(c.ctx, std::move(c.params.at(0))); }
reply artifact(route_call c) { co_return api::artifact(c.ctx, c.params); }

}  // namespace web_routes

}  // namespace tether::api
