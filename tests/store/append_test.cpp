// The conformance suite: appends, fences, reads and the store's lifecycle,
// against every backend.
#include "store/event_store.h"

#include <fstream>
#include <future>
#include <thread>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include "backends.h"
#include "model/errors.h"

namespace tether::store::test {
namespace {

template <class F>
class appends : public store_test<F> {};
TYPED_TEST_SUITE(appends, backends, backend_names);

TYPED_TEST(appends, assigns_consecutive_seqs_without_gaps_and_survives_reopen) {
  this->open();
  const auto s = this->new_session();
  for (int i = 0; i < 5; ++i) {
    auto r = this->append(s, {notice("n" + std::to_string(2 * i)), notice("n" + std::to_string(2 * i + 1))});
    ASSERT_TRUE(r) << why(r);
    ASSERT_EQ(r->events.size(), 2U);
    EXPECT_EQ(r->events[0].seq.value, 2 + 2 * i);
    EXPECT_EQ(r->events[1].seq.value, 3 + 2 * i);
    EXPECT_EQ(r->last_seq.value, 3 + 2 * i);
  }
  this->reopen();
  const auto events = this->all_events(s);
  ASSERT_EQ(events.size(), 11U);
  for (std::size_t i = 0; i < events.size(); ++i) EXPECT_EQ(events[i].seq.value, static_cast<std::int64_t>(i + 1));
  EXPECT_EQ(this->last_seq(s), 11);
  auto next = this->append(s, {notice("after reopen")});
  ASSERT_TRUE(next) << why(next);
  EXPECT_EQ(next->last_seq.value, 12);
}

// A write is queued when it is called: awaiting later, or never, changes
// neither its order nor whether it happens (event_store.h).
TYPED_TEST(appends, writes_are_queued_when_called_so_a_dropped_or_late_await_keeps_their_order) {
  this->open();
  const auto s = this->new_session();
  auto late = this->store().append(append_request{s, {notice("first, awaited last")}, std::nullopt, 0});
  (void)this->store().append(append_request{s, {notice("second, never awaited")}, std::nullopt, 0});
  auto third = this->append(s, {notice("third, awaited at once")});
  ASSERT_TRUE(third) << why(third);
  EXPECT_EQ(third->events[0].seq.value, 4) << "the two earlier writes went first";
  auto first = this->run(std::move(late));
  ASSERT_TRUE(first) << why(first);
  EXPECT_EQ(first->events[0].seq.value, 2);
  const auto events = this->all_events(s);
  ASSERT_EQ(events.size(), 4U);
  ASSERT_NE(events[2].template as<model::synthetic>(), nullptr);
  EXPECT_EQ(events[2].template as<model::synthetic>()->text, "second, never awaited");
}

TYPED_TEST(appends, stored_events_read_back_with_ids_times_and_payloads) {
  this->open();
  const auto s = this->new_session("hello");
  auto r = this->append(s, {notice("explicit time")}, std::nullopt, 42);
  ASSERT_TRUE(r) << why(r);
  const auto events = this->all_events(s);
  ASSERT_EQ(events.size(), 2U);
  EXPECT_EQ(events[0].time, this->clock_.now()) << "time 0 means the store's clock";
  EXPECT_EQ(events[1].time, 42);
  EXPECT_EQ(events[1].id, r->events[0].id);
  EXPECT_FALSE(events[0].id.empty());
  EXPECT_NE(events[0].id, events[1].id);
  ASSERT_NE(events[0].template as<model::session_created>(), nullptr);
  EXPECT_EQ(events[0].template as<model::session_created>()->title, "hello");
  ASSERT_NE(events[1].template as<model::synthetic>(), nullptr);
  EXPECT_EQ(events[1].template as<model::synthetic>()->text, "explicit time");
}

TYPED_TEST(appends, append_to_an_unknown_session_is_unknown_session) {
  this->open();
  auto r = this->append(session_id::generate(), {notice("x")});
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error(), store_errc::unknown_session);
}

TYPED_TEST(appends, creating_an_existing_session_is_session_exists) {
  this->open();
  const auto s = this->new_session();
  auto r = this->append(s, {model::session_created{"again", "", ""}});
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error(), store_errc::session_exists);
  EXPECT_EQ(this->last_seq(s), 1);
}

