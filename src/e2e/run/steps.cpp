// The steps of a case, through the public API only, and what the cell saw.
#include <algorithm>
#include <cctype>
#include <fstream>
#include <sstream>
#include <thread>

#include <boost/json.hpp>

#include "e2e/run/cell_env.h"
#include "util/clock.h"

namespace tether::e2e {

namespace json = boost::json;
namespace fs = std::filesystem;
using namespace std::chrono_literals;

std::string str(const json::value* v) { return v != nullptr && v->is_string() ? std::string(v->as_string()) : ""; }
std::int64_t num(const json::value* v) {
  if (v == nullptr) return 0;
  if (v->is_int64()) return v->as_int64();
  if (v->is_uint64()) return static_cast<std::int64_t>(v->as_uint64());
  if (v->is_double()) return static_cast<std::int64_t>(v->as_double());
  return 0;
}

namespace {

error api_error(const std::string& what, const error& e) { return make_error(e2e_errc::api, what + ": " + e.message); }

std::string session_path(const cell_env& env, std::string_view leaf = {}) {
  std::string p = "/v1/sessions/" + env.session;
  if (!leaf.empty()) p += "/" + std::string(leaf);
  return p;
}

result<json::array> list(cell_env& env, std::string_view leaf, std::string_view key) {
  auto r = env.api->get(session_path(env, leaf));
  if (!r) return api_error("GET " + session_path(env, leaf), r.error());
  const auto* a = r->is_object() ? r->as_object().if_contains(key) : nullptr;
  if (a == nullptr || !a->is_array())
    return make_error(e2e_errc::api, "GET " + session_path(env, leaf) + ": no '" + std::string(key) + "' array");
  return a->as_array();
}

result<json::object> get_session(cell_env& env) {
  auto r = env.api->get(session_path(env));
  if (!r) return api_error("GET " + session_path(env), r.error());
  const auto* s = r->is_object() ? r->as_object().if_contains("session") : nullptr;
  if (s == nullptr || !s->is_object()) return make_error(e2e_errc::api, "GET " + session_path(env) + ": no session");
  return s->as_object();
}

result<void> create_session(cell_env& env) {
  json::object body;
  body["workspace"] = env.workspace.string();
  body["title"] = env.values.cell;
  auto r = env.api->post("/v1/sessions", body);
  if (!r) return api_error("POST /v1/sessions", r.error());
  const auto* s = r->is_object() ? r->as_object().if_contains("session") : nullptr;
  env.session = s != nullptr && s->is_object() ? str(s->as_object().if_contains("id")) : "";
  if (env.session.empty()) return make_error(e2e_errc::api, "POST /v1/sessions: no session id in the answer");
  return ok();
}

result<void> send(cell_env& env, const step& s) {
  json::object body;
  body["text"] = s.text;
  body["delivery"] = s.delivery;
  sent_input in;
  in.session = env.session;
  in.text = s.text;
  in.sent_unix_ms = real_clock().now();
  auto r = env.api->post(session_path(env, "inputs"), body);
  if (!r) return api_error("POST " + session_path(env, "inputs"), r.error());
  in.admitted_steady_us = steady_us_now();
  const auto* input = r->is_object() ? r->as_object().if_contains("input") : nullptr;
  in.id = input != nullptr && input->is_object() ? str(input->as_object().if_contains("id")) : "";
  env.inputs.push_back(std::move(in));
  return ok();
}

result<std::int64_t> finished_runs(cell_env& env) {
  auto runs = list_executions(env);
  if (!runs) return runs.error();
  return static_cast<std::int64_t>(std::count_if(runs->begin(), runs->end(), [](const json::value& x) {
    return x.is_object() && str(x.as_object().if_contains("status")) == "finished";
  }));
}

// Whether the wait's condition holds now; `seen` says what was seen (for the timeout message).
result<bool> reached(cell_env& env, const step& s, std::string& seen) {
  switch (s.target) {
    case wait_target::idle:
    case wait_target::waiting:
    case wait_target::running: {
      auto sess = get_session(env);
      if (!sess) return sess.error();
      seen = "status " + str(sess->if_contains("status")) + ", " +
             std::to_string(num(sess->if_contains("pending_inputs"))) + " pending input(s)";
      const auto status = str(sess->if_contains("status"));
      if (s.target == wait_target::idle) return status == "idle" && num(sess->if_contains("pending_inputs")) == 0;
      if (status != to_string(s.target)) return false;
      if (s.target != wait_target::running) return true;
      // "running" also covers a node that has taken the session up but not
      // yet started its execution: an input sent then joins the first turn
      // (both are pending when it starts). A turn runs once its execution does.
      auto runs = list_executions(env);
      if (!runs) return runs.error();
      seen += ", no execution running yet";
      return std::any_of(runs->begin(), runs->end(), [](const json::value& x) {
        return x.is_object() && str(x.as_object().if_contains("status")) == "running";
      });
    }
    case wait_target::runs: {
      auto n = finished_runs(env);
      if (!n) return n.error();
      seen = std::to_string(*n) + " finished run(s)";
      return *n >= s.count;
    }
    case wait_target::file: {
      std::error_code ec;
      seen = s.path + " does not exist";
      return fs::exists(env.workspace / s.path, ec);
    }
    case wait_target::task:
    case wait_target::children:
      break;  // the work steps wait for these (work_steps.cpp)
  }
  return false;
}

result<void> wait(cell_env& env, const step& s) {
  const auto deadline = std::chrono::steady_clock::now() + s.timeout;
  std::string seen;
  for (;;) {
    if (env.cancelled()) return make_error(e2e_errc::interrupted, "interrupted");
    auto r = reached(env, s, seen);
    if (!r) return r.error();
    if (*r) return ok();
    if (std::chrono::steady_clock::now() >= deadline)
      return make_error(e2e_errc::infrastructure, "wait for " + std::string(to_string(s.target)) +
                                                      ": not reached within " + std::to_string(s.timeout.count()) +
                                                      " ms (" + seen + ")");
    std::this_thread::sleep_for(25ms);
  }
}

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return std::tolower(c); });
  return out;
}

