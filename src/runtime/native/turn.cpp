#include "runtime/native/turn.h"

#include <spdlog/spdlog.h>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/json.hpp>
#include <chrono>

#include "runtime/native/history.h"
#include "session/errors.h"
#include "util/metrics.h"
#include "work/agent_tools.h"

namespace tether::runtime::native {

namespace asio = boost::asio;
namespace json = boost::json;
using session::turn_result;
using session::turn_status;
using store::message_role;
using store::message_row;

namespace {

constexpr std::string_view continue_note =
    "Your previous response was cut off by a connection failure. Continue where you left off.";
constexpr std::string_view final_note =
    "You have used the maximum number of steps for this turn. Tools are now disabled: reply with your final "
    "answer, saying what is done and what is left.";

// The turn's place as the tools see it (tools/tool.h command_place).
class tools_place final : public command_place {
 public:
  explicit tools_place(std::shared_ptr<session::turn_place> p) : p_(std::move(p)) {}
  [[nodiscard]] const std::string& environment() const override { return p_->environment(); }
  [[nodiscard]] const std::string& workspace() const override { return p_->workspace(); }
  process::spawner& spawner() override { return p_->spawner(); }
  void signal(int relay, int sig) override { p_->signal(relay, sig); }
  asio::awaitable<result<void>> send_workspace(bool even_unchanged) override {
    return p_->send_workspace(even_unchanged);
  }
  asio::awaitable<result<void>> fetch_workspace() override { return p_->fetch_workspace(); }

