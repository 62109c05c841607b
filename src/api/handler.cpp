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
#include "api/openapi.h"
#include "api/views.h"
#include "api/web_routes.h"
#include "api/work_routes.h"
#include "api/workspace.h"
#include "session/errors.h"
#include "store/errors.h"
#include "util/metrics.h"
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

constexpr std::size_t list_limit = 100;



// ---- request bodies ----

result<session::create_request> parse_create(const std::string& body) {
  auto o = parse_body(body);
  if (!o) return o.error();
  if (auto known = only_fields(*o, create_session_fields); !known) return known.error();
  session::create_request req;
  auto id = string_field(*o, "id");
  if (!id) return id.error();
  req.id = *id;
  if (const auto* m = o->if_contains("metadata"); m != nullptr && !m->is_null()) {
    if (!m->is_object()) return make_error(api_errc::bad_request, "field 'metadata' must be an object");
    req.metadata = m->as_object();
  }
  for (auto [name, out] :
       {std::pair{"title", &req.title}, std::pair{"workspace", &req.workspace}, std::pair{"profile", &req.profile}}) {
    auto f = string_field(*o, name);
    if (!f) return f.error();
    *out = f->value_or("");
  }
  return req;
}

// ---- routes ----

http_reply session_reply(const handler_context* ctx, unsigned status, const session::session_summary& s) {
  json::object out;
  out["session"] = session_view(s, ctx->options.data_dir);
  return json_reply(status, out);
}

task<http_reply> create_session(const handler_context* ctx, std::string body) {
  auto req = parse_create(body);
  if (!req) co_return error_reply(req.error());
  if (ctx->options.profile_problem) {
    if (auto problem = ctx->options.profile_problem(req->profile); !problem.empty())
      co_return error_reply(make_error(api_errc::bad_request, "field 'profile': " + problem));
  }
  if (!req->workspace.empty()) {
    auto resolved = resolve_workspace(req->workspace, ctx->options.workspace_roots, ctx->options.data_dir);
    if (!resolved) co_return error_reply(resolved.error());
    req->workspace = std::move(resolved.value());
  }
  auto created = co_await ctx->service->create(std::move(req.value()));
  if (!created) co_return error_reply(created.error());
  co_return session_reply(ctx, created->status == session::create_status::created ? 201 : 200, created->session);
}

result<session_id> path_session(std::string_view text) {
  auto id = session_id::parse(text);
  if (!id) return make_error(session::session_errc::unknown_session, "no session " + std::string(text));
  return id;
}

task<http_reply> get_session(const handler_context* ctx, session_id id) {
  auto s = co_await ctx->service->describe(std::move(id));
  if (!s) co_return error_reply(s.error());
  co_return session_reply(ctx, 200, *s);
}

task<http_reply> admit_input(const handler_context* ctx, session_id id, std::string body) {
  auto req = parse_input(body);
  if (!req) co_return error_reply(req.error());
  auto admitted = co_await ctx->service->admit(id, std::move(req.value()));
  if (!admitted) co_return error_reply(admitted.error());
  const unsigned status = admitted->status == session::admit_status::admitted ? 202 : 200;
  json::object out;
  out["input"] = input_view(admitted->input);
  co_return json_reply(status, out);
}

task<http_reply> list_inputs(const handler_context* ctx, session_id id) {
  auto rows = co_await ctx->store->list_inputs(id);
  if (!rows) co_return error_reply(rows.error());
  json::array inputs;
  for (const auto& r : *rows) inputs.push_back(input_view(r));
  json::object out;
  out["inputs"] = std::move(inputs);
  co_return json_reply(200, out);
}

task<http_reply> cancel_input(const handler_context* ctx, session_id id, std::string input_text) {
  auto input = input_id::parse(input_text);
  if (!input) co_return error_reply(make_error(session::session_errc::unknown_input, "no input " + input_text));
  auto cancelled = co_await ctx->service->cancel_input(id, *input);
  if (!cancelled) co_return error_reply(cancelled.error());
  json::object out;
  out["input"] = input_view(*cancelled);
  co_return json_reply(200, out);
}

task<http_reply> interrupt(const handler_context* ctx, session_id id) {
  auto ack = co_await ctx->service->interrupt(id);
  if (!ack) co_return error_reply(ack.error());
  json::object out;
  out["interrupted"] = ack->was_active;
  co_return json_reply(200, out);
}

task<http_reply> reset(const handler_context* ctx, session_id id) {
  auto done = co_await ctx->service->reset(id);
  if (!done) co_return error_reply(done.error());
  auto row = co_await ctx->store->get_session(id);
  if (!row) co_return error_reply(row.error());
  json::object out;
  out["generation"] = row->generation;
  co_return json_reply(200, out);
}

task<http_reply> resume(const handler_context* ctx, session_id id) {
  auto woken = co_await ctx->service->resume_if_work(std::move(id));
  if (!woken) co_return error_reply(woken.error());
  json::object out;
  out["started"] = *woken == session::wake_status::woken;
  co_return json_reply(200, out);
}

