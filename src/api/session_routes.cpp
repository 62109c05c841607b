#include "api/session_routes.h"

#include <algorithm>
#include <cctype>
#include <string>
#include <utility>

#include <boost/json.hpp>

#include "api/body.h"
#include "api/errors.h"
#include "api/openapi.h"
#include "api/views.h"
#include "api/work_routes.h"
#include "api/workspace.h"
#include "session/errors.h"
#include "store/errors.h"
#include "util/metrics.h"

namespace tether::api::session_routes {

namespace json = boost::json;
template <class T>
using task = boost::asio::awaitable<T>;

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

task<http_reply> interrupt_session(const handler_context* ctx, session_id id) {
  auto ack = co_await ctx->service->interrupt(id);
  if (!ack) co_return error_reply(ack.error());
  json::object out;
  out["interrupted"] = ack->was_active;
  co_return json_reply(200, out);
}

task<http_reply> reset_session(const handler_context* ctx, session_id id) {
  auto done = co_await ctx->service->reset(id);
  if (!done) co_return error_reply(done.error());
  auto row = co_await ctx->store->get_session(id);
  if (!row) co_return error_reply(row.error());
  json::object out;
  out["generation"] = row->generation;
  co_return json_reply(200, out);
}

// {at?: seq | "latest", id?, title?}; an empty body forks at the last turn.
result<session::fork_request> parse_fork(const std::string& body) {
  session::fork_request req;
  if (body.find_first_not_of(" \t\r\n") == std::string::npos) return req;
  auto o = parse_body(body);
  if (!o) return o.error();
  if (auto known = only_fields(*o, fork_session_fields); !known) return known.error();
  if (const auto* at = o->if_contains("at"); at != nullptr && !at->is_null()) {
    if (at->is_string() && at->get_string() == "latest") {
      // the last turn: req.at stays empty
    } else if (at->is_int64() && at->get_int64() >= 1) {
      req.at = at->get_int64();
    } else if (at->is_uint64() && at->get_uint64() <= static_cast<std::uint64_t>(INT64_MAX)) {
      req.at = static_cast<std::int64_t>(at->get_uint64());
    } else {
      return make_error(api_errc::bad_request, "field 'at' must be a seq (an integer of 1 or more) or \"latest\"");
    }
  }
  auto id = string_field(*o, "id");
  if (!id) return id.error();
  req.id = *id;
  auto title = string_field(*o, "title");
  if (!title) return title.error();
  req.title = *title;
  return req;
}

task<http_reply> fork_session(const handler_context* ctx, session_id id, std::string body) {
  auto req = parse_fork(body);
  if (!req) co_return error_reply(req.error());
  auto made = co_await ctx->service->fork(std::move(id), std::move(req.value()));
  if (!made) co_return error_reply(made.error());
  co_return session_reply(ctx, 201, *made);
}

task<http_reply> resume_session(const handler_context* ctx, session_id id) {
  auto woken = co_await ctx->service->resume_if_work(std::move(id));
  if (!woken) co_return error_reply(woken.error());
  json::object out;
  out["started"] = *woken == session::wake_status::woken;
  co_return json_reply(200, out);
}

task<http_reply> transcript(const handler_context* ctx, session_id id) {
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

task<http_reply> session_events(const handler_context* ctx, session_id id, http_request req) {
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

task<http_reply> list_executions(const handler_context* ctx, session_id id) {
  auto rows = co_await ctx->store->list_executions(id);
  if (!rows) co_return error_reply(rows.error());
  json::array list;
  for (const auto& x : *rows) list.push_back(execution_view(x));
  json::object out;
  out["executions"] = std::move(list);
  co_return json_reply(200, out);
}

task<http_reply> list_interactions(const handler_context* ctx, session_id id) {
  auto rows = co_await ctx->store->list_interactions(id);
  if (!rows) co_return error_reply(rows.error());
  json::array list;
  for (const auto& i : *rows) list.push_back(interaction_view(i));
  json::object out;
  out["interactions"] = std::move(list);
  co_return json_reply(200, out);
}

task<http_reply> answer_interaction(const handler_context* ctx, std::string id_text, std::string body) {
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


// A route of one session: its {id} parsed first (404 unknown_session).
template <task<http_reply> (*fn)(const handler_context*, session_id)>
task<http_reply> of_session(route_call c) {
  auto id = path_session(c.params.at(0));
  if (!id) co_return error_reply(id.error());
  co_return co_await fn(c.ctx, std::move(*id));
}

}  // namespace

task<http_reply> health(route_call c) {
  const auto* ctx = c.ctx;
  // Degraded when the store cannot write: a load balancer or supervisor
  // sees 503 and the reason, without a token.
  const auto h = ctx->store != nullptr ? ctx->store->health() : store::store_health{};
  const bool ok = h.state == store::store_state::ok;
  json::object out;
  out["status"] = std::string(store::to_string(h.state));
  if (!ok) {
    out["reason"] = h.reason;
    out["since"] = h.since;
  }
  out["node"] = ctx->service->node().name;
  out["version"] = ctx->options.version;
  co_return json_reply(ok ? 200 : 503, out);
}

task<http_reply> prometheus(route_call) {
  http_reply r;
  r.body = metrics::global().render();
  r.content_type = "text/plain; version=0.0.4";
  co_return r;
}

task<http_reply> openapi(route_call) { co_return http_reply{200, std::string(openapi_document())}; }

task<http_reply> all_events(route_call c) {
  if (!wants_sse(c.req))
    co_return error_reply(
        make_error(api_errc::bad_request, "GET /v1/events is a stream: send 'Accept: text/event-stream'"));
  http_reply r;
  r.stream = event_stream{};
  co_return r;
}

task<http_reply> create(route_call c) { return create_session(c.ctx, std::move(c.req.body)); }
task<http_reply> list(route_call c) { return list_sessions(c.ctx, std::move(c.req.target)); }
task<http_reply> get(route_call c) { return of_session<&get_session>(std::move(c)); }

task<http_reply> admit(route_call c) {
  auto id = path_session(c.params.at(0));
  if (!id) co_return error_reply(id.error());
  co_return co_await admit_input(c.ctx, std::move(*id), std::move(c.req.body));
}

task<http_reply> inputs(route_call c) { return of_session<&list_inputs>(std::move(c)); }

task<http_reply> cancel(route_call c) {
  auto id = path_session(c.params.at(0));
  if (!id) co_return error_reply(id.error());
  co_return co_await cancel_input(c.ctx, std::move(*id), std::move(c.params.at(1)));
}

task<http_reply> interrupt(route_call c) { return of_session<&interrupt_session>(std::move(c)); }
task<http_reply> reset(route_call c) { return of_session<&reset_session>(std::move(c)); }
task<http_reply> resume(route_call c) { return of_session<&resume_session>(std::move(c)); }

task<http_reply> fork(route_call c) {
  auto id = path_session(c.params.at(0));
  if (!id) co_return error_reply(id.error());
  co_return co_await fork_session(c.ctx, std::move(*id), std::move(c.req.body));
}
task<http_reply> messages(route_call c) { return of_session<&transcript>(std::move(c)); }

task<http_reply> events(route_call c) {
  auto id = path_session(c.params.at(0));
  if (!id) co_return error_reply(id.error());
  co_return co_await session_events(c.ctx, std::move(*id), std::move(c.req));
}

task<http_reply> executions(route_call c) { return of_session<&list_executions>(std::move(c)); }
task<http_reply> interactions(route_call c) { return of_session<&list_interactions>(std::move(c)); }
task<http_reply> answer(route_call c) { return answer_interaction(c.ctx, std::move(c.params.at(0)), std::move(c.req.body)); }

}  // namespace tether::api::session_routes
