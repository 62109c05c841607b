#include "session/service.h"

#include <algorithm>
#include <mutex>
#include <set>

#include <boost/asio/post.hpp>
#include <boost/json/parse.hpp>

#include <sqlite3.h>

#include "session/fixture.h"
#include "store/forwarding_store.h"

namespace tether::testing {
namespace {

using model::delivery;
using session::start_mode;

class recovery_test : public session_fixture {
 protected:
  // A session left as a crashed node leaves it: an execution started, a step
  // and a tool call in flight, and the lease of `owner` (fresh for ttl_ms).
  session_id abandoned(const std::string& owner, time_ms ttl_ms = 30'000) {
    const auto s = session_id::generate();
    const auto in = input_id::generate();
    const auto exe = execution_id::generate();
    auto created = run(store_->append(store::single_event(s, model::session_created{})));
    EXPECT_TRUE(created) << created.error().describe();
    EXPECT_TRUE(run(store_->append(store::single_event(s, model::input_admitted{in, "work", delivery::steer}))));
    EXPECT_TRUE(run(store_->claim_lease(s, owner, ttl_ms)));
    store::fence f;
    f.lease_owner = owner;
    store::append_request req;
    req.session = s;
    req.fence = f;
    req.events.emplace_back(model::execution_started{exe, owner});
    req.events.emplace_back(model::input_promoted{in, exe});
    req.events.emplace_back(model::step_started{exe, 1});
    req.events.emplace_back(
        model::tool_called{call_id::generate(), std::string("bash"), boost::json::object{}, model::tool_kind::local});
    auto r = run(store_->append(std::move(req)));
    EXPECT_TRUE(r) << r.error().describe();
    return s;
  }

  // The process died after an input's admission committed (its 202 went
  // out) and before its drain started: the input is pending, nothing is open.
  session_id stranded_by_a_crash(const input_id& in, bool resume = true) {
    const auto s = session_id::generate();
    EXPECT_TRUE(run(store_->append(store::single_event(s, model::session_created{}))));
    EXPECT_TRUE(run(store_->append(
        store::single_event(s, model::input_admitted{in, "Reply with exactly: ok", delivery::queue, resume}))));
    return s;
  }

  // A question asked by an execution that finished waiting, then answered:
  // the session owes a continuation and nothing has started it yet.
  session_id answered_question() {
    const auto s = session_id::generate();
    const auto in = input_id::generate();
    const auto exe = execution_id::generate();
    const auto question = interaction_id::generate();
    EXPECT_TRUE(run(store_->append(store::single_event(s, model::session_created{}))));
    EXPECT_TRUE(run(store_->append(store::single_event(s, model::input_admitted{in, "Ask: colour?", delivery::steer}))));
    store::append_request req;
    req.session = s;
    req.events.emplace_back(model::execution_started{exe, "dead/1"});
    req.events.emplace_back(model::input_promoted{in, exe});
    req.events.emplace_back(model::interaction_requested{question, {}, "question", boost::json::object{}});
    req.events.emplace_back(model::execution_finished{exe, model::outcome::waiting});
    EXPECT_TRUE(run(store_->append(std::move(req))));
    EXPECT_TRUE(run(store_->append(
        store::single_event(s, model::interaction_resolved{question, "answered", boost::json::object{}}))));
    return s;
  }

  // One resume of `s` by a second node ("n2") that reaches the store through
  // `via`, then that node's stop.
  result<session::drain_outcome> resume_on_another_node(store::event_store& via, const session_id& s) {
    session::session_service other(io_.get_executor(), via, runtime_, clock_, session::make_node_identity("n2"),
                                   test_options());
    auto r = run(other.resume(s));
    run(other.stop());
    return r;
  }

