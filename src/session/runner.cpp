#include "session/runner.h"

#include <algorithm>
#include <atomic>
#include <deque>
#include <optional>
#include <stop_token>

#include <spdlog/spdlog.h>
#include <boost/asio/as_tuple.hpp>
#include <boost/json/serialize.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "session/errors.h"
#include "util/metrics.h"

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

// The store could not write (full disk, I/O error, a lost connection); it
// retries by itself.
bool storage_failure(const error& e) {
  return e == store::store_errc::write_failed || e == store::store_errc::storage_unavailable;
}

// The store could not do it for now: a write as above, or a read.
bool store_trouble(const error& e) { return storage_failure(e) || e == store::store_errc::read_failed; }

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

// The session_errc a runtime gets for a store error (runtime.h: runtimes
// never see the store's codes). The message stays the store's.
error turn_error(const error& e) {
  if (e.code.category() != store::store_category()) return e;
  if (e == store::store_errc::fence_failed) return {session_errc::lease_lost, e.message};
  if (e == store::store_errc::rejected) return {session_errc::invalid_input, e.message};
  if (e == store::store_errc::closed) return {session_errc::stopped, e.message};
  return {session_errc::storage_failed, e.message};
}

}  // namespace

// What a runtime sees of the runner during one turn. It holds the
// execution's held events while the turn runs; finish() takes them back and
// ends the host: from then on nothing reaches the runner through it.
class runner::host final : public turn_host {
 public:
  host(runner& r, std::shared_ptr<execution_log> log, std::int64_t generation, std::vector<model::payload> held)
      : runner_(r), log_(std::move(log)), generation_(generation), held_(std::move(held)) {}

  task<result<std::vector<store::message_row>>> boundary() override {
    if (over_) co_return over();
    busy_ = true;
    if (auto earlier = co_await settle_soon(); !earlier) co_return idle(earlier.error());
    auto r = co_await runner_.promote(log_, model::delivery::steer, std::move(held_), {});
    held_ = std::move(r.held);
    if (!r.done) co_return idle(r.done.error());
    idle();
    co_return std::move(r.done->promoted);
  }

  task<result<boundary_result>> boundary_after(std::vector<model::payload> events) override {
    if (over_) co_return over();
    if (auto prepared = prepare(events); !prepared) co_return prepared.error();
    busy_ = true;
    if (auto earlier = co_await settle_soon(); !earlier) co_return idle(earlier.error());
    auto r = co_await runner_.promote(log_, model::delivery::steer, std::move(held_), std::move(events));
    held_ = std::move(r.held);
    if (!r.done) co_return idle(r.done.error());
    idle();
    co_return std::move(r.done).value();
  }

  task<result<std::vector<model::event>>> record(std::vector<model::payload> events) override {
    if (over_) co_return over();
    if (auto prepared = prepare(events); !prepared) co_return prepared.error();
    busy_ = true;
    if (auto earlier = co_await settle_soon(); !earlier) co_return idle(earlier.error());
    auto req = request(std::move(events));
    auto r = co_await runner_.write(std::move(req), log_, retry_for::turn);
    if (!r) co_return idle(r.error());
    idle();
    co_return std::move(r.value().events);
  }

  void record_soon(std::vector<model::payload> events) override {
    if (over_) return;
    if (auto prepared = prepare(events); !prepared) {
      if (!refused_) refused_ = prepared.error();
      return;
    }
    soon_.push_back(soon_write{std::move(events), std::nullopt});
    launch();
  }

  void publish(model::payload ephemeral) override {
    if (!over_) runner_.store_.publish(log_->session, std::move(ephemeral));
  }
  void wake() override {
    if (!over_) log_->control->wake();
  }
  void on_wake(std::function<void()> listener) override {
    if (!over_) log_->control->set_wake_listener(std::move(listener));
  }
  [[nodiscard]] std::stop_token stop_token() const override { return log_->control->stop_token(); }

  // Ends the turn: waits until everything record_soon() queued is committed
  // (or refused), so the runner's reads after the turn see it, and hands
  // back the held events. `flushed` is the first refusal, if any (a store
  // error, as the runner reads them).
  struct ending {
    result<void> flushed;
    std::vector<model::payload> held;
  };
  task<ending> finish() {
    ending out;
    busy_ = true;
    out.flushed = co_await settle_soon();
    over_ = true;
    log_->control->set_wake_listener(nullptr);
    out.held = std::move(held_);
    held_.clear();
    co_return out;
  }