 private:
  std::shared_ptr<session::turn_place> p_;
};

std::string default_system_prompt(const std::filesystem::path& workspace, const session::turn_place* place) {
  std::string where = "You are a coding agent. You work in the directory " + workspace.string() +
                      " (the workspace): use the tools to read, search and change files there and to run commands. ";
  if (place != nullptr)
    where += "Commands (bash) run in the environment " + place->environment() + ", in its copy of the workspace, " +
             place->workspace() + ", kept in step with it: use paths relative to the workspace. ";
  return where +
         "When a decision belongs to the user, ask with ask_user. When the work is done, reply with a short final "
         "answer.";
}

}  // namespace

// The local calls of one step: they run concurrently on the turn's strand
// and the step waits until the last one settled.
struct call_batch {
  explicit call_batch(const asio::any_io_executor& ex) : done(ex) {}
  std::size_t remaining = 0;
  bool waiting = false;  // an ask_user call asked a question
  asio::steady_timer done;
};

namespace {
// A seed for a turn's backoff jitter. std::random_device opens the kernel's
// generator each time it is made; one per thread is plenty for jitter.
std::uint64_t jitter_seed() {
  thread_local std::mt19937_64 seeds{std::random_device{}()};
  return seeds();
}
}  // namespace

turn::turn(runtime_parts parts, session::turn_context ctx, std::shared_ptr<session::turn_host> host)
    : parts_(parts), ctx_(std::move(ctx)), host_(std::move(host)), rng_(jitter_seed()) {
  rows_ = ctx_.transcript;
  workspace_ = ctx_.workspace.empty() ? parts_.options.data_dir / "workspaces" / ctx_.session.str()
                                      : std::filesystem::path(ctx_.workspace);
}

bool turn::stopped() const { return host_->stop_token().stop_requested(); }

turn_result turn::finish(turn_status s, std::string error) {
  turn_result r;
  r.status = lease_lost_ ? turn_status::interrupted : s;
  r.error = std::move(error);
  r.usage = usage_;
  return r;
}

asio::awaitable<turn_result> turn::run() {
  {
    std::error_code ec;
    std::filesystem::create_directories(workspace_, ec);
    workspace_ = std::filesystem::weakly_canonical(workspace_, ec);
  }
  if (parts_.options.work != nullptr) {
    auto t = co_await parts_.options.work->task_of(ctx_.session);
    if (!t) co_return finish(turn_status::failed, "reading the session's task: " + t.error().message);
    if (*t) {
      const auto box = work::tools_for(**t);
      read_only_ = box.read_only;
      for (const auto& w : box.work) work_specs_.push_back(tool_spec{w.name, w.description, w.parameters});
      task_ = std::move(*t);
    }
  }
  bool promoted_already = false;  // the last boundary() ran at the end of the previous step
  for (std::int64_t step = 1;; ++step) {
    if (stopped()) co_return finish(turn_status::interrupted);
    if (step > 1 && !promoted_already) {
      auto steers = co_await host_->boundary();
      if (!steers) co_return finish(turn_status::failed, steers.error().message);
      for (auto& r : *steers) rows_.push_back(std::move(r));
    }
    promoted_already = false;
    const bool final_step = step >= parts_.options.max_steps;
    if (final_step) {
      std::vector<model::payload> note;
      note.emplace_back(model::synthetic{std::string(final_note), std::string("max_steps")});
      if (auto r = co_await record(std::move(note)); !r) co_return finish(turn_status::failed, r.error().message);
    }

    // Compaction when the request would not fit.
    const auto& c = parts_.options.compaction;
    auto req = request(final_step);
    if (estimate_tokens(req) > c.context_window - c.reserve) {
      if (auto r = co_await compact(false); !r) co_return finish(turn_status::failed, r.error().message);
      req = request(final_step);
    }

    // Not awaited: a crash before it commits loses nothing (no step is open to fail).
    std::vector<model::payload> started;
    started.emplace_back(model::step_started{ctx_.execution, step});
    host_->record_soon(std::move(started));

    const auto step_began = std::chrono::steady_clock::now();
    auto out = co_await stream_step(std::move(req), final_step);
    metrics::step_seconds().observe(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - step_began).count());
    switch (out.what) {
      case step_outcome::kind::cancelled:
      case step_outcome::kind::lost:
        co_return finish(turn_status::interrupted);
      case step_outcome::kind::failed: {
        std::vector<model::payload> failed;
        failed.emplace_back(model::step_failed{out.error});
        (void)co_await record(std::move(failed));
        co_return finish(turn_status::failed, out.error);
      }
      case step_outcome::kind::cut: {
        std::vector<model::payload> events;
        if (!out.partial_text.empty()) events.emplace_back(model::text_ended{message_id::generate(), out.partial_text});
        events.emplace_back(model::step_failed{out.error});
        if (final_step) {  // no step is left to continue in
          (void)co_await record(std::move(events));
          co_return finish(turn_status::failed, out.error);
        }
        events.emplace_back(model::synthetic{std::string(continue_note), std::string("stream_cut")});
        if (auto r = co_await record(std::move(events)); !r) co_return finish(turn_status::failed, r.error().message);
        continue;
      }
      case step_outcome::kind::done:
        break;
    }

    local_calls local;
    auto output = output_events(out.done, final_step, local);
    if (final_step || !local.empty()) {
      if (auto r = co_await record(std::move(output)); !r) co_return finish(turn_status::failed, r.error().message);
      if (final_step) co_return finish(turn_status::completed);
      auto waiting = co_await run_calls(std::move(local));
      if (!waiting) co_return finish(turn_status::failed, waiting.error().message);
      if (lease_lost_ || stopped()) co_return finish(turn_status::interrupted);
      if (*waiting) co_return finish(turn_status::waiting);
      continue;  // tools ran: the model sees their results
    }
    // A final answer: written together with the steers that arrived
    // meanwhile (then the model sees both), or else with the execution's end.
    auto next = co_await host_->boundary_after(std::move(output));
    if (!next) {
      if (next.error() == session::session_errc::lease_lost) lease_lost_ = true;
      co_return finish(turn_status::failed, next.error().message);
    }
    add_rows(next->recorded);
    if (next->promoted.empty()) co_return finish(turn_status::completed);
    for (auto& r : next->promoted) rows_.push_back(std::move(r));
    promoted_already = true;
  }
}

model_request turn::request(bool final_step) const {
  model_request r;
  r.model = parts_.options.provider.model;
  chat_message system;
  system.role = chat_role::system;
  system.text = parts_.options.system_prompt.empty() ? default_system_prompt(workspace_, ctx_.place.get()) : parts_.options.system_prompt;
  if (!parts_.options.instructions.empty()) system.text += "\n\n" + parts_.options.instructions;
  r.messages.push_back(std::move(system));
  for (auto& m : build_history(rows_, parts_.options.data_dir / "blobs")) {
    if (m.role == chat_role::assistant) {
      // Reasoning of this turn goes back with the message that followed it.
      if (auto it = reasoning_.find(m.source_id); it != reasoning_.end()) {
        m.reasoning = it->second.first;
        m.reasoning_meta = it->second.second;
      }
    }
    r.messages.push_back(std::move(m));
  }
  r.tools = offered_specs();
  r.tools_enabled = !final_step;
  return r;
}