  session::recovery_report scan() {
    auto r = run(service_->recover());
    EXPECT_TRUE(r) << r.error().describe();
    return r ? *r : session::recovery_report{};
  }
};

TEST_F(recovery_test, recovery_continues_each_abandoned_execution_exactly_once_per_scan) {
  std::vector<session_id> all;
  for (int i = 0; i < 3; ++i) all.push_back(abandoned("dead/1"));
  clock_.advance(60'000);
  make_service();
  const auto report = scan();
  EXPECT_EQ(report.claimed, 3U);
  for (const auto& s : all) {
    eventually([&] { return count(s, "execution.finished") == 1; });
    idle(s);
    EXPECT_EQ(count(s, "execution.recovered"), 1U);
    EXPECT_EQ(count(s, "execution.started"), 1U);  // continued, not restarted
  }
  EXPECT_EQ(runtime_.turns(), 3);
  for (const auto& ctx : runtime_.contexts()) EXPECT_EQ(ctx.start, session::turn_start::continuation);
  EXPECT_EQ(scan().claimed, 0U);  // nothing left to recover
}

TEST_F(recovery_test, recovery_fails_in_flight_tool_calls_without_replaying_them_and_appends_a_restart_notice) {
  const auto s = abandoned("dead/1");
  clock_.advance(60'000);
  make_service();
  scan();
  eventually([&] { return count(s, "execution.finished") == 1; });
  idle(s);
  std::string tool_error;
  bool notice = false;
  for (const auto& e : events(s)) {
    if (const auto* t = e.as<model::tool_failed>()) tool_error = t->error;
    if (const auto* n = e.as<model::synthetic>()) notice = n->reason == "restart";
  }
  EXPECT_EQ(tool_error, "interrupted by restart");
  EXPECT_TRUE(notice);
  EXPECT_EQ(count(s, "tool.called"), 1U);  // the side effect was not replayed
  EXPECT_EQ(count(s, "step.failed"), 1U);
  // A copy: contexts() returns by value, so a reference into its result
  // would dangle at the end of the statement.
  const auto contexts = runtime_.contexts();
  ASSERT_EQ(contexts.size(), 1U);
  const auto& transcript = contexts[0].transcript;
  ASSERT_FALSE(transcript.empty());
  EXPECT_EQ(transcript.back().role, store::message_role::notice);
}

TEST_F(recovery_test, an_execution_of_our_previous_incarnation_is_recovered_without_waiting_for_expiry) {
  const auto s = abandoned("n1/previous");  // same node name, fresh lease
  make_service(test_options(), "n1");
  EXPECT_EQ(scan().claimed, 1U);
  eventually([&] { return count(s, "execution.finished") == 1; });
}

TEST_F(recovery_test, recovery_gives_up_with_failed_past_the_attempt_budget) {
  auto opts = test_options();
  opts.attempt_budget = 2;
  const auto s = abandoned("dead/1");
  for (int i = 0; i < 2; ++i) ASSERT_TRUE(run(store_->bump_attempts(s, "dead/1")));
  clock_.advance(60'000);
  make_service(opts);
  scan();
  eventually([&] { return count(s, "execution.finished") == 1; });
  idle(s);
  std::optional<model::execution_finished> fin;
  for (const auto& e : events(s))
    if (const auto* f = e.as<model::execution_finished>()) fin = *f;
  ASSERT_TRUE(fin);
  EXPECT_EQ(fin->outcome, model::outcome::failed);
  EXPECT_EQ(fin->reason, "attempt_budget");
  EXPECT_EQ(runtime_.turns(), 0);
}

TEST_F(recovery_test, the_default_attempt_budget_is_ten_recoveries) {
  // Nine recoveries already: the tenth runs the turn. Ten: the eleventh gives up.
  const auto tenth = abandoned("dead/1");
  const auto eleventh = abandoned("dead/1");
  for (int i = 0; i < 9; ++i) ASSERT_TRUE(run(store_->bump_attempts(tenth, "dead/1")));
  for (int i = 0; i < 10; ++i) ASSERT_TRUE(run(store_->bump_attempts(eleventh, "dead/1")));
  clock_.advance(60'000);
  make_service(test_options());  // the attempt budget as shipped
  scan();
  ASSERT_TRUE(eventually([&] { return count(tenth, "execution.finished") == 1; }));
  ASSERT_TRUE(eventually([&] { return count(eleventh, "execution.finished") == 1; }));
  idle(tenth);
  idle(eleventh);
  const auto finished = [&](const session_id& s) {
    std::optional<model::execution_finished> fin;
    for (const auto& e : events(s))
      if (const auto* f = e.as<model::execution_finished>()) fin = *f;
    return fin;
  };
  ASSERT_TRUE(finished(tenth));
  EXPECT_EQ(finished(tenth)->outcome, model::outcome::succeeded);
  EXPECT_EQ(count(tenth, "execution.recovered"), 1U);
  ASSERT_TRUE(finished(eleventh));
  EXPECT_EQ(finished(eleventh)->outcome, model::outcome::failed);
  EXPECT_EQ(finished(eleventh)->reason, "attempt_budget");
  EXPECT_EQ(runtime_.turns(), 1);
}

TEST_F(recovery_test, recovery_never_touches_a_session_with_a_fresh_foreign_lease) {
  const auto s = abandoned("other/1", 120'000);
  clock_.advance(60'000);  // still fresh
  const auto before = events(s).size();
  make_service();
  const auto report = scan();
  EXPECT_EQ(report.claimed, 0U);
  idle(s);
  EXPECT_EQ(events(s).size(), before);
  auto row = run(store_->get_session(s));
  ASSERT_TRUE(row);
  ASSERT_TRUE(row->lease);
  EXPECT_EQ(row->lease->owner, "other/1");
}

TEST_F(recovery_test, an_undecodable_session_is_quarantined_without_blocking_the_others) {
  const auto bad = abandoned("dead/1");
  const auto good1 = abandoned("dead/1");
  const auto good2 = abandoned("dead/1");
  {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open((dir_ / "tether.db").string().c_str(), &db), SQLITE_OK);
    const std::string sql =
        "UPDATE events SET type = 'bogus.type' WHERE session = (SELECT key FROM sessions WHERE id = '" + bad.str() +
        "') AND seq = 2";
    EXPECT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr), SQLITE_OK);
    sqlite3_close(db);
  }
  clock_.advance(60'000);
  make_service();
  const auto report = scan();
  EXPECT_EQ(report.quarantined, 1U);
  EXPECT_EQ(report.claimed, 2U);
  for (const auto& s : {good1, good2}) eventually([&] { return count(s, "execution.finished") == 1; });
  auto row = run(store_->get_session(bad));
  ASSERT_TRUE(row);
  EXPECT_TRUE(row->quarantined);
  EXPECT_EQ(scan().quarantined, 0U);  // set aside: not listed again
}

TEST_F(recovery_test, a_scan_pages_through_abandoned_sessions_in_bounded_batches) {
  auto opts = test_options();
  opts.recovery_batch = 2;
  opts.recovery_concurrency = 2;
  std::vector<session_id> all;
  for (int i = 0; i < 5; ++i) all.push_back(abandoned("dead/1"));
  clock_.advance(60'000);
  // A page never holds more than the batch size.
  auto page = run(store_->list_abandoned("n1", "n1/x", std::nullopt, 2));
  ASSERT_TRUE(page);
  EXPECT_EQ(page->size(), 2U);
  make_service(opts);
  const auto report = scan();
  EXPECT_EQ(report.examined, 5U);
  EXPECT_EQ(report.claimed, 5U);
  for (const auto& s : all) eventually([&] { return count(s, "execution.finished") == 1; });
}

// Counts how many sessions a scan checks at once: a session's log reads
// before its lease is claimed are the scan's (recovery.cpp). Overlap must not
// depend on how the OS schedules the io threads, so the first checks wait at
// a gate until `expected` of them are in flight (at most 10 s of wall time: a
// scan that never gets that wide fails the count instead of hanging); after
// that each check still yields a few times so that a wider scan would show.
class overlap_counting_store final : public store::forwarding_store {
 public:
  overlap_counting_store(store::event_store& inner, std::size_t expected)
      : forwarding_store(inner), expected_(expected) {}
  // The service's sessions run on strands of the fixture's threads: the counts are shared.
  store::task<result<store::event_page>> read(session_id s, event_seq after, std::size_t limit) override {
    bool checking = false;
    {
      const std::lock_guard lock(mutex_);
      checking = !claimed_.contains(s);
      if (checking) widest_ = std::max(widest_, ++in_flight_);
    }
    if (checking) co_await gate();
    for (int i = 0; i < 5; ++i) co_await asio::post(co_await asio::this_coro::executor, asio::use_awaitable);
    auto page = co_await forwarding_store::read(s, after, limit);
    if (checking) {
      const std::lock_guard lock(mutex_);
      --in_flight_;
    }
    co_return page;
  }
  store::task<result<store::lease>> claim_lease(session_id s, std::string owner, time_ms ttl_ms) override {
    {
      const std::lock_guard lock(mutex_);
      claimed_.insert(s);
    }
    return forwarding_store::claim_lease(std::move(s), std::move(owner), ttl_ms);
  }
  [[nodiscard]] std::size_t widest() const {
    const std::lock_guard lock(mutex_);
    return widest_;
  }

 private:
  asio::awaitable<void> gate() {
    asio::steady_timer tick(co_await asio::this_coro::executor);
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (std::chrono::steady_clock::now() < until) {
      {
        const std::lock_guard lock(mutex_);
        if (widest_ >= expected_) co_return;
      }
      tick.expires_after(std::chrono::milliseconds(1));
      co_await tick.async_wait(asio::use_awaitable);
    }
  }

  const std::size_t expected_;
  mutable std::mutex mutex_;
  std::set<session_id> claimed_;
  std::size_t in_flight_ = 0;
  std::size_t widest_ = 0;
};

TEST_F(recovery_test, a_scan_checks_at_most_recovery_concurrency_sessions_at_once) {
  // Six sessions a crashed node left, scanned `width` at a time: as wide as allowed, never wider.
  for (const std::size_t width : {std::size_t{1}, std::size_t{3}}) {
    std::vector<session_id> left;
    for (int i = 0; i < 6; ++i) left.push_back(abandoned("dead/" + std::to_string(width)));
    clock_.advance(60'000);
    overlap_counting_store counting(*store_, width);
    auto opts = test_options();
    opts.recovery_concurrency = width;
    service_ = std::make_unique<session::session_service>(io_.get_executor(), counting, runtime_, clock_,
                                                          session::make_node_identity("n1"), opts);
    const auto report = scan();
    EXPECT_EQ(report.claimed, 6U);
    EXPECT_EQ(counting.widest(), width);
    for (const auto& s : left) eventually([&] { return count(s, "execution.finished") == 1; });
    stop_service();  // before `counting` goes
  }
}

TEST_F(recovery_test, a_clean_stop_expires_our_leases_and_the_next_start_continues_the_execution) {
  make_service();
  const auto s = new_session();
  runtime_.script({hang()});
  admit(s, "long");
  eventually([&] { return runtime_.turns() == 1; });
  stop_service();
  auto row = run(store_->get_session(s));
  ASSERT_TRUE(row);
  ASSERT_TRUE(row->lease);
  EXPECT_LE(row->lease->expires_at, clock_.now());
  EXPECT_EQ(count(s, "execution.finished"), 0U);  // shutdown writes no terminal event
  make_service();
  auto report = run(service_->start());
  ASSERT_TRUE(report);
  EXPECT_EQ(report->claimed, 1U);
  eventually([&] { return count(s, "execution.finished") == 1; });
  EXPECT_EQ(count(s, "execution.recovered"), 1U);
}

TEST_F(recovery_test, pending_inputs_survive_a_restart_untouched) {
  make_service();
  const auto s = new_session();
  admit(s, "keep me", delivery::queue, start_mode::record_only);
  stop_service();
  close_store();
  open_store();
  make_service();
  ASSERT_TRUE(run(service_->start()));
  auto pending = run(store_->pending_inputs(s));
  ASSERT_TRUE(pending);
  ASSERT_EQ(pending->size(), 1U);
  EXPECT_EQ((*pending)[0].prompt, "keep me");
}

TEST_F(recovery_test, an_acknowledged_input_that_never_started_runs_after_the_restart) {
  const auto in = input_id::generate();
  const auto s = stranded_by_a_crash(in);
  make_service();
  auto report = run(service_->start());
  ASSERT_TRUE(report) << report.error().describe();
  EXPECT_EQ(report->woken, 1U);
  EXPECT_EQ(report->claimed, 0U);  // there was no execution to take over
  eventually([&] { return count(s, "execution.finished") == 1; });
  idle(s);
  auto row = run(store_->get_input(in));
  ASSERT_TRUE(row);
  EXPECT_EQ(row->status, store::input_status::promoted);
  EXPECT_EQ(runtime_.turns(), 1);
  EXPECT_EQ(count(s, "synthetic"), 0U);  // nothing was interrupted: no restart notice
  EXPECT_EQ(scan().woken, 0U);           // nothing is left
}

// The node died after its turn asked a person (interaction.requested
// committed) and before the turn's end was written. The takeover ends the
// execution waiting, as the turn would have: the question stays open, the
// call that asked it is not cut off, and the answer, given after, starts
// the continuation.
TEST_F(recovery_test, a_question_asked_just_before_a_crash_still_waits_for_its_answer_after_the_restart) {
  const auto s = session_id::generate();
  const auto in = input_id::generate();
  const auto exe = execution_id::generate();
  const auto asking = call_id::generate();
  const auto other = call_id::generate();
  const auto question = interaction_id::generate();
  ASSERT_TRUE(run(store_->append(store::single_event(s, model::session_created{}))));
  ASSERT_TRUE(run(store_->append(store::single_event(s, model::input_admitted{in, "Ask: colour?", delivery::steer}))));
  ASSERT_TRUE(run(store_->claim_lease(s, "dead/1", 30'000)));
  store::fence f;
  f.lease_owner = "dead/1";
  store::append_request req;
  req.session = s;
  req.fence = f;
  req.events.emplace_back(model::execution_started{exe, "dead/1"});
  req.events.emplace_back(model::input_promoted{in, exe});
  req.events.emplace_back(model::step_started{exe, 1});
  req.events.emplace_back(
      model::tool_called{asking, std::string("ask_user"), boost::json::object{}, model::tool_kind::local});
  req.events.emplace_back(
      model::tool_called{other, std::string("bash"), boost::json::object{}, model::tool_kind::local});
  req.events.emplace_back(model::step_ended{"tool_calls", {}});
  req.events.emplace_back(model::interaction_requested{question, asking, "question", boost::json::object{}});
  ASSERT_TRUE(run(store_->append(std::move(req))));
  clock_.advance(60'000);

  make_service();
  auto report = run(service_->start());
  ASSERT_TRUE(report) << report.error().describe();
  EXPECT_EQ(report->claimed, 1U);
  eventually([&] { return count(s, "execution.finished") == 1; });
  idle(s);
  auto x = run(store_->get_execution(exe));
  ASSERT_TRUE(x);
  ASSERT_TRUE(x->outcome);
  EXPECT_EQ(*x->outcome, model::outcome::waiting);
  EXPECT_EQ(runtime_.turns(), 0);                  // no turn ran: it waits for the person
  EXPECT_EQ(count(s, "tool.failed"), 1U);          // the bash call was cut off, the question's call not
  EXPECT_EQ(count(s, "synthetic"), 1U);            // and the continuation is told so
  auto pending = run(store_->pending_interactions(s));
  ASSERT_TRUE(pending);
  ASSERT_EQ(pending->size(), 1U);
  EXPECT_EQ((*pending)[0].id, question);
  EXPECT_EQ(scan().claimed, 0U);  // nothing is left open

  ASSERT_TRUE(run(service_->answer(question, boost::json::parse(R"({"choice":"red"})"))));
  eventually([&] { return count(s, "execution.finished") == 2; });
  idle(s);
  EXPECT_EQ(runtime_.turns(), 1);  // the continuation
  EXPECT_EQ(count(s, "tool.failed"), 1U);
}

TEST_F(recovery_test, a_question_answered_just_before_a_crash_continues_its_turn_after_the_restart) {
  // The answer committed (its 200 went out), then the process died before the
  // continuation's execution started.
  const auto s = answered_question();
  make_service();
  auto report = run(service_->start());
  ASSERT_TRUE(report) << report.error().describe();
  EXPECT_EQ(report->woken, 1U);
  eventually([&] { return count(s, "execution.finished") == 2; });
  idle(s);
  EXPECT_EQ(count(s, "execution.started"), 2U);
  EXPECT_EQ(runtime_.turns(), 1);
  EXPECT_EQ(scan().woken, 0U);  // continued: nothing is left
}

// A store on which another node runs a whole continuation (started and
// finished, its lease released) just before this node's execution.started
// for the same continuation commits: the race of two nodes both woken by
// one answer, where the second read the session before the first started.
class continuation_taken_store final : public store::forwarding_store {
 public:
  using forwarding_store::forwarding_store;

  store::task<result<store::append_result>> append(store::append_request req) override {
    const bool continuation_start = !req.events.empty() && req.events.size() == 1 &&
                                    std::holds_alternative<model::execution_started>(req.events.front());
    if (continuation_start && !raced_) {
      raced_ = true;
      const auto other = execution_id::generate();
      store::fence f;
      f.lease_owner = "other-node/1";
      f.no_open_execution = true;
      f.claim_ttl_ms = 60'000;
      // Named, not braced in the co_await (g++ 12 destroys those twice).
      model::payload start_payload = model::execution_started{other, "other-node/1"};
      auto start = store::single_event(req.session, std::move(start_payload), f);
      auto started = co_await inner_->append(std::move(start));
      if (!started) co_return started.error();
      store::fence done;
      done.lease_owner = "other-node/1";
      done.release_lease = true;
      model::payload end_payload = model::execution_finished{other, model::outcome::succeeded};
      auto end = store::single_event(req.session, std::move(end_payload), done);
      auto finished = co_await inner_->append(std::move(end));
      if (!finished) co_return finished.error();
    }
    co_return co_await inner_->append(std::move(req));
  }
  [[nodiscard]] bool raced() const { return raced_; }

 private:
  bool raced_ = false;
};

TEST_F(recovery_test, a_continuation_another_node_ran_meanwhile_is_not_run_again) {
  const auto s = answered_question();

  continuation_taken_store racing(*store_);
  auto r = resume_on_another_node(racing, s);
  ASSERT_TRUE(racing.raced()) << "the other node's continuation went in first";
  ASSERT_TRUE(r) << r.error().describe();
  EXPECT_EQ(count(s, "execution.started"), 2U) << "the question's run and the other node's continuation only";
  EXPECT_EQ(runtime_.turns(), 0) << "this node ran nothing";
}

// Just before this node's claim of an abandoned execution's lease, another
// node recovers that execution and runs it to its end (releasing the lease).
class takeover_taken_store final : public store::forwarding_store {
 public:
  using forwarding_store::forwarding_store;

  store::task<result<store::lease>> claim_lease(session_id s, std::string owner, time_ms ttl_ms) override {
    if (!raced_) {
      raced_ = true;
      auto theirs = co_await inner_->claim_lease(s, "other-node/1", 60'000);
      if (!theirs) co_return theirs.error();
      auto snap = co_await inner_->snapshot(s);
      if (!snap || !snap->session.open_execution) co_return make_error(store::store_errc::not_found, "no open execution");
      const auto exe = *snap->session.open_execution;
      store::fence done;
      done.lease_owner = "other-node/1";
      done.release_lease = true;
      store::append_request req;
      req.session = s;
      req.fence = done;
      req.events.emplace_back(model::execution_recovered{exe, "other-node/1", 1});
      req.events.emplace_back(model::execution_finished{exe, model::outcome::succeeded});
      auto finished = co_await inner_->append(std::move(req));
      if (!finished) co_return finished.error();
    }
    co_return co_await inner_->claim_lease(std::move(s), std::move(owner), ttl_ms);
  }
  [[nodiscard]] bool raced() const { return raced_; }

 private:
  bool raced_ = false;
};

TEST_F(recovery_test, an_execution_another_node_recovered_meanwhile_is_not_recovered_again) {
  const auto s = abandoned("dead/1");
  clock_.advance(60'000);
  takeover_taken_store racing(*store_);
  auto r = resume_on_another_node(racing, s);
  ASSERT_TRUE(racing.raced()) << "the other node's recovery went in first";
  ASSERT_TRUE(r) << r.error().describe();
  EXPECT_EQ(r->status, session::drain_status::idle) << r->detail;  // not an error: nothing was owed
  EXPECT_EQ(count(s, "execution.recovered"), 1U) << "the other node's only";
  EXPECT_EQ(count(s, "execution.finished"), 1U);
  EXPECT_EQ(runtime_.turns(), 0) << "this node ran nothing";
  // It let go of the lease it claimed for nothing: a third node may run the session's next work at once.
  EXPECT_TRUE(run(store_->claim_lease(s, "third-node/1", 30'000)));
}

TEST_F(recovery_test, an_input_recorded_without_resume_stays_pending_across_restarts) {
  const auto in = input_id::generate();
  const auto s = stranded_by_a_crash(in, /*resume=*/false);
  make_service();
  auto report = run(service_->start());
  ASSERT_TRUE(report);
  EXPECT_EQ(report->woken, 0U);
  EXPECT_EQ(scan().woken, 0U);
  idle(s);
  EXPECT_EQ(runtime_.turns(), 0);
  EXPECT_EQ(count(s, "execution.started"), 0U);
}

TEST_F(recovery_test, the_periodic_scan_wakes_a_stranded_session_without_a_restart) {
  auto opts = test_options();
  opts.recovery_interval_ms = 20;
  make_service(opts);
  ASSERT_TRUE(run(service_->start()));
  // Written behind the running service's back, as another process's crash
  // would leave it in a shared store.
  const auto in = input_id::generate();
  const auto s = stranded_by_a_crash(in);
  eventually([&] { return count(s, "execution.finished") == 1; });
  idle(s);
  EXPECT_EQ(count(s, "input.promoted"), 1U);
  EXPECT_EQ(runtime_.turns(), 1);
}

TEST_F(recovery_test, an_input_a_failed_execution_gave_back_runs_after_a_restart) {
  // The process died just after the commit that failed an execution and
  // gave its input back, before its drain started the next one. The input
  // was recorded without a run of its own: a resume promoted it.
  const auto in = input_id::generate();
  const auto s = stranded_by_a_crash(in, /*resume=*/false);
  const auto failed = execution_id::generate();
  store::append_request req;
  req.session = s;
  req.events.emplace_back(model::execution_started{failed, "dead/1"});
  req.events.emplace_back(model::input_promoted{in, failed});
  req.events.emplace_back(model::input_returned{in, failed, "storage_failed", 1});
  req.events.emplace_back(model::execution_finished{failed, model::outcome::failed});
  ASSERT_TRUE(run(store_->append(std::move(req))));

  make_service();
  auto report = run(service_->start());
  ASSERT_TRUE(report) << report.error().describe();
  EXPECT_EQ(report->woken, 1U);
  ASSERT_TRUE(eventually([&] { return count(s, "execution.finished") == 2; }));
  idle(s);
  ASSERT_EQ(runtime_.contexts().size(), 1U);
  ASSERT_EQ(runtime_.contexts()[0].promoted.size(), 1U);
  EXPECT_EQ(runtime_.contexts()[0].promoted[0].id, in);
  auto row = run(store_->get_input(in));
  ASSERT_TRUE(row);
  EXPECT_EQ(row->status, store::input_status::promoted);
  EXPECT_NE(row->execution, failed);
  EXPECT_EQ(count(s, "input.promoted"), 2U);
}

TEST_F(recovery_test, a_stop_keeps_pending_inputs_pending_across_a_restart) {
  make_service();
  const auto s = new_session();
  runtime_.script({hang()});
  admit(s, "long");
  eventually([&] { return runtime_.turns() == 1; });
  admit(s, "queued behind the stop", delivery::queue);
  ASSERT_TRUE(run(service_->interrupt(s)));
  eventually([&] { return count(s, "execution.finished") == 1; });
  idle(s);
  stop_service();
  make_service();
  auto report = run(service_->start());
  ASSERT_TRUE(report);
  EXPECT_EQ(report->woken, 0U);
  idle(s);
  EXPECT_EQ(runtime_.turns(), 1);
  auto pending = run(store_->pending_inputs(s));
  ASSERT_TRUE(pending);
  ASSERT_EQ(pending->size(), 1U);
  EXPECT_EQ((*pending)[0].prompt, "queued behind the stop");
}

// The store as a node of a cluster sees it: shared by other nodes.
class shared_store final : public store::forwarding_store {
 public:
  using forwarding_store::forwarding_store;
  [[nodiscard]] bool shared() const override { return true; }
};

TEST_F(recovery_test, on_a_shared_store_a_scan_leaves_a_fresh_admission_to_the_node_that_wrote_it) {
  // Another node admitted an input and is about to start its execution: the
  // scan of this node sees it pending with nothing open, in that window.
  shared_store shared(*store_);
  service_ = std::make_unique<session::session_service>(io_.get_executor(), shared, runtime_, clock_,
                                                        session::make_node_identity("n2"), test_options());
  const std::unique_ptr<void, std::function<void(void*)>> stops_first(this, [this](void*) { stop_service(); });
  ASSERT_TRUE(run(service_->start()));
  const auto s = stranded_by_a_crash(input_id::generate());
  clock_.advance(test_options().lease_ttl_ms - 1);
  auto fresh = run(service_->recover());
  ASSERT_TRUE(fresh) << fresh.error().describe();
  EXPECT_EQ(fresh->woken, 0U);
  EXPECT_EQ(fresh->left, 1U);
  idle(s);
  EXPECT_EQ(count(s, "execution.started"), 0U);
  EXPECT_EQ(runtime_.turns(), 0);

  // Quiet for a lease: its writer is gone, and this node runs it.
  clock_.advance(1);
  auto quiet = run(service_->recover());
  ASSERT_TRUE(quiet) << quiet.error().describe();
  EXPECT_EQ(quiet->woken, 1U);
  EXPECT_EQ(quiet->left, 0U);
  ASSERT_TRUE(eventually([&] { return count(s, "execution.finished") == 1; }));
  EXPECT_EQ(runtime_.turns(), 1);
}

TEST_F(recovery_test, stranded_sessions_are_woken_in_bounded_batches_each_once) {
  auto opts = test_options();
  opts.recovery_batch = 2;
  std::vector<session_id> all;
  for (int i = 0; i < 5; ++i) all.push_back(stranded_by_a_crash(input_id::generate()));
  make_service(opts);
  auto report = run(service_->start());
  ASSERT_TRUE(report);
  EXPECT_EQ(report->woken, 5U);
  for (const auto& s : all) {
    eventually([&] { return count(s, "execution.finished") == 1; });
    idle(s);
    EXPECT_EQ(count(s, "execution.started"), 1U);
  }
  EXPECT_EQ(runtime_.turns(), 5);
}

}  // namespace
}  // namespace tether::testing
