#include "session/runner.h"

#include "util/metrics.h"

#include <algorithm>
#include <optional>
#include <stop_token>

#include <spdlog/spdlog.h>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

namespace tether::session {

namespace asio = boost::asio;
using namespace boost::asio::experimental::awaitable_operators;

// g++ 12 destroys some temporaries of a co_await full-expression twice
// (aggregates, braced lists): requests are built as named locals first.

namespace {

constexpr std::string_view restart_notice =
    "Tether restarted while this turn was running. Tool calls that were in flight were stopped and their "
    "side effects may be incomplete; check the workspace before relying on them, then continue.";

store::message_row user_message(const store::input_row& in) {
  store::message_row m;
  m.seq = in.admitted_seq;
  m.role = store::message_role::user;
  m.id = in.id.str();
  m.text = in.prompt;
  return m;
}

// The store could not write (full disk, I/O error); it retries by itself.
bool storage_failure(const error& e) {
  return e == store::store_errc::write_failed || e == store::store_errc::storage_unavailable;
}

drain_status status_of(model::outcome o) {
  switch (o) {
    case model::outcome::succeeded:
      return drain_status::succeeded;
    case model::outcome::failed:
      return drain_status::failed;
    case model::outcome::interrupted:
      return drain_status::interrupted;
    case model::outcome::waiting:
      return drain_status::waiting;
  }
  return drain_status::error;
}

}  // namespace

// What a runtime sees of the runner during one turn.
class runner::host final : public turn_host {
 public:
  host(runner& r, session_id s, execution_id e, std::shared_ptr<drain_control> control,
       std::vector<model::payload>* held)
      : runner_(r), session_(std::move(s)), execution_(std::move(e)), control_(std::move(control)), held_(held) {}

  task<result<std::vector<store::message_row>>> boundary() override {
    if (auto earlier = co_await settle_soon(); !earlier) co_return earlier.error();
    auto r = co_await runner_.promote(session_, execution_, control_, model::delivery::steer, *held_, {});
    if (!r) co_return r.error();
    co_return std::move(r->promoted);
  }

  task<result<boundary_result>> boundary_after(std::vector<model::payload> events) override {
    if (auto earlier = co_await settle_soon(); !earlier) co_return earlier.error();
    co_return co_await runner_.promote(session_, execution_, control_, model::delivery::steer, *held_,
                                       std::move(events));
  }

  task<result<std::vector<model::event>>> record(std::vector<model::payload> events) override {
    if (auto earlier = co_await settle_soon(); !earlier) co_return earlier.error();
    store::append_request req{session_, std::move(events), runner_.lease_fence(), 0};
    auto r = co_await runner_.store_.append(std::move(req));
    if (!r) {
      if (r.error() == store::store_errc::fence_failed) control_->request_stop(stop_reason::lease_lost);
      co_return r.error();
    }
    co_return std::move(r.value().events);
  }

  void record_soon(std::vector<model::payload> events) override {
    store::append_request req{session_, std::move(events), runner_.lease_fence(), 0};
    soon_.push_back(runner_.store_.append(std::move(req)));  // queued now (see event_store.h)
  }

  // Waits until everything record_soon() queued is committed (or refused), so
  // the runner's reads after the turn see it. The first refusal, if any.
  task<result<void>> flush() { co_return co_await settle_soon(); }

  // What record_soon() queued must be in the log before anything the turn
  // writes after it: a store that recovered from a full disk in between
  // would otherwise take the later events without the earlier ones. So one
  // refused write fails every later write of the turn.
  task<result<void>> settle_soon() {
    auto pending = std::move(soon_);
    soon_.clear();
    for (auto& w : pending) {
      auto r = co_await std::move(w);
      if (r || refused_) continue;
      refused_ = r.error();
      if (r.error() == store::store_errc::fence_failed) control_->request_stop(stop_reason::lease_lost);
    }
    if (refused_) co_return *refused_;
    co_return ok();
  }