TYPED_TEST(appends, a_sessions_metadata_is_kept_as_given_and_survives_a_reopen) {
  this->open();
  const auto s = session_id::generate();
  model::session_created created{"t", "", ""};
  created.metadata = boost::json::parse(R"({"ticket":"T-1","tags":["a","b"],"n":3})").as_object();
  ASSERT_TRUE(this->append(s, {created}));
  auto row = this->run(this->store().get_session(s));
  ASSERT_TRUE(row);
  EXPECT_EQ(row->metadata, created.metadata);
  this->reopen();
  row = this->run(this->store().get_session(s));
  ASSERT_TRUE(row);
  EXPECT_EQ(row->metadata, created.metadata);
  // A session created without metadata reads back an empty object.
  const auto plain = this->new_session();
  EXPECT_TRUE(this->run(this->store().get_session(plain))->metadata.empty());
}

TYPED_TEST(appends, ephemeral_payloads_are_rejected) {
  this->open();
  const auto s = this->new_session();
  auto r = this->append(s, {notice("kept out too"), model::text_delta{"partial"}});
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error(), store_errc::rejected);
  EXPECT_EQ(this->all_events(s).size(), 1U);
}

TYPED_TEST(appends, payloads_that_would_not_read_back_are_rejected_not_stored) {
  this->open();
  const auto s = this->new_session();
  auto bad_utf8 = this->append(s, {notice(std::string("bad \xff\xfe text"))});
  ASSERT_FALSE(bad_utf8);
  EXPECT_EQ(bad_utf8.error(), store_errc::rejected);
  auto empty_id = this->append(s, {admitted(input_id(), "no id")});
  ASSERT_FALSE(empty_id);
  EXPECT_EQ(empty_id.error(), store_errc::rejected);
  boost::json::value deep = nullptr;
  for (int i = 0; i < 1000; ++i) deep = boost::json::array{deep};
  auto too_deep = this->append(s, {model::tool_called{call_id::generate(), "read", deep, model::tool_kind::local}});
  ASSERT_FALSE(too_deep);
  EXPECT_EQ(too_deep.error(), store_errc::rejected);
  EXPECT_EQ(this->all_events(s).size(), 1U);
}

TYPED_TEST(appends, an_empty_request_is_rejected) {
  this->open();
  const auto s = this->new_session();
  auto r = this->append(s, {});
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error(), store_errc::rejected);
}

TYPED_TEST(appends, concurrent_appends_from_many_threads_are_group_committed) {
  // Slow commits (as on a real disk) give the others time to queue up.
  auto o = this->options();
  o.fail_commit = [] {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    return false;
  };
  this->open(std::move(o));
  constexpr int threads = 6;
  constexpr int per_thread = 40;
  std::vector<session_id> sessions;
  sessions.reserve(threads / 2);
  for (int t = 0; t < threads / 2; ++t) sessions.push_back(this->new_session());

  std::atomic<int> acknowledged{0};
  std::vector<std::thread> workers;
  workers.reserve(threads);
  for (int t = 0; t < threads; ++t) {
    workers.emplace_back([&, t] {
      auto& io = this->new_io();
      for (int i = 0; i < per_thread; ++i) {
        // Two sessions per worker pair: appends to one session race each other too.
        const auto& s = sessions[static_cast<std::size_t>(t / 2)];
        auto r = tether::test::run_sync(io, this->store().append(append_request{s, {notice("x")}, std::nullopt, 0}));
        if (r) ++acknowledged;
      }
    });
  }
  for (auto& w : workers) w.join();
  EXPECT_EQ(acknowledged.load(), threads * per_thread);
  for (int t = 0; t < threads; t += 2) {
    const auto events = this->all_events(sessions[static_cast<std::size_t>(t / 2)]);
    ASSERT_EQ(events.size(), static_cast<std::size_t>(1 + 2 * per_thread));
    for (std::size_t i = 0; i < events.size(); ++i) EXPECT_EQ(events[i].seq.value, static_cast<std::int64_t>(i + 1));
  }
  const auto stats = TypeParam::stats(this->store());
  EXPECT_GT(stats.largest_batch, 1U) << "no commit grouped two requests";
  EXPECT_LT(stats.commits, stats.requests);
}