asio::awaitable<turn::step_outcome> turn::stream_step(model_request req, bool final_step) {
  int retries = 0;
  for (;;) {
    if (stopped()) co_return step_outcome{step_outcome::kind::cancelled};
    std::string streamed;
    auto host = host_;
    stream_sink sink = [host, &streamed](const stream_event& e) {
      if (const auto* t = std::get_if<text_delta_event>(&e)) {
        streamed += t->text;
        host->publish(model::text_delta{t->text});
      } else if (const auto* r = std::get_if<reasoning_delta_event>(&e)) {
        host->publish(model::reasoning_delta{r->text});
      }
    };
    model_request attempt = req;  // a retry sends the same request again
    auto outcome = co_await parts_.model.stream(std::move(attempt), std::move(sink), host_->stop_token());
    if (outcome) {
      step_outcome ok;
      ok.what = step_outcome::kind::done;
      ok.done = std::move(*outcome.done);
      co_return ok;
    }
    const failure_info& f = outcome.failure;
    const std::string why = f.message.empty() ? f.provider_message : f.message;
    switch (decide(f, retries, parts_.options.retry)) {
      case failure_action::cancelled:
        co_return step_outcome{step_outcome::kind::cancelled};
      case failure_action::retry: {
        ++retries;
        const auto wait = backoff(retries, f, parts_.options.retry, rng_);
        const auto at = std::chrono::duration_cast<std::chrono::milliseconds>(
                            std::chrono::system_clock::now().time_since_epoch() + wait)
                            .count();
        std::vector<model::payload> events;
        events.emplace_back(model::step_retry_scheduled{retries, at, why});
        if (auto r = co_await record(std::move(events)); !r) {
          step_outcome lost;
          lost.what = step_outcome::kind::lost;
          co_return lost;
        }
        if (!co_await sleep(wait)) co_return step_outcome{step_outcome::kind::cancelled};
        continue;
      }
      case failure_action::compact: {
        if (compacted_for_overflow_) break;  // a second overflow fails the step
        compacted_for_overflow_ = true;
        if (auto r = co_await compact(true); !r) {
          step_outcome failed;
          failed.error = r.error().message;
          co_return failed;
        }
        req = request(final_step);  // the same step, rebuilt on the compacted history
        continue;
      }
      case failure_action::continue_after_cut: {
        step_outcome cut;
        cut.what = step_outcome::kind::cut;
        cut.partial_text = std::move(streamed);
        cut.error = why;
        co_return cut;
      }
      case failure_action::fail:
        break;
    }
    step_outcome failed;
    failed.error = f.provider_message.empty() ? why : f.provider_message;
    co_return failed;
  }
}

asio::awaitable<result<void>> turn::compact(bool forced) {
  const auto cut = compaction_cut(rows_, parts_.options.compaction.keep_recent);
  if (!cut) {
    if (forced)
      spdlog::info("session {}: context overflow with nothing to compact; rebuilding once", ctx_.session.str());
    co_return ok();
  }
  auto req = summary_request(rows_, *cut, parts_.options.provider.model);
  stream_sink ignore = [](const stream_event&) {};  // a named local: GCC 12 mishandles temporaries in co_await
  auto outcome = co_await parts_.model.stream(std::move(req), std::move(ignore), host_->stop_token());
  if (!outcome) {
    const auto& f = outcome.failure;
    co_return make_error(provider_errc::context_overflow,
                         "compaction failed: " + (f.message.empty() ? f.provider_message : f.message));
  }
  const std::int64_t kept_from = rows_[*cut].seq.value;
  std::vector<model::payload> events;
  events.emplace_back(model::compaction_ended{outcome.done->text, kept_from});
  model::usage u = outcome.done->usage;
  const auto cost =
      price_usage(parts_.options.prices, parts_.options.provider.model, u, outcome.done->reported_cost_usd);
  u.cost_usd = cost.usd;
  u.cost_status = std::string(to_string(cost.status));
  usage_ += u;
  TETHER_CO_TRY(co_await record(std::move(events)));
  // The context is now the summary, then the kept rows.
  std::vector<message_row> rows;
  message_row summary;
  summary.seq = event_seq{kept_from};
  summary.role = message_role::summary;
  summary.id = "summary";
  summary.text = outcome.done->text;
  rows.push_back(std::move(summary));
  rows.insert(rows.end(), std::make_move_iterator(rows_.begin() + static_cast<std::ptrdiff_t>(*cut)),
              std::make_move_iterator(rows_.end()));
  rows_ = std::move(rows);
  co_return ok();
}

