// What one agent turn records (turn_recorder.h).
#include "runtime/agent/turn_recorder.h"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "runtime/native/tools/ask_user.h"
#include "session/errors.h"
#include "work/agent_tools.h"

namespace tether::runtime::agent {

namespace asio = boost::asio;
namespace json = boost::json;
using session::turn_result;
using session::turn_status;

namespace {

constexpr std::size_t max_tool_output_bytes = 64U * 1024U;

// What the agent's ask_user call returns: no answer yet (JSON, so a model
// reading it cannot take the message for the answer).
constexpr std::string_view asked_reply =
    R"({"status":"waiting_for_user","message":"The question was sent to the user. End your turn now: do not call )"
    R"(more tools and do not keep working. The user's answer will arrive as your next message."})";

// What request_plan_approval returns to an agent program: the decision
// arrives later, as the call's result in the next turn's input.
constexpr std::string_view approval_reply =
    R"({"status":"waiting_for_approval","message":"The plan was sent for approval. End your turn now: do not call )"
    R"(more tools and do not keep working. The decision will arrive as your next message."})";

std::string capped(std::string s, std::size_t limit) {
  if (s.size() <= limit) return s;
  s.resize(limit);
  return s + "\n… (cut at " + std::to_string(limit) + " bytes)";
}

}  // namespace

turn_recorder::turn_recorder(const asio::any_io_executor& ex, std::shared_ptr<session::turn_host> host,
                             turn_facts facts)
    : host_(std::move(host)), facts_(std::move(facts)), host_wait_(ex) {}

std::string turn_recorder::redacted(std::string s) const {
  const auto& secret = facts_.secret;
  if (secret.empty()) return s;
  for (auto at = s.find(secret); at != std::string::npos; at = s.find(secret, at))
    s.replace(at, secret.size(), "[redacted]");
  return s;
}

asio::awaitable<result<std::vector<model::event>>> turn_recorder::record(std::vector<model::payload> events) {
  while (host_busy_) {
    host_wait_.expires_at(std::chrono::steady_clock::time_point::max());
    co_await host_wait_.async_wait(asio::as_tuple(asio::use_awaitable));
  }
  host_busy_ = true;
  auto r = co_await host_->record(std::move(events));
  host_busy_ = false;
  host_wait_.cancel();
  if (!r && !record_error_) record_error_ = r.error();
  co_return r;
}

asio::awaitable<result<std::vector<store::message_row>>> turn_recorder::boundary() {
  while (host_busy_) {
    host_wait_.expires_at(std::chrono::steady_clock::time_point::max());
    co_await host_wait_.async_wait(asio::as_tuple(asio::use_awaitable));
  }
  host_busy_ = true;
  auto r = co_await host_->boundary();
  host_busy_ = false;
  host_wait_.cancel();
  co_return r;
}

void turn_recorder::bind_soon(const std::string& id, std::string state) {
  if (id.empty()) return;
  bound_ = id;
  facts_.state = std::move(state);
  std::vector<model::payload> events;
  events.emplace_back(model::runtime_bound{facts_.kind, id, std::nullopt, facts_.last_seen_seq, facts_.state});
  host_->record_soon(std::move(events));
}

asio::awaitable<result<void>> turn_recorder::take(std::vector<agent_event> evs) {
  std::vector<model::payload> events;
  for (auto& e : evs) {
    if (auto* s = std::get_if<agent_session>(&e)) {
      if (s->id.empty() || s->id == bound_) continue;
      bound_ = s->id;
      events.emplace_back(model::runtime_bound{facts_.kind, s->id, std::nullopt, facts_.last_seen_seq, facts_.state});
    } else if (auto* t = std::get_if<text_piece>(&e)) {
      host_->publish(model::text_delta{std::move(t->text)});
    } else if (auto* m = std::get_if<agent_message>(&e)) {
      events.emplace_back(model::text_ended{message_id::generate(), redacted(std::move(m->text))});
    } else if (auto* ts = std::get_if<tool_start>(&e)) {
      const auto call = call_id::generate();
      calls_.emplace(ts->id, call);
      events.emplace_back(model::tool_called{call, ts->tool, std::move(ts->input), model::tool_kind::agent});
    } else if (auto* te = std::get_if<tool_end>(&e)) {
      const auto it = calls_.find(te->id);
      if (it == calls_.end()) continue;
      auto text = redacted(capped(std::move(te->output), max_tool_output_bytes));
      if (te->ok)
        events.emplace_back(model::tool_succeeded{it->second, std::move(text), {}});
      else
        events.emplace_back(model::tool_failed{it->second, text.empty() ? std::string("failed") : std::move(text)});
      calls_.erase(it);
    } else if (auto* u = std::get_if<turn_usage>(&e)) {
      // Tokens only (their sums saturate); the agent's cost is kept apart.
      usage_ += model::usage{u->usage.input_tokens, u->usage.output_tokens, u->usage.cached_input_tokens, {}, {}};
      if (u->agent_cost_usd) agent_cost_ = agent_cost_.value_or(0) + *u->agent_cost_usd;
    } else if (auto* f = std::get_if<turn_failed>(&e)) {
      agent_error_ = std::move(f->message);
    } else if (std::holds_alternative<turn_done>(e)) {
      done_ = true;
    }
  }
  if (events.empty()) co_return ok();
  auto r = co_await record(std::move(events));
  if (!r) co_return r.error();
  co_return ok();
}

tool_spec turn_recorder::ask_user_spec() {
  return tool_spec{"ask_user", std::string(native::ask_user_description()), native::ask_user_parameters()};
}