// The answer body for the one pending question: the option whose label or id
// matches (case-insensitive), or the other text.
result<json::object> answer_body(const json::value& payload, const step& s) {
  const auto* qs = payload.is_object() ? payload.as_object().if_contains("questions") : nullptr;
  if (qs == nullptr || !qs->is_array() || qs->as_array().empty())
    return make_error(e2e_errc::api, "the pending interaction is not a question");
  json::array answers;
  for (const auto& q : qs->as_array()) {
    if (!q.is_object()) continue;
    json::object a;
    a["question_id"] = str(q.as_object().if_contains("id"));
    json::array ids;
    if (!s.option.empty()) {
      const std::string& option = s.option;
      const auto* opts = q.as_object().if_contains("options");
      if (opts != nullptr && opts->is_array())
        for (const auto& o : opts->as_array())
          if (o.is_object() && (lower(str(o.as_object().if_contains("label"))) == lower(option) ||
                                lower(str(o.as_object().if_contains("id"))) == lower(option)))
            ids.push_back(o.as_object().at("id"));
      if (ids.empty()) return make_error(e2e_errc::api, "the question has no option '" + option + "'");
    } else {
      a["other_text"] = s.other;
    }
    a["option_ids"] = std::move(ids);
    answers.push_back(std::move(a));
  }
  json::object body;
  body["answers"] = std::move(answers);
  return body;
}

result<void> answer(cell_env& env, const step& s) {
  auto all = list(env, "interactions", "interactions");
  if (!all) return all.error();
  const json::object* pending = nullptr;
  for (const auto& i : *all)
    if (i.is_object() && str(i.as_object().if_contains("status")) == "pending") pending = &i.as_object();
  if (pending == nullptr) return make_error(e2e_errc::api, "answer: the session has no pending interaction");
  auto body = answer_body(pending->at("payload"), s);
  if (!body) return body.error();
  const std::string target = "/v1/interactions/" + str(pending->if_contains("id")) + "/answer";
  auto r = env.api->post(target, *body);
  if (!r) return api_error("POST " + target, r.error());
  return ok();
}

result<void> post_leaf(cell_env& env, std::string_view leaf) {
  auto r = env.api->post(session_path(env, leaf), json::object());
  if (!r) return api_error("POST " + session_path(env, leaf), r.error());
  return ok();
}

result<void> restart(cell_env& env, const step& s) {
  if (two_nodes(env)) return switch_nodes(env, s.mode);
  if (!stop_server(env, s.mode) && s.mode == restart_mode::graceful)
    return make_error(e2e_errc::api, "restart: the server did not exit within 10 s of SIGTERM");
  return start_server(env);
}

// The seq at which run `run` (1-based) of the session ended: its execution.finished.
result<std::int64_t> end_of_run(cell_env& env, std::int64_t run) {
  auto page = env.api->get(session_path(env, "events") + "?limit=10000");
  if (!page) return api_error("GET " + session_path(env, "events"), page.error());
  const auto* events = page->is_object() ? page->as_object().if_contains("events") : nullptr;
  std::int64_t seen = 0;
  if (events != nullptr && events->is_array())
    for (const auto& e : events->as_array())
      if (e.is_object() && str(e.as_object().if_contains("type")) == "execution.finished" && ++seen == run)
        return num(e.as_object().if_contains("seq"));
  return make_error(e2e_errc::api, "fork: the session has " + std::to_string(seen) + " finished run(s), not " +
                                       std::to_string(run));
}