asio::awaitable<result<void>> turn::record(std::vector<model::payload> events) {
  auto r = co_await host_->record(std::move(events));
  if (!r) {
    if (r.error() == session::session_errc::lease_lost) lease_lost_ = true;
    co_return r.error();
  }
  add_rows(*r);
  co_return ok();
}

void turn::add_rows(const std::vector<model::event>& events) {
  for (const auto& e : events) {
    message_row row;
    row.seq = e.seq;
    if (const auto* t = e.as<model::text_ended>()) {
      row.role = message_role::assistant;
      row.id = t->message.str();
      row.text = t->text;
    } else if (const auto* c = e.as<model::tool_called>()) {
      row.role = message_role::tool_call;
      row.id = c->call.str();
      row.tool = c->tool;
      row.input = c->input;
      row.call_kind = c->kind;
    } else if (const auto* s = e.as<model::tool_succeeded>()) {
      row.role = message_role::tool_result;
      row.id = s->call.str();
      row.text = s->content;
      if (hosted_.contains(row.id)) row.call_kind = model::tool_kind::hosted;
    } else if (const auto* f = e.as<model::tool_failed>()) {
      row.role = message_role::tool_result;
      row.id = f->call.str();
      row.text = f->error;
      row.is_error = true;
      if (hosted_.contains(row.id)) row.call_kind = model::tool_kind::hosted;
    } else if (const auto* n = e.as<model::synthetic>()) {
      row.role = message_role::notice;
      row.id = e.id.str();
      row.text = n->text;
    } else {
      continue;
    }
    rows_.push_back(std::move(row));
  }
}

std::vector<model::payload> turn::output_events(const completion& c, bool final_step, local_calls& local) {
  std::vector<model::payload> events;
  if (!c.reasoning.empty()) events.emplace_back(model::reasoning_ended{c.reasoning});
  std::string source;
  if (!c.text.empty()) {
    auto id = message_id::generate();
    source = id.str();
    events.emplace_back(model::text_ended{std::move(id), c.text});
  }
  std::vector<std::pair<std::string, call_id>> ids;  // provider id -> ours
  for (const auto& call : c.calls) {
    auto id = call_id::generate();
    if (source.empty()) source = id.str();
    if (call.hosted) hosted_.insert(id.str());
    ids.emplace_back(call.id, id);
    model::tool_called ev;
    ev.call = id;
    ev.tool = call.name;
    ev.input = call.input;
    ev.kind = call.hosted ? model::tool_kind::hosted : model::tool_kind::local;
    events.emplace_back(std::move(ev));
  }
  for (std::size_t i = 0; i < c.calls.size(); ++i) {
    const auto& call = c.calls[i];
    const auto& id = ids[i].second;
    if (call.hosted) {
      const auto it = std::find_if(c.hosted_results.begin(), c.hosted_results.end(),
                                   [&call](const hosted_result& h) { return h.call_id == call.id; });
      if (it != c.hosted_results.end()) {
        events.emplace_back(model::tool_succeeded{id, json::serialize(it->content), {}});
      } else {
        events.emplace_back(model::tool_failed{id, "the provider returned no result for this hosted call"});
      }
    } else if (final_step) {
      events.emplace_back(model::tool_failed{id, "tools are disabled: the turn reached its maximum number of steps"});
    }
  }
  model::usage u = c.usage;
  const auto cost = price_usage(parts_.options.prices, parts_.options.provider.model, u, c.reported_cost_usd);
  u.cost_usd = cost.usd;
  u.cost_status = std::string(to_string(cost.status));
  usage_ += u;
  events.emplace_back(model::step_ended{c.raw_finish.empty() ? std::string(to_string(c.finish)) : c.raw_finish, u});
  if (!c.reasoning.empty() || c.reasoning_meta) reasoning_[source] = {c.reasoning, c.reasoning_meta};
  if (!final_step)
    for (std::size_t i = 0; i < c.calls.size(); ++i)
      if (!c.calls[i].hosted) local.emplace_back(ids[i].second, c.calls[i]);
  return events;
}