task<http_reply> messages(const handler_context* ctx, session_id id) {
  auto rows = co_await ctx->store->transcript(id);
  if (!rows) co_return error_reply(rows.error());
  json::object out;
  out["messages"] = messages_view(*rows);
  co_return json_reply(200, out);
}

// GET /v1/sessions[?prefix=P][&limit=N]: the most recently active first;
// with a prefix, only the sessions whose id starts with it (how clients
// expand a shortened id).
task<http_reply> list_sessions(const handler_context* ctx, std::string target) {
  auto limit = query_number(target, "limit");
  if (!limit) co_return error_reply(limit.error());
  std::string prefix(query_value(target, "prefix").value_or(""));
  if (prefix.size() > 64 || !std::all_of(prefix.begin(), prefix.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_' || c == '-';
      }))
    co_return error_reply(make_error(api_errc::bad_request,
                                     "query parameter 'prefix' must be at most 64 of [A-Za-z0-9_-]"));
  const auto n = static_cast<std::size_t>(std::clamp<std::int64_t>(limit->value_or(list_limit), 1, list_limit));
  auto listed = co_await ctx->service->list(n, std::move(prefix));
  if (!listed) co_return error_reply(listed.error());
  json::array sessions;
  for (const auto& s : *listed) sessions.push_back(session_view(s, ctx->options.data_dir));
  json::object out;
  out["sessions"] = std::move(sessions);
  co_return json_reply(200, out);
}

bool wants_sse(const http_request& req) { return req.accept.find("text/event-stream") != std::string::npos; }