 private:
  static error over() { return {session_errc::turn_over, "the turn this host served has ended"}; }

  // A record_soon() write: queued (`flight`) or waiting for an earlier one.
  struct soon_write {
    std::vector<model::payload> events;
    std::optional<task<result<store::append_result>>> flight;
  };

  store::append_request request(std::vector<model::payload> events) const {
    return store::append_request{log_->session, std::move(events), runner_.lease_fence(), 0};
  }

  // Checks what the store would refuse with a store error, and gives a
  // binding without a generation the turn's.
  result<void> prepare(std::vector<model::payload>& events) const {
    for (auto& p : events) {
      auto* bound = std::get_if<model::runtime_bound>(&p);
      if (bound == nullptr) continue;
      if (bound->state.size() > model::runtime_bound::max_state_bytes)
        return make_error(session_errc::invalid_input,
                          "runtime.bound state is " + std::to_string(bound->state.size()) + " bytes; at most " +
                              std::to_string(model::runtime_bound::max_state_bytes) + " are kept");
      if (!bound->generation) bound->generation = generation_;
    }
    return ok();
  }

  // The end of a call that wrote: record_soon() writes made meanwhile may go.
  void idle() {
    busy_ = false;
    launch();
  }
  // …or that failed: a write the store did not take refuses every later
  // write of the turn (they must not be in the log without it).
  error idle(const error& e) {
    if (store_trouble(e) && !refused_) refused_ = e;
    busy_ = false;
    return turn_error(e);
  }

  // Queues the record_soon() writes waiting in soon_ (all at once: a failed
  // commit refuses the ones behind it too) when no earlier write of the turn
  // is unresolved: one queued behind a write that failed could land without
  // it once the store writes again.
  void launch() {
    if (busy_ || refused_ || soon_.empty() || soon_.front().flight) return;
    for (auto& w : soon_) w.flight.emplace(runner_.store_.append(request(w.events)));
  }

  // What record_soon() queued must be in the log before anything the turn
  // writes after it: each write is resolved in order, one that failed for a
  // storage failure is written again (runner::write), and one that could not
  // be written refuses every later write of the turn. Called by a busy call.
  task<result<void>> settle_soon() {
    while (!soon_.empty()) {
      auto w = std::move(soon_.front());
      soon_.pop_front();
      if (refused_) continue;
      std::optional<error> first;
      if (w.flight) {
        auto r = co_await std::move(*w.flight);
        if (r) {
          log_->written = std::max(log_->written, r->last_seq);
          continue;
        }
        first = r.error();
      }
      auto req = request(std::move(w.events));
      auto r = co_await runner_.write(std::move(req), log_, retry_for::turn, std::move(first));
      if (!r) refused_ = r.error();
    }
    if (refused_) co_return *refused_;
    co_return ok();
  }