TYPED_TEST(appends, a_rejected_request_does_not_affect_others_in_the_same_commit) {
  commit_gate gate;
  auto o = this->options();
  o.fail_commit = [&gate] {
    gate.pass();
    return false;
  };
  this->open(std::move(o));
  const auto s = this->new_session();
  const auto stats_before = TypeParam::stats(this->store());

  // Hold the writer at a commit, queue three requests behind it, release.
  gate.close();
  auto& io = this->new_io();
  std::optional<result<append_result>> blocker, good1, bad, good2;
  auto spawn = [&io](boost::asio::awaitable<result<append_result>> aw, std::optional<result<append_result>>* out) {
    boost::asio::co_spawn(
        io,
        [](boost::asio::awaitable<result<append_result>> a, std::optional<result<append_result>>* o)
            -> boost::asio::awaitable<void> { o->emplace(co_await std::move(a)); }(std::move(aw), out),
        boost::asio::detached);
  };
  spawn(this->store().append(append_request{s, {notice("blocker")}, std::nullopt, 0}), &blocker);
  std::thread runner([&io] { io.run(); });
  gate.wait_arrivals(1);
  spawn(this->store().append(append_request{s, {notice("good 1")}, std::nullopt, 0}), &good1);
  spawn(
      this->store().append(append_request{
          s, {notice("bad"), model::input_promoted{input_id::generate(), execution_id::generate()}}, std::nullopt, 0}),
      &bad);
  spawn(this->store().append(append_request{s, {notice("good 2")}, std::nullopt, 0}), &good2);
  std::this_thread::sleep_for(std::chrono::milliseconds(200));  // let the three reach the queue
  gate.open();
  runner.join();

  ASSERT_TRUE(blocker && good1 && bad && good2);
  ASSERT_TRUE(*good1) << why(*good1);
  ASSERT_TRUE(*good2) << why(*good2);
  ASSERT_FALSE(*bad);
  EXPECT_EQ(bad->error(), store_errc::rejected);
  EXPECT_EQ((*good1)->last_seq.value, 3);
  EXPECT_EQ((*good2)->last_seq.value, 4);
  const auto stats = TypeParam::stats(this->store());
  EXPECT_EQ(stats.commits - stats_before.commits, 2U) << "the blocker, then the three together";
  EXPECT_GE(stats.largest_batch, 3U);
  const auto events = this->all_events(s);
  ASSERT_EQ(events.size(), 4U);
  EXPECT_EQ(events[2].template as<model::synthetic>()->text, "good 1");
  EXPECT_EQ(events[3].template as<model::synthetic>()->text, "good 2");
}

template <class F>
class fences : public store_test<F> {};
TYPED_TEST_SUITE(fences, backends, backend_names);