task<http_reply> events(const handler_context* ctx, session_id id, http_request req) {
  auto after = query_number(req.target, "after");
  if (!after) co_return error_reply(after.error());
  auto limit = query_number(req.target, "limit");
  if (!limit) co_return error_reply(limit.error());
  std::int64_t from = after->value_or(0);
  if (wants_sse(req)) {
    if (!req.last_event_id.empty()) {  // a reconnecting EventSource resumes after the last id it saw
      const auto resumed = whole_number(req.last_event_id);
      if (!resumed)
        co_return error_reply(make_error(api_errc::bad_request, "header 'Last-Event-ID' must be a whole number"));
      from = *resumed;
    }
    auto row = co_await ctx->store->get_session(id);  // 404 before the stream starts
    if (!row) co_return error_reply(row.error());
    http_reply r;
    r.stream = event_stream{id, event_seq{from}};
    co_return r;
  }
  const auto n = static_cast<std::size_t>(std::clamp<std::int64_t>(limit->value_or(1000), 1, 10'000));
  auto page = co_await ctx->store->read(id, event_seq{from}, n);
  if (!page) co_return error_reply(page.error());
  json::array list;
  for (const auto& e : page->events) list.push_back(model::to_json(e));
  json::object out;
  out["events"] = std::move(list);
  out["more"] = page->more;
  co_return json_reply(200, out);
}

task<http_reply> executions(const handler_context* ctx, session_id id) {
  auto rows = co_await ctx->store->list_executions(id);
  if (!rows) co_return error_reply(rows.error());
  json::array list;
  for (const auto& x : *rows) list.push_back(execution_view(x));
  json::object out;
  out["executions"] = std::move(list);
  co_return json_reply(200, out);
}

task<http_reply> interactions(const handler_context* ctx, session_id id) {
  auto rows = co_await ctx->store->list_interactions(id);
  if (!rows) co_return error_reply(rows.error());
  json::array list;
  for (const auto& i : *rows) list.push_back(interaction_view(i));
  json::object out;
  out["interactions"] = std::move(list);
  co_return json_reply(200, out);
}

task<http_reply> answer(const handler_context* ctx, std::string id_text, std::string body) {
  auto id = interaction_id::parse(id_text);
  if (!id) co_return error_reply(make_error(session::session_errc::unknown_interaction, "no interaction " + id_text));
  auto parsed = parse_body(body);
  if (!parsed) co_return error_reply(parsed.error());
  // A plan confirmation is the work layer's to decide ({accepted, reason?}).
  if (ctx->work != nullptr) {
    auto row = co_await ctx->store->get_interaction(*id);
    if (row && row->kind == "confirmation") co_return co_await answer_confirmation(ctx, *id, *parsed);
  }
  if (auto known = only_fields(*parsed, answer_fields); !known) co_return error_reply(known.error());
  auto answered = co_await ctx->service->submit_answer(*id, json::value(std::move(parsed.value())));
  if (!answered) co_return error_reply(answered.error());
  json::object out;
  out["interaction"] = interaction_view(*answered);
  co_return json_reply(200, out);
}

http_reply method_not_allowed(std::string_view allowed) {
  return error_reply(make_error(api_errc::method_not_allowed, "use " + std::string(allowed)));
}

}  // namespace

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
  const auto parts = split_path(req.target);
  const std::string_view m = req.method;
  const bool get = m == "GET";
  const bool post = m == "POST";
  auto route_is = [&](std::initializer_list<std::string_view> shape) {
    if (parts.size() != shape.size()) return false;
    std::size_t i = 0;
    for (const auto want : shape) {
      if (!want.empty() && parts[i] != want) return false;  // "" matches any segment
      ++i;
    }
    return true;
  };

  if (!host_allowed(req.host, ctx->options.allowed_hosts))
    co_return error_reply(make_error(api_errc::misdirected,
                                     "this server does not answer to the host '" + req.host +
                                         "' (an IP address, localhost, or a name given to `tether serve "
                                         "--allow-host`)"));
  if (route_is({"v1", "health"})) {
    if (!get) co_return method_not_allowed("GET");
    // Degraded when the store cannot write: a load balancer or supervisor
    // sees 503 and the reason, without a token.
    const auto health = ctx->store != nullptr ? ctx->store->health() : store::store_health{};
    const bool ok = health.state == store::store_state::ok;
    json::object out;
    out["status"] = std::string(store::to_string(health.state));
    if (!ok) {
      out["reason"] = health.reason;
      out["since"] = health.since;
    }
    out["node"] = ctx->service->node().name;
    out["version"] = ctx->options.version;
    co_return json_reply(ok ? 200 : 503, out);
  }
  if (auto wait = throttled(ctx, req)) co_return std::move(*wait);
  if (auto web = handle_public_web(ctx, req)) co_return std::move(*web);
  if (auto who = authenticate(ctx, req); !who) co_return error_reply(who.error());
  if (auto media = check_media_type(req.content_type, req.body); !media) co_return error_reply(media.error());

  if (route_is({"metrics"})) {
    if (!get) co_return method_not_allowed("GET");
    http_reply r;
    r.body = metrics::global().render();
    r.content_type = "text/plain; version=0.0.4";
    co_return r;
  }
  if (route_is({"v1", "openapi.json"})) {
    if (!get) co_return method_not_allowed("GET");
    co_return http_reply{200, std::string(openapi_document())};
  }
  if (route_is({"v1", "events"})) {
    if (!get) co_return method_not_allowed("GET");
    if (!wants_sse(req))
      co_return error_reply(
          make_error(api_errc::bad_request, "GET /v1/events is a stream: send 'Accept: text/event-stream'"));
    http_reply r;
    r.stream = event_stream{};
    co_return r;
  }
  if (auto web = handle_web(ctx, req)) co_return std::move(*web);
  if (route_is({"v1", "interactions", "", "answer"})) {
    if (!post) co_return method_not_allowed("POST");
    co_return co_await answer(ctx, std::string(parts[2]), std::move(req.body));
  }
  if (is_work_route(req.target)) {
    std::string no_route = "no route " + req.method + " " + req.target;
    auto work = co_await handle_work(ctx, std::move(req));
    if (work) co_return std::move(*work);
    co_return error_reply(make_error(api_errc::not_found, std::move(no_route)));
  }
  if (route_is({"v1", "sessions"})) {
    if (post) co_return co_await create_session(ctx, std::move(req.body));
    if (get) co_return co_await list_sessions(ctx, req.target);
    co_return method_not_allowed("GET or POST");
  }
  if (parts.size() < 3 || parts[0] != "v1" || parts[1] != "sessions")
    co_return error_reply(make_error(api_errc::not_found, "no route " + req.method + " " + req.target));

  // /v1/sessions/{id}/…
  auto id = path_session(parts[2]);
  const std::string_view leaf = parts.size() >= 4 ? parts[3] : std::string_view();
  const bool known = parts.size() == 3 ||
                     (parts.size() == 4 &&
                      (leaf == "inputs" || leaf == "interrupt" || leaf == "reset" || leaf == "resume" ||
                       leaf == "messages" || leaf == "events" || leaf == "executions" || leaf == "interactions")) ||
                     (parts.size() == 5 && leaf == "inputs");
  if (!known) co_return error_reply(make_error(api_errc::not_found, "no route " + req.method + " " + req.target));
  if (!id) co_return error_reply(id.error());
  if (parts.size() == 3) {
    if (!get) co_return method_not_allowed("GET");
    co_return co_await get_session(ctx, *id);
  }
  if (parts.size() == 5) {
    if (m != "DELETE") co_return method_not_allowed("DELETE");
    co_return co_await cancel_input(ctx, *id, std::string(parts[4]));
  }
  if (leaf == "inputs") {
    if (post) co_return co_await admit_input(ctx, *id, std::move(req.body));
    if (get) co_return co_await list_inputs(ctx, *id);
    co_return method_not_allowed("GET or POST");
  }
  if (leaf == "interrupt" || leaf == "reset" || leaf == "resume") {
    if (!post) co_return method_not_allowed("POST");
    if (leaf == "interrupt") co_return co_await interrupt(ctx, *id);
    if (leaf == "reset") co_return co_await reset(ctx, *id);
    co_return co_await resume(ctx, *id);
  }
  if (!get) co_return method_not_allowed("GET");
  if (leaf == "messages") co_return co_await messages(ctx, *id);
  if (leaf == "events") co_return co_await events(ctx, *id, std::move(req));
  if (leaf == "executions") co_return co_await executions(ctx, *id);
  co_return co_await interactions(ctx, *id);
}

}  // namespace tether::api