asio::awaitable<result<bool>> turn::run_calls(local_calls calls) {
  auto ex = co_await asio::this_coro::executor;
  auto batch = std::make_shared<call_batch>(ex);
  if (ctx_.place) {
    // In an environment bash replaces the host copy after each command
    // (tools/tool.h): no file tool may write it meanwhile, so one at a time.
    for (std::size_t i = 0; i < calls.size(); ++i) co_await run_call(calls[i].first, std::move(calls[i].second), batch);
    co_return batch->waiting;
  }
  batch->remaining = calls.size();
  batch->done.expires_at(asio::steady_timer::time_point::max());
  for (auto& [id, call] : calls) {
    asio::co_spawn(ex, run_call(id, std::move(call), batch), [batch](const std::exception_ptr& e) {
      if (e) spdlog::error("a tool call failed unexpectedly");
      if (--batch->remaining == 0) batch->done.cancel();
    });
  }
  if (batch->remaining > 0) (void)co_await batch->done.async_wait(asio::as_tuple(asio::use_awaitable));
  co_return batch->waiting;
}

std::vector<tool_spec> turn::offered_specs() const {
  std::vector<tool_spec> out;
  const auto read_only = work::read_only_tools();
  for (auto& s : parts_.tools.specs())
    if (!read_only_ || std::find(read_only.begin(), read_only.end(), s.name) != read_only.end())
      out.push_back(std::move(s));
  out.insert(out.end(), work_specs_.begin(), work_specs_.end());
  return out;
}

asio::awaitable<void> turn::run_call(call_id id, tool_use call, std::shared_ptr<call_batch> batch) {
  std::vector<model::payload> events;
  const auto offered = offered_specs();
  const bool known =
      std::any_of(offered.begin(), offered.end(), [&](const tool_spec& s) { return s.name == call.name; });
  const tool* t = parts_.tools.find(call.name);
  if (!known || (t == nullptr && !task_)) {
    std::string names;
    for (const auto& s : offered) names += (names.empty() ? "" : ", ") + s.name;
    std::string why = "unknown tool '" + call.name + "'";
    if (t != nullptr || work::is_work_tool(call.name))
      why = "'" + call.name + "' is not offered" +
            (task_ ? " to a task in " + std::string(model::to_string(task_->mode)) + " mode" : std::string());
    events.emplace_back(model::tool_failed{id, why + "; the tools are: " + names});
    (void)co_await record(std::move(events));
    co_return;
  }
  if (t == nullptr) {  // a work tool of the session's task
    auto out = co_await parts_.options.work->run(*task_, call.name, call.input);
    using work_status = work::work_tool_outcome::status;
    if (out.what == work_status::succeeded) {
      events.emplace_back(model::tool_succeeded{id, out.content, {}});
    } else if (out.what == work_status::failed) {
      events.emplace_back(model::tool_failed{id, out.content});
    } else {
      model::interaction_requested ev;
      ev.interaction = interaction_id::generate();
      ev.call = id;
      ev.kind = out.interaction_kind;
      ev.payload = std::move(out.interaction_payload);
      events.emplace_back(std::move(ev));
      batch->waiting = true;
    }
    (void)co_await record(std::move(events));
    co_return;
  }
  tool_context ctx;
  ctx.workspace = workspace_;
  ctx.spill_dir = parts_.options.data_dir / "spill" / ctx_.session.str();
  ctx.blob_dir = parts_.options.data_dir / "blobs";
  ctx.blocking = parts_.blocking;
  ctx.stop = host_->stop_token();
  ctx.call_id = id.str();
  ctx.limits = parts_.options.limits;
  ctx.sandbox = parts_.options.sandbox;
  if (ctx_.place) ctx.place = std::make_shared<tools_place>(ctx_.place);
  auto out = co_await t->run(call.input, std::move(ctx));
  switch (out.status) {
    case tool_status::succeeded:
      events.emplace_back(model::tool_succeeded{id, out.content, out.output_path});
      break;
    case tool_status::failed:
      events.emplace_back(model::tool_failed{id, out.content});
      break;
    case tool_status::waiting: {
      model::interaction_requested ev;
      ev.interaction = interaction_id::generate();
      ev.call = id;
      ev.kind = out.interaction_kind;
      ev.payload = out.interaction_payload;
      events.emplace_back(std::move(ev));
      batch->waiting = true;
      break;
    }
  }
  (void)co_await record(std::move(events));
}

asio::awaitable<bool> turn::sleep(std::chrono::milliseconds d) {
  auto ex = co_await asio::this_coro::executor;
  auto timer = std::make_shared<asio::steady_timer>(ex, d);
  std::stop_callback on_stop(host_->stop_token(), [timer, ex] { asio::post(ex, [timer] { timer->cancel(); }); });
  auto [ec] = co_await timer->async_wait(asio::as_tuple(asio::use_awaitable));
  co_return !ec && !stopped();
}

}  // namespace tether::runtime::native