asio::awaitable<tool_reply> turn_recorder::ask_user(std::string tool, json::value args) {
  if (finished_) co_return tool_reply{"this turn is over", true};
  if (tool != "ask_user") co_return tool_reply{"unknown tool " + tool, true};
  auto payload = native::ask_user_question(args);
  if (!payload) co_return tool_reply{"invalid question: " + payload.error().message, true};
  if (asked_) co_return tool_reply{"a question already waits for the user's answer; end your turn now", true};
  const auto call = call_id::generate();
  std::vector<model::payload> events;
  events.emplace_back(model::tool_called{call, "ask_user", std::move(args), model::tool_kind::agent});
  events.emplace_back(
      model::interaction_requested{interaction_id::generate(), call, "question", model::to_json(*payload)});
  auto r = co_await record(std::move(events));
  if (!r) co_return tool_reply{"Tether could not record the question: " + r.error().message, true};
  asked_ = true;
  co_return tool_reply{std::string(asked_reply), false};
}

void turn_recorder::set_task(work::agent_tools* tools, std::optional<store::task_row> task) {
  work_ = tools;
  task_ = std::move(task);
}

std::vector<tool_spec> turn_recorder::tool_specs() const {
  std::vector<tool_spec> out{ask_user_spec()};
  if (work_ == nullptr || !task_) return out;
  for (auto& w : work::tools_for(*task_).work)
    out.push_back(tool_spec{std::move(w.name), std::move(w.description), json::value(std::move(w.parameters))});
  return out;
}

agent_settings turn_recorder::settings_for(const agent_settings& settings) const {
  agent_settings out = settings;
  // Ask mode only: under codex's read-only sandbox the planning tools
  // (write_plan through `tether mcp`) are refused too.
  if (work_ != nullptr && task_ && task_->mode == model::work_mode::ask &&
      out.permissions == agent_permissions::approve_all)
    out.permissions = agent_permissions::approve_reads;
  return out;
}

asio::awaitable<tool_reply> turn_recorder::call(std::string tool, json::value args) {
  if (tool == "ask_user" || work_ == nullptr || !task_ || !work::is_work_tool(tool))
    co_return co_await ask_user(std::move(tool), std::move(args));
  if (finished_) co_return tool_reply{"this turn is over", true};
  if (asked_) co_return tool_reply{"a question already waits for the user's answer; end your turn now", true};
  const auto id = call_id::generate();
  std::vector<model::payload> called;
  called.emplace_back(model::tool_called{id, tool, args, model::tool_kind::agent});
  if (auto r = co_await record(std::move(called)); !r)
    co_return tool_reply{"Tether could not record the call: " + r.error().message, true};
  auto out = co_await work_->run(*task_, tool, std::move(args));
  std::vector<model::payload> settled;
  tool_reply reply{out.content, out.what == work::work_tool_outcome::status::failed};
  switch (out.what) {
    case work::work_tool_outcome::status::succeeded:
      settled.emplace_back(model::tool_succeeded{id, out.content, {}});
      break;
    case work::work_tool_outcome::status::failed:
      settled.emplace_back(model::tool_failed{id, out.content});
      break;
    case work::work_tool_outcome::status::waiting:
      // Like a question: the call stays open until the decision settles it.
      settled.emplace_back(model::interaction_requested{interaction_id::generate(), id, out.interaction_kind,
                                                        std::move(out.interaction_payload)});
      reply = tool_reply{std::string(approval_reply), false};
      break;
  }
  if (auto r = co_await record(std::move(settled)); !r)
    co_return tool_reply{"Tether could not record the result: " + r.error().message, true};
  if (out.what == work::work_tool_outcome::status::waiting) asked_ = true;
  co_return reply;
}

asio::awaitable<turn_result> turn_recorder::fail(std::string why, std::string stderr_tail) {
  auto message = facts_.program + ": " + redacted(std::move(why));
  if (!stderr_tail.empty()) message += "\nstderr (last lines):\n" + redacted(stderr_tail);
  std::vector<model::payload> events;
  events.emplace_back(model::step_failed{message});
  (void)co_await record(std::move(events));
  co_return turn_result{turn_status::failed, std::move(message), usage()};
}

model::usage turn_recorder::usage() {
  if (relay_ != nullptr) {
    auto m = relay_->take_usage();
    relayed_ += m.usage;
    relayed_responses_ += m.responses;
  }
  return relayed_responses_ > 0 ? relayed_ : usage_;
}

asio::awaitable<turn_result> turn_recorder::complete() {
  auto usage = this->usage();
  if (facts_.prices != nullptr) {
    const auto cost = runtime::price_usage(*facts_.prices, facts_.model, usage, std::nullopt);
    usage.cost_usd = cost.usd;
    usage.cost_status = std::string(runtime::to_string(cost.status));
  }
  std::vector<model::payload> events;
  model::step_ended ended{"stop", usage};
  ended.agent_cost_usd = agent_cost_;
  events.emplace_back(std::move(ended));
  if (auto r = co_await record(std::move(events)); !r) co_return failed_recording();
  co_return turn_result{asked_ ? turn_status::waiting : turn_status::completed, {}, usage};
}

turn_result turn_recorder::interrupted() { return turn_result{turn_status::interrupted, {}, usage()}; }

turn_result turn_recorder::failed_recording() {
  if (!record_error_) return turn_result{turn_status::failed, "recording failed", usage()};
  const bool lost = *record_error_ == session::session_errc::lease_lost;
  return turn_result{lost ? turn_status::interrupted : turn_status::failed, record_error_->message, usage()};
}

}  // namespace tether::runtime::agent