  void publish(model::payload ephemeral) override { runner_.store_.publish(session_, std::move(ephemeral)); }
  void wake() override { control_->wake(); }
  [[nodiscard]] std::stop_token stop_token() const override { return control_->stop_token(); }

 private:
  runner& runner_;
  session_id session_;
  execution_id execution_;
  std::shared_ptr<drain_control> control_;
  std::vector<model::payload>* held_;  // the execution's events waiting for its next write
  std::vector<task<result<store::append_result>>> soon_;
  std::optional<error> refused_;  // the first record_soon() write that failed
};

runner::runner(store::event_store& store, runtime& rt, const tether::clock& clk, node_identity node,
               session_options options)
    : store_(store), runtime_(rt), clock_(clk), node_(std::move(node)), options_(options) {}

store::fence runner::lease_fence() const {
  store::fence f;
  f.lease_owner = node_.owner();
  return f;
}

// The terminal event and the lease's release are one commit.
store::fence runner::terminal_fence() const {
  auto f = lease_fence();
  f.release_lease = true;
  return f;
}

namespace {

// What one boundary promotes: every pending steer, or if there is none and
// `upto` allows it, the oldest queued input.
std::vector<store::input_row> choose_inputs(const std::vector<store::input_row>& pending, model::delivery upto) {
  std::vector<store::input_row> chosen;
  for (const auto& in : pending)
    if (in.delivery == model::delivery::steer) chosen.push_back(in);
  if (chosen.empty() && upto == model::delivery::queue) {
    auto oldest = std::find_if(pending.begin(), pending.end(),
                               [](const store::input_row& in) { return in.delivery == model::delivery::queue; });
    if (oldest != pending.end()) chosen.push_back(*oldest);
  }
  return chosen;
}

}  // namespace

asio::awaitable<result<boundary_result>> runner::promote(session_id s, execution_id e,
                                                         std::shared_ptr<drain_control> control, model::delivery upto,
                                                         std::vector<model::payload>& held,
                                                         std::vector<model::payload> before) {
  // The boundary is what is pending now; later admissions wait for the next one.
  auto pending = co_await store_.pending_inputs(s);
  if (!pending) co_return pending.error();
  const auto chosen = choose_inputs(*pending, upto);
  for (auto& p : before) held.push_back(std::move(p));
  if (chosen.empty()) co_return boundary_result{};  // held until the execution's next write
  auto events = std::move(held);
  held.clear();
  const std::size_t recorded = events.size();
  for (const auto& in : chosen) events.emplace_back(model::input_promoted{in.id, e});
  store::append_request req{s, std::move(events), lease_fence(), 0};
  auto r = co_await store_.append(std::move(req));
  if (!r) {
    if (r.error() == store::store_errc::fence_failed) control->request_stop(stop_reason::lease_lost);
    co_return r.error();
  }
  boundary_result out;
  out.recorded.assign(std::make_move_iterator(r->events.begin()),
                      std::make_move_iterator(r->events.begin() + static_cast<std::ptrdiff_t>(recorded)));
  out.promoted.reserve(chosen.size());
  for (std::size_t i = 0; i < chosen.size(); ++i) {
    out.promoted.push_back(user_message(chosen[i]));
    out.promoted.back().seq = r->events[recorded + i].seq;
  }
  co_return out;
}

asio::awaitable<result<std::vector<model::payload>>> runner::settle_leftovers(session_id s, execution_id e,
                                                                              std::string why, step_state step) {
  std::vector<model::payload> events;
  auto calls = co_await store_.unsettled_calls(s);
  if (!calls) co_return calls.error();
  for (const auto& c : calls.value())
    if (c.execution == e && !c.hosted) events.emplace_back(model::tool_failed{c.id, why});
  auto exe = co_await store_.get_execution(e);
  if (!exe) co_return exe.error();
  if (exe->open_step && step == step_state::as_stored) events.emplace_back(model::step_failed{why});
  co_return events;
}

asio::awaitable<void> runner::heartbeat(session_id s, std::shared_ptr<drain_control> control,
                                        std::shared_ptr<time_ms> held_until) {
  asio::steady_timer timer(co_await asio::this_coro::executor);
  bool lost = false;
  for (;;) {
    timer.expires_after(std::chrono::milliseconds(lost ? 3'600'000 : options_.lease_renew_ms));
    auto [ec] = co_await timer.async_wait(asio::as_tuple(asio::use_awaitable));
    if (ec) co_return;  // cancelled: the execution ended
    if (lost) continue;
    auto r = co_await store_.renew_lease(s, node_.owner(), options_.lease_ttl_ms);
    if (r) {
      *held_until = r->expires_at;
      continue;
    }
    // The store cannot write for now, but no one can take the lease before it
    // expires: the execution goes on while the next renewal still comes first.
    if (storage_failure(r.error()) && clock_.now() + options_.lease_renew_ms < *held_until) {
      spdlog::warn("session {}: lease renewal failed ({}); the lease holds {} ms more, retrying", s.str(),
                   r.error().describe(), *held_until - clock_.now());
      continue;
    }
    spdlog::warn("session {}: lease renewal failed ({}); stopping its execution", s.str(), r.error().describe());
    control->request_stop(stop_reason::lease_lost);
    lost = true;  // keep waiting until the execution unwinds and cancels us
  }
}

asio::awaitable<result<store::append_result>> runner::append_terminal(session_id s, std::vector<model::payload> events,
                                                                      std::shared_ptr<drain_control> control,
                                                                      time_ms held_until) {
  const auto ex = co_await asio::this_coro::executor;
  auto delay = std::max<time_ms>(1, options_.storage_retry_ms);
  for (bool warned = false;;) {
    store::append_request req{s, events, terminal_fence(), 0};
    auto r = co_await store_.append(std::move(req));
    if (r || !storage_failure(r.error())) co_return r;
    // Past this the fence would refuse the event anyway: recovery finishes
    // the execution once the store writes again and the lease has expired.
    if (clock_.now() + delay >= held_until || control->reason() == stop_reason::shutdown) co_return r;
    if (!warned) {
      warned = true;
      spdlog::warn("session {}: cannot record the end of its execution ({}); retrying until the store writes again",
                   s.str(), r.error().describe());
    }
    // A shutdown cuts the wait short (unless a stop was already requested,
    // e.g. an interrupt: then the lease's expiry bounds the wait).
    auto timer = std::make_shared<asio::steady_timer>(ex, std::chrono::milliseconds(delay));
    {
      auto cancel = [timer, ex] { asio::post(ex, [timer] { timer->cancel(); }); };
      std::optional<std::stop_callback<decltype(cancel)>> on_stop;
      if (!control->stop_token().stop_requested()) on_stop.emplace(control->stop_token(), cancel);
      (void)co_await timer->async_wait(asio::as_tuple(asio::use_awaitable));
    }
    delay = std::min(delay * 2, std::max(delay, options_.storage_retry_max_ms));
  }
}

asio::awaitable<runner::execution_end> runner::run_execution(session_id s, execution_id e, bool continuation,
                                                             bool promoted_at_start,
                                                             std::shared_ptr<drain_control> control,
                                                             std::optional<store::session_row> first) {
  execution_end end;
  for (;;) {
    if (control->stop_token().stop_requested()) {
      end.outcome = model::outcome::interrupted;
      co_return end;
    }
    if (promoted_at_start) {
      promoted_at_start = false;  // execution.started already promoted the first turn's inputs
    } else {
      // A continuation (after a restart or an answer) finishes the interrupted
      // turn first: steers join it, queued inputs wait for their own turn.
      auto promoted =
          co_await promote(s, e, control, continuation ? model::delivery::steer : model::delivery::queue, end.held, {});
      if (!promoted) {
        end.outcome = model::outcome::failed;
        end.error = promoted.error().describe();
        co_return end;
      }
      if (promoted->promoted.empty() && !continuation) co_return end;  // idle boundary, nothing left: succeeded
    }
    // The drain's row serves the first turn (starting changes none of the
    // fields a turn reads); later turns read it again (a runtime may have
    // bound an external session meanwhile).
    std::optional<store::session_row> sess = std::move(first);
    first.reset();
    if (!sess) {
      auto row = co_await store_.get_session(s);
      if (!row) {
        end.outcome = model::outcome::failed;
        end.error = row.error().describe();
        co_return end;
      }
      sess = std::move(*row);
    }
    auto transcript = co_await store_.context(s);
    if (!transcript) {
      end.outcome = model::outcome::failed;
      end.error = transcript.error().describe();
      co_return end;
    }
    turn_context ctx{s,
                     e,
                     std::move(transcript.value()),
                     sess->workspace,
                     sess->profile,
                     sess->runtime,
                     sess->external_session_id,
                     continuation};
    continuation = false;
    turn_result turn;
    auto turn_host = std::make_shared<host>(*this, s, e, control, &end.held);
    try {
      turn = co_await runtime_.run_turn(std::move(ctx), turn_host);
    } catch (const std::exception& ex) {
      turn = {turn_status::failed, std::string("runtime error: ") + ex.what(), {}};
    }
    auto flushed = co_await turn_host->flush();
    end.usage += turn.usage;
    if (!flushed && turn.status != turn_status::failed && turn.status != turn_status::interrupted) {
      // A write the turn did not wait for failed: what it held belongs after it.
      end.held.clear();
      turn = {turn_status::failed, flushed.error().describe(), {}};
    }
    if (control->stop_token().stop_requested() || turn.status == turn_status::interrupted) {
      end.outcome = model::outcome::interrupted;
      co_return end;
    }
    if (turn.status == turn_status::waiting) {
      end.outcome = model::outcome::waiting;
      co_return end;
    }
    if (turn.status == turn_status::failed) {
      end.outcome = model::outcome::failed;
      end.error = turn.error;
      co_return end;
    }
  }
}

asio::awaitable<drain_outcome> runner::drain(session_id s, std::shared_ptr<drain_control> control) {
  drain_outcome last{drain_status::idle, std::nullopt, {}};
  const auto fail = [&](const error& err) {
    return drain_outcome{drain_status::error, last.execution, err.describe()};
  };
  for (;;) {
    if (control->stop_token().stop_requested()) co_return last;
    auto snap = co_await store_.snapshot(s);
    if (!snap) co_return fail(snap.error());
    const auto& sess = snap->session;
    if (sess.quarantined)
      co_return drain_outcome{drain_status::error, std::nullopt, std::string("session is quarantined")};
    const bool takeover = sess.open_execution.has_value();
    if (!takeover && !snap->pending_interactions.empty()) co_return last;  // waiting for a human: inputs wait too
    if (!takeover && !sess.continuation_pending && snap->pending_inputs.empty()) co_return last;

    const auto busy = [](const error& e) { return drain_outcome{drain_status::busy, std::nullopt, e.describe()}; };
    // When the lease expires unless renewed: the heartbeat renews it, and the
    // terminal event may be retried until then.
    auto held_until = std::make_shared<time_ms>(0);
    if (takeover) {  // a fresh execution claims the lease in the commit that starts it
      auto lease = co_await store_.claim_lease(s, node_.owner(), options_.lease_ttl_ms);
      if (!lease) co_return lease.error() == store::store_errc::lease_held ? busy(lease.error()) : fail(lease.error());
      *held_until = lease->expires_at;
    }

    execution_id exe;
    bool continuation = sess.continuation_pending;
    bool promoted_at_start = false;
    if (takeover) {
      exe = *sess.open_execution;
      auto attempts = co_await store_.bump_attempts(s, node_.owner());
      if (!attempts) co_return fail(attempts.error());
      auto leftovers = co_await settle_leftovers(s, exe, std::string("interrupted by restart"), step_state::as_stored);
      if (!leftovers) co_return fail(leftovers.error());
      auto events = std::move(leftovers.value());
      if (attempts.value() > options_.attempt_budget) {
        events.emplace_back(
            model::execution_finished{exe,
                                      model::outcome::failed,
                                      std::string("attempt_budget"),
                                      "gave up after " + std::to_string(attempts.value() - 1) + " recovery attempts",
                                      {}});
        auto r = co_await append_terminal(s, std::move(events), control, *held_until);
        if (!r) co_return fail(r.error());
        metrics::executions_total().with("failed").inc();
        last = {drain_status::failed, exe, std::string("attempt budget exhausted")};
        continue;
      }
      events.emplace_back(model::execution_recovered{exe, node_.owner(), attempts.value()});
      events.emplace_back(model::synthetic{std::string(restart_notice), std::string("restart")});
      store::append_request req{s, std::move(events), lease_fence(), 0};
      auto r = co_await store_.append(std::move(req));
      if (!r) co_return fail(r.error());
      continuation = true;
    } else {
      // One commit starts the execution and promotes its first turn's inputs
      // (later ones join at the next boundary). A continuation promotes
      // nothing here: it finishes its interrupted turn first.
      exe = execution_id::generate();
      auto f = lease_fence();
      f.no_open_execution = true;
      f.claim_ttl_ms = options_.lease_ttl_ms;
      store::append_request req;
      req.session = s;
      req.fence = f;
      req.events.emplace_back(model::execution_started{exe, node_.owner()});
      if (!continuation)
        for (const auto& in : choose_inputs(snap->pending_inputs, model::delivery::queue))
          req.events.emplace_back(model::input_promoted{in.id, exe});
      promoted_at_start = req.events.size() > 1;
      // The store grants the lease at its own now, no earlier than this one
      // when both read the same clock: a lower bound of its expiry.
      const time_ms asked = clock_.now();
      auto r = co_await store_.append(std::move(req));
      if (!r) co_return r.error() == store::store_errc::lease_held ? busy(r.error()) : fail(r.error());
      *held_until = asked + options_.lease_ttl_ms;
    }

    auto execution = run_execution(s, exe, continuation, promoted_at_start, control, snap->session);
    auto renewals = heartbeat(s, control, held_until);
    auto ran = co_await (std::move(execution) || std::move(renewals));
    auto end = std::get<0>(std::move(ran));

    const auto why = control->reason();
    if (why == stop_reason::lease_lost || why == stop_reason::shutdown) {
      // Not ours to finish: the next owner (or our next start) recovers it.
      co_return drain_outcome{drain_status::abandoned, exe,
                              std::string(why == stop_reason::lease_lost ? "lease lost" : "shutdown")};
    }
    // The last answer, if it was held, goes first: it closed its step.
    auto events = std::move(end.held);
    if (end.outcome == model::outcome::interrupted) {
      end.reason = "user";
      auto leftovers = co_await settle_leftovers(s, exe, std::string("interrupted"),
                                                 events.empty() ? step_state::as_stored : step_state::closed);
      if (!leftovers) co_return fail(leftovers.error());
      for (auto& p : *leftovers) events.push_back(std::move(p));
    }
    events.emplace_back(model::execution_finished{exe, end.outcome, end.reason, end.error, end.usage});
    auto r = co_await append_terminal(s, std::move(events), control, *held_until);
    if (!r) {
      if (r.error() == store::store_errc::fence_failed)
        co_return drain_outcome{drain_status::abandoned, exe, std::string("lease lost before the terminal event")};
      if (storage_failure(r.error()))
        co_return drain_outcome{drain_status::abandoned, exe,
                                "the store could not record the end of the execution (" + r.error().describe() +
                                    "); recovery finishes it once the store writes again"};
      co_return fail(r.error());
    }
    metrics::executions_total().with(model::to_string(end.outcome)).inc();
    last = {status_of(end.outcome), exe, end.error};
    if (end.outcome == model::outcome::interrupted || end.outcome == model::outcome::waiting) co_return last;
  }
}

}  // namespace tether::session