  runner& runner_;  // not used once over_
  std::shared_ptr<execution_log> log_;
  std::int64_t generation_ = 0;
  std::vector<model::payload> held_;  // the execution's events waiting for its next write
  std::deque<soon_write> soon_;
  bool busy_ = false;             // a call is writing (or settling): record_soon() writes wait
  std::optional<error> refused_;  // the first write of the turn that failed (see settle_soon)
  std::atomic<bool> over_{false};
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

asio::awaitable<runner::promotion> runner::promote(std::shared_ptr<execution_log> log, model::delivery upto,
                                                   std::vector<model::payload> held,
                                                   std::vector<model::payload> before) {
  promotion out;
  out.held = std::move(held);
  for (auto& p : before) out.held.push_back(std::move(p));
  // The boundary is what is pending now; later admissions wait for the next one.
  const session_id s = log->session;
  store_call<std::vector<store::input_row>> pending_of = [this, s] { return store_.pending_inputs(s); };
  auto pending = co_await read(std::move(pending_of), log, retry_for::turn);
  if (!pending) {
    out.done = pending.error();
    co_return out;
  }
  const auto chosen = choose_inputs(*pending, upto);
  if (chosen.empty()) {  // held until the execution's next write
    out.done = boundary_result{};
    co_return out;
  }
  const std::size_t recorded = out.held.size();
  std::vector<model::payload> events = out.held;  // kept: held again if they surely were not written
  for (const auto& in : chosen) events.emplace_back(model::input_promoted{in.id, log->execution});
  store::append_request req{s, std::move(events), lease_fence(), 0};
  auto r = co_await write(std::move(req), log, retry_for::turn);
  if (!r) {
    // Written or not, they no longer wait for the next write.
    if (log->in_doubt || !store_trouble(r.error())) out.held.clear();
    out.done = r.error();
    co_return out;
  }
  out.held.clear();
  boundary_result done;
  done.recorded.assign(std::make_move_iterator(r->events.begin()),
                       std::make_move_iterator(r->events.begin() + static_cast<std::ptrdiff_t>(recorded)));
  done.promoted.reserve(chosen.size());
  for (std::size_t i = 0; i < chosen.size(); ++i) {
    done.promoted.push_back(user_message(chosen[i]));
    done.promoted.back().seq = r->events[recorded + i].seq;
  }
  out.done = std::move(done);
  co_return out;
}

asio::awaitable<result<std::vector<model::payload>>> runner::settle_leftovers(session_id s, execution_id e,
                                                                              std::string why, step_state step,
                                                                              std::set<call_id> waiting) {
  std::vector<model::payload> events;
  auto calls = co_await store_.unsettled_calls(s);
  if (!calls) co_return calls.error();
  for (const auto& c : calls.value())
    // Hosted calls are recorded with their result; local and agent calls
    // that never settled were cut off.
    if (c.execution == e && c.kind != model::tool_kind::hosted && !waiting.contains(c.id))
      events.emplace_back(model::tool_failed{c.id, why});
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

// Paces the tries of one write or read the store could not do (see Storage
// failures in runner.h) and decides when to give up.
class runner::retrying {
 public:
  retrying(runner& r, std::shared_ptr<execution_log> log, retry_for why, std::string_view what)
      : runner_(r),
        log_(std::move(log)),
        why_(why),
        what_(what),
        delay_(std::max<time_ms>(1, r.options_.storage_retry_ms)) {}

  // After `e`: waits and returns true (try again), or returns false at once
  // (give up).
  asio::awaitable<bool> again(error e) {
    const auto& control = *log_->control;
    const bool stopped = why_ == retry_for::turn ? control.stop_token().stop_requested()
                                                 : control.reason() == stop_reason::shutdown;
    // A turn keeps the end of the lease for the execution's end; the end
    // itself could not be written past the lease anyway (the fence).
    const time_ms reserve = why_ == retry_for::turn ? runner_.options_.storage_end_reserve_ms : 0;
    if (stopped || runner_.clock_.now() + delay_ + reserve >= *log_->held_until) co_return false;
    if (!warned_) {
      warned_ = true;
      spdlog::warn("session {}: {} failed ({}); retrying while the lease holds", log_->session.str(), what_,
                   e.describe());
    }
    // A stop cuts the wait short (unless one was already requested, e.g. an
    // interrupt before the end is written: then the lease bounds the wait).
    const auto ex = co_await asio::this_coro::executor;
    auto timer = std::make_shared<asio::steady_timer>(ex, std::chrono::milliseconds(delay_));
    {
      auto cancel = [timer, ex] { asio::post(ex, [timer] { timer->cancel(); }); };
      std::optional<std::stop_callback<decltype(cancel)>> on_stop;
      if (!control.stop_token().stop_requested()) on_stop.emplace(control.stop_token(), cancel);
      (void)co_await timer->async_wait(asio::as_tuple(asio::use_awaitable));
    }
    delay_ = std::min(delay_ * 2, std::max(delay_, runner_.options_.storage_retry_max_ms));
    co_return true;
  }

 private:
  runner& runner_;
  std::shared_ptr<execution_log> log_;
  retry_for why_;
  std::string_view what_;  // a literal: what failed, for the log
  time_ms delay_;
  bool warned_ = false;
};

asio::awaitable<result<store::append_result>> runner::write(store::append_request req,
                                                            std::shared_ptr<execution_log> log, retry_for why,
                                                            std::optional<error> first) {
  retrying retry(*this, log, why, why == retry_for::turn ? "recording a turn's events" : "recording its end");
  log->in_doubt = false;
  std::optional<error> failed = std::move(first);
  // The last failed commit may have landed: look before writing again.
  bool unsure = failed && *failed == store::store_errc::write_failed;
  for (;;) {
    if (failed) {
      if (*failed == store::store_errc::fence_failed && why == retry_for::turn)
        log->control->request_stop(stop_reason::lease_lost);
      if (!store_trouble(*failed)) co_return *failed;
      const bool again = co_await retry.again(*failed);
      if (unsure) {  // also when giving up: a runtime must not be told "failed" of a write that landed
        auto found = co_await landed(req, log->written);
        if (found && *found) {
          log->written = std::max(log->written, (*found)->last_seq);
          co_return std::move(**found);
        }
        if (found) {
          unsure = false;
        } else if (again) {
          failed = found.error();
          continue;
        }
      }
      if (!again) {
        log->in_doubt = unsure;
        log->store_failed = true;
        co_return *failed;
      }
    }
    store::append_request attempt = req;
    auto r = co_await store_.append(std::move(attempt));
    if (r) {
      log->written = std::max(log->written, r->last_seq);
      co_return r;
    }
    failed = r.error();
    unsure = unsure || *failed == store::store_errc::write_failed;
  }
}

asio::awaitable<result<std::optional<store::append_result>>> runner::landed(store::append_request req,
                                                                            event_seq after) {
  const auto& want = req.events;
  if (want.empty()) co_return std::optional<store::append_result>();
  const std::string first = boost::json::serialize(model::encode(want.front()));
  std::vector<model::event> log;
  for (event_seq from = after;;) {
    auto page = co_await store_.read(req.session, from, 1'000);
    if (!page) co_return page.error();
    for (auto& e : page->events) log.push_back(std::move(e));
    if (!page->more || log.empty()) break;
    from = log.back().seq;
  }
  for (std::size_t i = 0; i + want.size() <= log.size(); ++i) {
    if (log[i].type() != model::type_name(want.front()) || boost::json::serialize(model::encode(log[i].body)) != first)
      continue;
    bool whole = true;
    for (std::size_t k = 1; k < want.size() && whole; ++k)
      whole = log[i + k].seq.value == log[i].seq.value + static_cast<std::int64_t>(k) &&
              log[i + k].type() == model::type_name(want[k]);
    if (!whole) continue;
    store::append_result found;
    found.events.assign(log.begin() + static_cast<std::ptrdiff_t>(i),
                        log.begin() + static_cast<std::ptrdiff_t>(i + want.size()));
    found.last_seq = found.events.back().seq;
    co_return std::optional<store::append_result>(std::move(found));
  }
  co_return std::optional<store::append_result>();
}

template <class T>
asio::awaitable<result<T>> runner::read(store_call<T> op, std::shared_ptr<execution_log> log, retry_for why) {
  retrying retry(*this, log, why, "reading the session");
  for (;;) {
    auto r = co_await op();
    if (r || !store_trouble(r.error())) co_return r;
    if (!co_await retry.again(r.error())) {
      log->store_failed = true;
      co_return r;
    }
  }
}

asio::awaitable<result<runner::given_back>> runner::give_back(std::shared_ptr<execution_log> log, bool answered) {
  given_back out;
  if (answered) co_return out;
  const session_id s = log->session;
  const execution_id e = log->execution;
  event_seq from = log->turn_floor;
  if (from.value == 0) {
    store_call<store::execution_row> execution_of = [this, e] { return store_.get_execution(e); };
    auto exe = co_await read(std::move(execution_of), log, retry_for::end);
    if (!exe) co_return exe.error();
    from = exe->started_seq;
  }
  // The last turn's promotions and answers (under the lease this runner
  // wrote every one of them after `from`).
  std::vector<std::pair<input_id, event_seq>> promoted;
  event_seq answered_at;
  for (;;) {
    store_call<store::event_page> page_of = [this, s, from] { return store_.read(s, from, 1'000); };
    auto page = co_await read(std::move(page_of), log, retry_for::end);
    if (!page) co_return page.error();
    for (const auto& ev : page->events) {
      if (const auto* p = ev.as<model::input_promoted>(); p != nullptr && p->execution == e)
        promoted.emplace_back(p->input, ev.seq);
      else if (ev.as<model::text_ended>() != nullptr)
        answered_at = ev.seq;
    }
    if (!page->more || page->events.empty()) break;
    from = page->events.back().seq;
  }
  std::erase_if(promoted, [&](const auto& p) { return p.second < answered_at; });
  if (promoted.empty()) co_return out;
  store_call<std::vector<store::input_row>> list_of = [this, s] { return store_.list_inputs(s); };
  auto rows = co_await read(std::move(list_of), log, retry_for::end);
  if (!rows) co_return rows.error();
  for (const auto& p : promoted) {
    const auto& id = p.first;  // named: clang before 16 cannot capture a structured binding
    const auto row = std::find_if(rows->begin(), rows->end(), [&](const store::input_row& r) { return r.id == id; });
    if (row == rows->end() || row->status != store::input_status::promoted || row->execution != e) continue;
    if (row->returns >= options_.input_return_limit) {
      out.kept += (out.kept.empty() ? "" : ", ") + id.str();
      continue;
    }
    out.events.emplace_back(model::input_returned{id, e, std::string("storage_failed"), row->returns + 1});
  }
  co_return out;
}

asio::awaitable<result<store::append_result>> runner::append_terminal(std::vector<model::payload> events,
                                                                      std::shared_ptr<execution_log> log) {
  store::append_request req{log->session, std::move(events), terminal_fence(), 0};
  co_return co_await write(std::move(req), log, retry_for::end);
}

namespace {

std::vector<promoted_input> inputs_of(const std::vector<store::message_row>& promoted) {
  std::vector<promoted_input> out;
  out.reserve(promoted.size());
  for (const auto& m : promoted) out.push_back(promoted_input{input_id::trusted(m.id), m.seq, m.text});
  return out;
}

bool holds_answer(const std::vector<model::payload>& events) {
  return std::any_of(events.begin(), events.end(),
                     [](const model::payload& p) { return std::holds_alternative<model::text_ended>(p); });
}

}  // namespace

asio::awaitable<runner::execution_end> runner::run_execution(std::shared_ptr<execution_log> log, turn_start start,
                                                             std::vector<promoted_input> first_inputs,
                                                             std::optional<store::session_row> first) {
  execution_end end;
  const session_id s = log->session;
  const auto& control = log->control;
  bool promoted_at_start = !first_inputs.empty();
  for (;;) {
    if (control->stop_token().stop_requested()) {
      end.outcome = model::outcome::interrupted;
      co_return end;
    }
    log->store_failed = false;  // a turn that went on after a failure did not fail by it
    std::vector<promoted_input> inputs;
    if (promoted_at_start) {
      promoted_at_start = false;  // execution.started already promoted the first turn's inputs
      inputs = std::move(first_inputs);
    } else {
      // A continuation (after a restart or an answer) finishes the interrupted
      // turn first: steers join it, queued inputs wait for their own turn.
      const auto upto = start == turn_start::continuation ? model::delivery::steer : model::delivery::queue;
      auto promoted = co_await promote(log, upto, std::move(end.held), {});
      end.held = std::move(promoted.held);
      if (!promoted.done) {
        end.outcome = model::outcome::failed;
        end.error = promoted.done.error().describe();
        co_return end;
      }
      // Idle boundary, nothing left: succeeded.
      if (promoted.done->promoted.empty() && start != turn_start::continuation) co_return end;
      inputs = inputs_of(promoted.done->promoted);
    }
    // The drain's row serves the first turn (starting changes none of the
    // fields a turn reads); later turns read it again (a runtime may have
    // bound an external session meanwhile).
    std::optional<store::session_row> sess = std::move(first);
    first.reset();
    if (!sess) {
      store_call<store::session_row> session_of = [this, s] { return store_.get_session(s); };
      auto row = co_await read(std::move(session_of), log, retry_for::turn);
      if (!row) {
        end.outcome = model::outcome::failed;
        end.error = row.error().describe();
        co_return end;
      }
      sess = std::move(*row);
    }
    store_call<std::vector<store::message_row>> context_of = [this, s] { return store_.context(s); };
    auto transcript = co_await read(std::move(context_of), log, retry_for::turn);
    if (!transcript) {
      end.outcome = model::outcome::failed;
      end.error = transcript.error().describe();
      co_return end;
    }
    turn_context ctx;
    ctx.session = s;
    ctx.execution = log->execution;
    ctx.generation = sess->generation;
    ctx.transcript = std::move(transcript.value());
    ctx.promoted = std::move(inputs);
    ctx.workspace = sess->workspace;
    ctx.profile = sess->profile;
    // Only a binding of this generation: an agent session from before a
    // reset is never resumed.
    if (sess->binding && sess->binding->generation == sess->generation) ctx.binding = sess->binding;
    ctx.start = start;
    start = turn_start::inputs;
    turn_result turn;
    auto turn_host = std::make_shared<host>(*this, log, sess->generation, std::move(end.held));
    end.held.clear();
    try {
      turn = co_await runtime_.run_turn(std::move(ctx), turn_host);
    } catch (const std::exception& ex) {
      turn = {turn_status::failed, std::string("runtime error: ") + ex.what(), {}};
    }
    auto ended = co_await turn_host->finish();
    end.held = std::move(ended.held);
    end.usage += turn.usage;
    if (!ended.flushed && turn.status != turn_status::failed && turn.status != turn_status::interrupted) {
      // A write the turn did not wait for failed: what it held belongs after it.
      end.held.clear();
      turn = {turn_status::failed, ended.flushed.error().describe(), {}};
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
    log->turn_floor = log->written;  // its inputs had their answer
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
    std::vector<store::interaction_row> again_pending;  // a takeover's, read under the lease
    if (!takeover && !snap->pending_interactions.empty()) co_return last;  // waiting for a human: inputs wait too
    if (!takeover && !sess.continuation_pending && snap->pending_inputs.empty()) co_return last;

    const auto busy = [](const error& e) { return drain_outcome{drain_status::busy, std::nullopt, e.describe()}; };
    auto log = std::make_shared<execution_log>();
    log->session = s;
    log->control = control;
    // When the lease expires unless renewed: the heartbeat renews it, and the
    // execution's writes may be retried until then.
    log->held_until = std::make_shared<time_ms>(0);
    if (takeover) {  // a fresh execution claims the lease in the commit that starts it
      auto lease = co_await store_.claim_lease(s, node_.owner(), options_.lease_ttl_ms);
      if (!lease) co_return lease.error() == store::store_errc::lease_held ? busy(lease.error()) : fail(lease.error());
      *log->held_until = lease->expires_at;
      // Between the read and the claim another node may have recovered the
      // execution and finished it (releasing the lease). Under the lease the
      // open execution cannot change: read it again.
      auto again = co_await store_.snapshot(s);
      if (!again) co_return fail(again.error());
      if (again->session.open_execution != sess.open_execution) {
        auto released = co_await store_.release_lease(s, node_.owner());
        if (!released) co_return fail(released.error());
        continue;
      }
      log->written = again->session.last_seq;
      again_pending = std::move(again->pending_interactions);
    }

    auto start = sess.continuation_pending ? turn_start::continuation : turn_start::inputs;
    std::vector<promoted_input> first_inputs;
    if (takeover) {
      const execution_id exe = *sess.open_execution;
      log->execution = exe;
      auto attempts = co_await store_.bump_attempts(s, node_.owner());
      if (!attempts) co_return fail(attempts.error());
      // A turn that had asked a person when its node died (the question
      // recorded, the end of its turn not): its question stays open, and
      // the call that asked it is settled by the answer, not cut off here.
      std::set<call_id> asked;
      for (const auto& i : again_pending) if (i.call) asked.insert(*i.call);
      const bool was_waiting = !again_pending.empty();
      auto leftovers = co_await settle_leftovers(s, exe, std::string("interrupted by restart"), step_state::as_stored,
                                                 std::move(asked));
      if (!leftovers) co_return fail(leftovers.error());
      auto events = std::move(leftovers.value());
      if (attempts.value() > options_.attempt_budget) {
        events.emplace_back(
            model::execution_finished{exe,
                                      model::outcome::failed,
                                      std::string("attempt_budget"),
                                      "gave up after " + std::to_string(attempts.value() - 1) + " recovery attempts",
                                      {}});
        auto r = co_await append_terminal(std::move(events), log);
        if (!r) co_return fail(r.error());
        metrics::executions_total().with("failed").inc();
        last = {drain_status::failed, exe, std::string("attempt budget exhausted")};
        continue;
      }
      if (was_waiting) {
        // It ends as it would have: waiting for the answer, which starts the
        // continuation (the notice tells it of any other call cut off).
        const bool cut = !events.empty();
        events.emplace_back(model::execution_recovered{exe, node_.owner(), attempts.value()});
        if (cut) events.emplace_back(model::synthetic{std::string(restart_notice), std::string("restart")});
        events.emplace_back(model::execution_finished{exe, model::outcome::waiting, {}, {}, {}});
        auto r = co_await append_terminal(std::move(events), log);
        if (!r) co_return fail(r.error());
        metrics::executions_total().with("waiting").inc();
        last = {drain_status::waiting, exe, {}};
        continue;
      }
      events.emplace_back(model::execution_recovered{exe, node_.owner(), attempts.value()});
      events.emplace_back(model::synthetic{std::string(restart_notice), std::string("restart")});
      store::append_request req{s, std::move(events), lease_fence(), 0};
      auto r = co_await store_.append(std::move(req));
      if (!r) co_return fail(r.error());
      log->written = r->last_seq;
      start = turn_start::continuation;
    } else {
      // One commit starts the execution and promotes its first turn's inputs
      // (later ones join at the next boundary). A continuation promotes
      // nothing here: it finishes its interrupted turn first.
      const execution_id exe = execution_id::generate();
      log->execution = exe;
      auto f = lease_fence();
      f.no_open_execution = true;
      f.claim_ttl_ms = options_.lease_ttl_ms;
      // A continuation is owed once: the log must still be as read, or
      // another node may have run it between the read and this commit (its
      // execution already finished, so neither the lease nor the open
      // execution would stop this one). Inputs need no such check: a
      // promotion of an input no longer pending is refused.
      if (start == turn_start::continuation) f.last_seq = sess.last_seq;
      store::append_request req;
      req.session = s;
      req.fence = f;
      req.events.emplace_back(model::execution_started{exe, node_.owner(), runtime_.name(sess.profile), runtime_.model(sess.profile)});
      std::vector<store::input_row> chosen;
      if (start != turn_start::continuation) chosen = choose_inputs(snap->pending_inputs, model::delivery::queue);
      for (const auto& in : chosen) req.events.emplace_back(model::input_promoted{in.id, exe});
      // The store grants the lease at its own now, no earlier than this one
      // when both read the same clock: a lower bound of its expiry.
      const time_ms asked = clock_.now();
      auto r = co_await store_.append(std::move(req));
      if (!r && r.error() == store::store_errc::fence_failed && start == turn_start::continuation) continue;  // read again
      if (!r) co_return r.error() == store::store_errc::lease_held ? busy(r.error()) : fail(r.error());
      *log->held_until = asked + options_.lease_ttl_ms;
      log->written = r->last_seq;
      log->turn_floor = r->events.front().seq;
      for (std::size_t i = 0; i < chosen.size(); ++i)
        first_inputs.push_back(promoted_input{chosen[i].id, r->events[i + 1].seq, chosen[i].prompt});
    }
    const execution_id exe = log->execution;

    auto execution = run_execution(log, start, std::move(first_inputs), snap->session);
    auto renewals = heartbeat(s, control, log->held_until);
    auto ran = co_await (std::move(execution) || std::move(renewals));
    auto end = std::get<0>(std::move(ran));

    const auto why = control->reason();
    if (why == stop_reason::lease_lost || why == stop_reason::shutdown) {
      // Not ours to finish: the next owner (or our next start) recovers it.
      // Another node may run its next turn: this node's agent state for the
      // session is stale.
      if (why == stop_reason::lease_lost) co_await runtime_.forget(s);
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
    if (end.outcome == model::outcome::failed && log->store_failed) {
      // Without them the inputs would never be answered (see Giving inputs back).
      auto back = co_await give_back(log, holds_answer(events));
      if (back) {
        for (auto& p : back->events) events.push_back(std::move(p));
        if (!back->kept.empty())
          end.error += "; not given back again (given back " + std::to_string(options_.input_return_limit) +
                       " times already): " + back->kept;
      } else {
        spdlog::warn("session {}: cannot tell which inputs its failed execution left unanswered ({})", s.str(),
                     back.error().describe());
      }
    }
    events.emplace_back(model::execution_finished{exe, end.outcome, end.reason, end.error, end.usage});
    auto r = co_await append_terminal(std::move(events), log);
    if (!r) {
      if (r.error() == store::store_errc::fence_failed) {
        co_await runtime_.forget(s);
        co_return drain_outcome{drain_status::abandoned, exe, std::string("lease lost before the terminal event")};
      }
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