// The session forked at the end of run s.run (0: its last); the cell goes on
// with the fork: its id, and its workspace for the file matchers.
result<void> fork(cell_env& env, const step& s) {
  json::object body;
  if (s.run > 0) {
    auto at = end_of_run(env, s.run);
    if (!at) return at.error();
    body["at"] = *at;
  }
  auto r = env.api->post(session_path(env, "fork"), body);
  if (!r) return api_error("POST " + session_path(env, "fork"), r.error());
  const auto* made = r->is_object() ? r->as_object().if_contains("session") : nullptr;
  const auto* view = made != nullptr && made->is_object() ? &made->as_object() : nullptr;
  const auto id = view != nullptr ? str(view->if_contains("id")) : "";
  const auto workspace = view != nullptr ? str(view->if_contains("workspace")) : "";
  if (id.empty() || workspace.empty())
    return make_error(e2e_errc::api, "POST " + session_path(env, "fork") + ": no session id or workspace in the answer");
  env.session = id;
  env.workspace = workspace;
  return ok();
}

result<void> sleep_for(cell_env& env, std::chrono::milliseconds d) {
  const auto until = std::chrono::steady_clock::now() + d;
  while (std::chrono::steady_clock::now() < until) {
    if (env.cancelled()) return make_error(e2e_errc::interrupted, "interrupted");
    std::this_thread::sleep_for(std::min<std::chrono::milliseconds>(
        20ms, std::chrono::duration_cast<std::chrono::milliseconds>(until - std::chrono::steady_clock::now()) + 1ms));
  }
  return ok();
}