TYPED_TEST(fences, a_lease_owned_by_someone_else_fails_the_fence_and_writes_nothing) {
  this->open();
  const auto s = this->new_session();
  ASSERT_TRUE(this->run(this->store().claim_lease(s, "node-b/1", 30'000)));
  auto r = this->append(s, {notice("a"), notice("b")}, fence{.lease_owner = "node-a/1"});
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error(), store_errc::fence_failed);
  EXPECT_EQ(this->all_events(s).size(), 1U);
  EXPECT_EQ(this->last_seq(s), 1);
}

TYPED_TEST(fences, an_expired_lease_fails_the_fence) {
  this->open();
  const auto s = this->new_session();
  ASSERT_TRUE(this->run(this->store().claim_lease(s, "node-a/1", 30'000)));
  auto ok_now = this->append(s, {notice("while fresh")}, fence{.lease_owner = "node-a/1"});
  ASSERT_TRUE(ok_now) << why(ok_now);
  this->clock_.advance(30'000);
  auto r = this->append(s, {notice("too late")}, fence{.lease_owner = "node-a/1"});
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error(), store_errc::fence_failed);
  EXPECT_EQ(this->last_seq(s), 2);
}

TYPED_TEST(fences, no_lease_at_all_fails_a_lease_fence) {
  this->open();
  const auto s = this->new_session();
  auto r = this->append(s, {notice("x")}, fence{.lease_owner = "node-a/1"});
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error(), store_errc::fence_failed);
}

TYPED_TEST(fences, a_stale_last_seq_fails_the_fence) {
  this->open();
  const auto s = this->new_session();
  auto first = this->append(s, {notice("x")}, fence{.last_seq = event_seq{1}});
  ASSERT_TRUE(first) << why(first);
  auto stale = this->append(s, {notice("y")}, fence{.last_seq = event_seq{1}});
  ASSERT_FALSE(stale);
  EXPECT_EQ(stale.error(), store_errc::fence_failed);
  EXPECT_EQ(this->last_seq(s), 2);
}

TYPED_TEST(fences, an_open_execution_fails_a_no_open_execution_fence) {
  this->open();
  const auto s = this->new_session();
  const auto e1 = execution_id::generate();
  auto first = this->append(s, {started(e1)}, fence{.no_open_execution = true});
  ASSERT_TRUE(first) << why(first);
  auto second = this->append(s, {started(execution_id::generate())}, fence{.no_open_execution = true});
  ASSERT_FALSE(second);
  EXPECT_EQ(second.error(), store_errc::fence_failed);
  auto row = this->run(this->store().get_session(s));
  ASSERT_TRUE(row);
  EXPECT_EQ(row->open_execution, e1);
  EXPECT_EQ(row->last_seq.value, 2);
}

template <class F>
class reads : public store_test<F> {};
TYPED_TEST_SUITE(reads, backends, backend_names);

TYPED_TEST(reads, pages_follow_after_and_limit_and_say_when_there_is_more) {
  this->open();
  const auto s = this->new_session();
  std::vector<model::payload> batch;
  batch.reserve(9);
  for (int i = 0; i < 9; ++i) batch.push_back(notice(std::to_string(i)));
  ASSERT_TRUE(this->append(s, std::move(batch)));  // seqs 2..10

  auto p1 = this->run(this->store().read(s, event_seq{0}, 4));
  ASSERT_TRUE(p1);
  ASSERT_EQ(p1->events.size(), 4U);
  EXPECT_EQ(p1->events.front().seq.value, 1);
  EXPECT_TRUE(p1->more);
  auto p2 = this->run(this->store().read(s, p1->events.back().seq, 4));
  ASSERT_TRUE(p2);
  ASSERT_EQ(p2->events.size(), 4U);
  EXPECT_EQ(p2->events.front().seq.value, 5);
  EXPECT_TRUE(p2->more);
  auto p3 = this->run(this->store().read(s, p2->events.back().seq, 4));
  ASSERT_TRUE(p3);
  ASSERT_EQ(p3->events.size(), 2U);
  EXPECT_EQ(p3->events.back().seq.value, 10);
  EXPECT_FALSE(p3->more);
  auto exact = this->run(this->store().read(s, event_seq{6}, 4));
  ASSERT_TRUE(exact);
  EXPECT_EQ(exact->events.size(), 4U);
  EXPECT_FALSE(exact->more);
  auto past = this->run(this->store().read(s, event_seq{10}, 4));
  ASSERT_TRUE(past);
  EXPECT_TRUE(past->events.empty());
  EXPECT_FALSE(past->more);
}

TYPED_TEST(reads, reading_an_unknown_session_is_unknown_session) {
  this->open();
  auto r = this->run(this->store().read(session_id::generate(), event_seq{0}, 10));
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error(), store_errc::unknown_session);
  auto g = this->run(this->store().get_session(session_id::generate()));
  ASSERT_FALSE(g);
  EXPECT_EQ(g.error(), store_errc::unknown_session);
  auto i = this->run(this->store().get_input(input_id::generate()));
  ASSERT_FALSE(i);
  EXPECT_EQ(i.error(), store_errc::not_found);
}

template <class F>
class lifecycle : public store_test<F> {};
TYPED_TEST_SUITE(lifecycle, backends, backend_names);

TYPED_TEST(lifecycle, calls_after_stop_are_closed) {
  this->open();
  const auto s = this->new_session();
  this->store().stop();
  this->store().stop();  // idempotent
  auto w = this->append(s, {notice("x")});
  ASSERT_FALSE(w);
  EXPECT_EQ(w.error(), store_errc::closed);
  auto r = this->run(this->store().read(s, event_seq{0}, 10));
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error(), store_errc::closed);
}

TYPED_TEST(lifecycle, stop_finishes_queued_writes_first) {
  this->open();
  const auto s = this->new_session();
  auto& io = this->new_io();
  std::vector<std::optional<result<append_result>>> out(50);
  for (auto& o : out) {
    boost::asio::co_spawn(
        io,
        [](boost::asio::awaitable<result<append_result>> a,
           std::optional<result<append_result>>* dst) -> boost::asio::awaitable<void> {
          dst->emplace(co_await std::move(a));
        }(this->store().append(append_request{s, {notice("queued")}, std::nullopt, 0}), &o),
        boost::asio::detached);
  }
  io.poll();  // every append is now queued (initiated)
  this->store().stop();
  io.run();
  for (auto& o : out) {
    ASSERT_TRUE(o.has_value());
    EXPECT_TRUE(*o) << why(*o);
  }
  this->reopen();
  EXPECT_EQ(this->last_seq(s), 51);
}

}  // namespace
}  // namespace tether::store::test
