#include "api/handler.h"

#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include <boost/json.hpp>

#include "api/errors.h"
#include "session/errors.h"
#include "store/errors.h"
#include "util/text.h"

namespace tether::api {

namespace json = boost::json;
template <class T>
using task = boost::asio::awaitable<T>;

namespace {

constexpr std::size_t list_limit = 100;

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

// ---- request bodies ----

result<json::object> parse_object(const std::string& body) {
  if (!is_valid_utf8(body)) return make_error(util_errc::invalid_utf8, "the request body is not valid UTF-8");
  boost::system::error_code ec;
  json::value v = json::parse(body, ec);
  if (ec) return make_error(util_errc::malformed_json, "the request body is not valid JSON: " + ec.message());
  if (!v.is_object()) return make_error(util_errc::malformed_json, "the request body must be a JSON object");
  return std::move(v.as_object());
}

result<std::optional<std::string>> string_field(const json::object& o, std::string_view name) {
  const auto* v = o.if_contains(name);
  if (v == nullptr || v->is_null()) return std::optional<std::string>{};
  if (!v->is_string()) return make_error(api_errc::bad_request, "field '" + std::string(name) + "' must be a string");
  return std::optional<std::string>{std::string(v->as_string())};
}

result<std::optional<bool>> bool_field(const json::object& o, std::string_view name) {
  const auto* v = o.if_contains(name);
  if (v == nullptr || v->is_null()) return std::optional<bool>{};
  if (!v->is_bool()) return make_error(api_errc::bad_request, "field '" + std::string(name) + "' must be a boolean");
  return std::optional<bool>{v->as_bool()};
}

result<session::create_request> parse_create(const std::string& body) {
  auto o = parse_object(body);
  if (!o) return o.error();
  session::create_request req;
  auto id = string_field(*o, "id");
  if (!id) return id.error();
  req.id = *id;
  for (auto [name, out] :
       {std::pair{"title", &req.title}, std::pair{"workspace", &req.workspace}, std::pair{"profile", &req.profile}}) {
    auto f = string_field(*o, name);
    if (!f) return f.error();
    *out = f->value_or("");
  }
  return req;
}

result<session::input_request> parse_input(const std::string& body) {
  auto o = parse_object(body);
  if (!o) return o.error();
  session::input_request req;
  auto id = string_field(*o, "id");
  if (!id) return id.error();
  req.id = *id;
  auto text = string_field(*o, "text");
  if (!text) return text.error();
  if (!*text) return make_error(api_errc::bad_request, "field 'text' is required");
  req.prompt = std::move(**text);
  auto delivery = string_field(*o, "delivery");
  if (!delivery) return delivery.error();
  if (*delivery) {
    auto d = model::parse_delivery(**delivery);
    if (!d) return make_error(api_errc::bad_request, "field 'delivery' must be \"steer\" or \"queue\"");
    req.delivery = *d;
  }
  auto resume = bool_field(*o, "resume");
  if (!resume) return resume.error();
  req.start = resume->value_or(true) ? session::start_mode::resume : session::start_mode::record_only;
  return req;
}

// ---- replies ----

json::object input_json(const store::input_row& in) {
  json::object o;
  o["id"] = in.id.str();
  o["session"] = in.session.str();
  o["status"] = std::string(store::to_string(in.status));
  o["delivery"] = std::string(model::to_string(in.delivery));
  o["text"] = in.prompt;
  o["admitted_seq"] = in.admitted_seq.value;
  if (in.execution) o["execution"] = in.execution->str();
  return o;
}

task<result<json::object>> session_json(const handler_context* ctx, store::session_row row) {
  auto pending = co_await ctx->store->pending_inputs(row.id);
  if (!pending) co_return pending.error();
  std::string_view status = "idle";
  if (row.open_execution) {
    status = "running";
  } else {
    auto waiting = co_await ctx->store->pending_interactions(row.id);
    if (!waiting) co_return waiting.error();
    if (!waiting->empty()) status = "waiting";
  }
  json::object o;
  o["id"] = row.id.str();
  o["title"] = row.title;
  o["workspace"] = row.workspace;
  o["profile"] = row.profile;
  o["status"] = std::string(status);
  o["generation"] = row.generation;
  o["last_seq"] = row.last_seq.value;
  o["pending_inputs"] = pending->size();
  co_return o;
}

task<http_reply> session_reply(const handler_context* ctx, unsigned status, store::session_row row) {
  auto s = co_await session_json(ctx, std::move(row));
  if (!s) co_return error_reply(s.error());
  json::object out;
  out["session"] = std::move(s.value());
  co_return json_reply(status, out);
}

// ---- routes ----

task<http_reply> create_session(const handler_context* ctx, std::string body) {
  auto req = parse_create(body);
  if (!req) co_return error_reply(req.error());
  session::create_request wanted = *req;
  auto created = co_await ctx->service->create_session(std::move(req.value()));
  if (created) co_return co_await session_reply(ctx, 201, std::move(created.value()));
  if (created.error() != store::store_errc::session_exists || !wanted.id) co_return error_reply(created.error());
  // A retry of a create: the same attributes return the session, others conflict.
  auto id = session_id::trusted(*wanted.id);
  auto existing = co_await ctx->store->get_session(id);
  if (!existing) co_return error_reply(existing.error());
  if (existing->title != wanted.title || existing->workspace != wanted.workspace ||
      existing->profile != wanted.profile) {
    auto conflict = make_error(api_errc::conflict, "session " + *wanted.id + " exists with other attributes");
    co_return error_reply(conflict);
  }
  co_return co_await session_reply(ctx, 200, std::move(existing.value()));
}

task<http_reply> list_sessions(const handler_context* ctx) {
  auto rows = co_await ctx->store->list_sessions(list_limit);
  if (!rows) co_return error_reply(rows.error());
  json::array sessions;
  for (auto& row : *rows) {
    auto s = co_await session_json(ctx, std::move(row));
    if (!s) co_return error_reply(s.error());
    sessions.push_back(std::move(s.value()));
  }
  json::object out;
  out["sessions"] = std::move(sessions);
  co_return json_reply(200, out);
}

result<session_id> path_session(std::string_view text) {
  auto id = session_id::parse(text);
  if (!id) return make_error(session::session_errc::unknown_session, "no session " + std::string(text));
  return id;
}

task<http_reply> get_session(const handler_context* ctx, std::string id_text) {
  auto id = path_session(id_text);
  if (!id) co_return error_reply(id.error());
  auto row = co_await ctx->store->get_session(*id);
  if (!row) co_return error_reply(row.error());
  co_return co_await session_reply(ctx, 200, std::move(row.value()));
}

task<http_reply> admit_input(const handler_context* ctx, std::string id_text, std::string body) {
  auto id = path_session(id_text);
  if (!id) co_return error_reply(id.error());
  auto req = parse_input(body);
  if (!req) co_return error_reply(req.error());
  auto admitted = co_await ctx->service->admit(*id, std::move(req.value()));
  if (!admitted) co_return error_reply(admitted.error());
  const unsigned status = admitted->status == session::admit_status::admitted ? 202 : 200;
  json::object out;
  out["input"] = input_json(admitted->input);
  co_return json_reply(status, out);
}

http_reply method_not_allowed(std::string_view allowed) {
  return error_reply(make_error(api_errc::method_not_allowed, "use " + std::string(allowed)));
}

}  // namespace

http_reply error_reply(const error& e) {
  const auto h = to_http(e);
  json::object inner;
  inner["code"] = std::string(h.code);
  inner["message"] = e.message.empty() ? e.code.message() : e.message;
  json::object out;
  out["error"] = std::move(inner);
  return json_reply(h.status, out);
}

bool bearer_matches(std::string_view header, std::string_view token) {
  constexpr std::string_view scheme = "Bearer ";
  if (token.empty() || header.size() < scheme.size() || header.substr(0, scheme.size()) != scheme) return false;
  const std::string_view given = header.substr(scheme.size());
  // Touches every byte of the expected token whatever the input, so the time
  // taken does not reveal how much of a guess was right.
  unsigned diff = given.size() == token.size() ? 0U : 1U;
  for (std::size_t i = 0; i < token.size(); ++i) {
    const auto g = i < given.size() ? static_cast<unsigned char>(given[i]) : 0U;
    diff |= g ^ static_cast<unsigned char>(token[i]);
  }
  return diff == 0;
}

task<http_reply> handle(const handler_context* ctx, http_request req) {
  const auto parts = split_path(req.target);
  const bool get = req.method == "GET";
  const bool post = req.method == "POST";

  if (parts.size() == 2 && parts[0] == "v1" && parts[1] == "health") {
    if (!get) co_return method_not_allowed("GET");
    json::object out;
    out["status"] = "ok";
    out["node"] = ctx->service->node().name;
    out["version"] = ctx->options.version;
    co_return json_reply(200, out);
  }
  if (!bearer_matches(req.authorization, ctx->options.token))
    co_return error_reply(make_error(api_errc::unauthorized, "a valid 'Authorization: Bearer' token is required"));

  if (parts.size() == 2 && parts[0] == "v1" && parts[1] == "sessions") {
    if (post) co_return co_await create_session(ctx, std::move(req.body));
    if (get) co_return co_await list_sessions(ctx);
    co_return method_not_allowed("GET or POST");
  }
  if (parts.size() == 3 && parts[0] == "v1" && parts[1] == "sessions") {
    if (!get) co_return method_not_allowed("GET");
    co_return co_await get_session(ctx, std::string(parts[2]));
  }
  if (parts.size() == 4 && parts[0] == "v1" && parts[1] == "sessions" && parts[3] == "inputs") {
    if (!post) co_return method_not_allowed("POST");
    co_return co_await admit_input(ctx, std::string(parts[2]), std::move(req.body));
  }
  co_return error_reply(make_error(api_errc::not_found, "no route " + req.method + " " + req.target));
}

}  // namespace tether::api