std::string read_file(const fs::path& p, bool& exists) {
  std::ifstream in(p, std::ios::binary);
  exists = static_cast<bool>(in);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

result<void> run_step(cell_env& env, const step& raw) {
  if (env.cancelled()) return make_error(e2e_errc::interrupted, "interrupted");
  auto expanded = expand_step(raw, env.values);  // every string of it, the wait's path included
  if (!expanded) return expanded.error();
  const step& s = *expanded;
  if (is_work_step(env, s)) return run_work_step(env, s);
  if (s.kind != step_kind::create_session && env.session.empty())
    return make_error(e2e_errc::invalid_definition, "a step before create_session");
  switch (s.kind) {
    case step_kind::create_session:
      return create_session(env);
    case step_kind::send:
      return send(env, s);
    case step_kind::wait:
      return wait(env, s);
    case step_kind::stop:
      return post_leaf(env, "interrupt");
    case step_kind::reset:
      return post_leaf(env, "reset");
    case step_kind::answer:
      return answer(env, s);
    case step_kind::restart:
      return restart(env, s);
    case step_kind::sleep:
      return sleep_for(env, s.duration);
    case step_kind::fork:
      return fork(env, s);
    default:
      return ok();  // the work steps went to run_work_step
  }
}

result<json::array> list_executions(cell_env& env) { return list(env, "executions", "executions"); }

namespace {

// What agent_session_resumed judges: each run's agent session (the last
// runtime.bound in it), why the agent's state was unavailable, and whether
// the scripted model got a transcript rendered for a new agent session.
result<void> observe_agent_sessions(cell_env& env, observation& o, const std::vector<std::int64_t>& starts) {
  auto page = env.api->get("/v1/sessions/" + env.session + "/events?limit=10000");
  if (!page) return make_error(e2e_errc::api, "GET the session's events: " + page.error().message);
  const auto* events = page->is_object() ? page->as_object().if_contains("events") : nullptr;
  if (events != nullptr && events->is_array())
    for (const auto& ev : events->as_array()) {
      if (!ev.is_object()) continue;
      const auto& e = ev.as_object();
      const auto type = str(e.if_contains("type"));
      const auto* data = e.if_contains("data");
      if (data == nullptr || !data->is_object()) continue;
      if (type == "agent.state.unavailable") o.agent_state_unavailable.push_back(str(data->as_object().if_contains("reason")));
      if (type != "runtime.bound") continue;
      const auto seq = num(e.if_contains("seq"));
      std::size_t run = starts.size();
      for (std::size_t i = 0; i < starts.size(); ++i)
        if (starts[i] <= seq) run = i;
      if (run < o.runs.size()) o.runs[run].agent_session = str(data->as_object().if_contains("external_session_id"));
    }
  if (auto requests = mock_requests(env)) {
    bool replayed = false;
    for (const auto& body : *requests)
      replayed = replayed || body.find("The conversation so far, as Tether recorded it") != std::string::npos;
    o.transcript_replayed = replayed;
  }
  return ok();
}

}  // namespace

result<observation> observe(cell_env& env, const case_def& c, const json::array& executions) {
  observation o;
  o.environment = env.plan->environment.id;
  for (const auto& path : files_to_collect(c.matchers, env.values)) {
    bool exists = false;
    auto bytes = read_file(env.workspace / path, exists);
    if (exists) o.files[path] = std::move(bytes);
  }
  if (env.session.empty()) return o;
  auto sess = get_session(env);
  if (!sess) return sess.error();
  o.session_status = str(sess->if_contains("status"));
  o.runtime = str(sess->if_contains("runtime"));
  std::vector<std::pair<std::int64_t, std::string>> starts;  // started_seq → run id
  const auto usage = usage_of(executions);
  for (std::size_t i = 0; i < executions.size() && i < usage.size(); ++i) {
    const auto& xo = executions[i].as_object();
    const auto& u = usage[i];
    observed_run r;
    r.id = u.run_id;
    r.runtime = str(xo.if_contains("runtime"));
    r.outcome = u.outcome;
    r.started_at_ms = num(xo.if_contains("started_at"));
    r.finished_at_ms = num(xo.if_contains("finished_at"));
    r.agent_process = agent_process_of(xo);
    r.usage_reported = u.input_tokens.has_value();
    r.input_tokens = u.input_tokens.value_or(0);
    r.output_tokens = u.output_tokens.value_or(0);
    r.cached_input_tokens = u.cached_input_tokens.value_or(0);
    r.cost_usd = u.cost_usd;
    r.cost_status = u.cost_status;
    starts.emplace_back(num(xo.if_contains("started_seq")), r.id);
    o.runs.push_back(std::move(r));
  }
  std::sort(starts.begin(), starts.end());
  if (std::any_of(c.matchers.begin(), c.matchers.end(),
                  [](const matcher_spec& m) { return m.kind == matcher_kind::agent_session_resumed; })) {
    std::vector<std::int64_t> run_starts;  // in run order, as o.runs
    for (const auto& x : executions)
      if (x.is_object()) run_starts.push_back(num(x.as_object().if_contains("started_seq")));
    TETHER_TRY(observe_agent_sessions(env, o, run_starts));
  }
  auto messages = list(env, "messages", "messages");
  if (!messages) return messages.error();
  for (const auto& m : *messages) {
    if (!m.is_object()) continue;
    const auto& mo = m.as_object();
    observed_message om;
    om.role = str(mo.if_contains("role"));
    om.text = str(mo.if_contains("text"));
    if (om.role != "user") {  // the run whose start is the last before this message
      const auto seq = num(mo.if_contains("seq"));
      for (const auto& [start, id] : starts)
        if (start <= seq) om.run_id = id;
    }
    o.messages.push_back(std::move(om));
  }
  auto interactions = list(env, "interactions", "interactions");
  if (!interactions) return interactions.error();
  for (const auto& i : *interactions)
    if (i.is_object())
      o.interactions.push_back({str(i.as_object().if_contains("id")), str(i.as_object().if_contains("status"))});
  TETHER_TRY(observe_work(env, c, o));
  return o;
}

std::optional<observed_process> agent_process_of(const json::object& execution) {
  const auto* p = execution.if_contains("agent_process");
  if (p == nullptr || !p->is_object() || !p->as_object().contains("pid")) return std::nullopt;
  return observed_process{num(p->as_object().if_contains("pid")), num(p->as_object().if_contains("started_ms"))};
}

std::vector<run_usage> usage_of(const json::array& executions) {
  std::vector<run_usage> out;
  for (const auto& x : executions) {
    if (!x.is_object()) return {};  // not the API's shape: no usage rather than misattributed usage
    const auto& xo = x.as_object();
    run_usage u;
    u.run_id = str(xo.if_contains("id"));
    u.outcome = str(xo.if_contains("outcome"));
    u.cost_status = "unavailable";
    if (const auto* us = xo.if_contains("usage"); us != nullptr && us->is_object()) {
      const auto& uo = us->as_object();
      const auto in = num(uo.if_contains("input_tokens"));
      const auto outp = num(uo.if_contains("output_tokens"));
      if (in + outp > 0) {
        u.input_tokens = in;
        u.output_tokens = outp;
        u.cached_input_tokens = num(uo.if_contains("cached_input_tokens"));
      }
      if (const auto* cost = uo.if_contains("cost_usd"); cost != nullptr && cost->is_number())
        u.cost_usd = cost->to_number<double>();
      if (auto status = str(uo.if_contains("cost_status")); !status.empty()) u.cost_status = status;
    }
    out.push_back(std::move(u));
  }
  return out;
}

}  // namespace tether::e2e
