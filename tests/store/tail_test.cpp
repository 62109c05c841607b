#include "store/event_store.h"

#include <future>
#include <thread>

#include "store_fixture.h"

namespace tether::store::test {
namespace {

using tails = store_test;

// Collects tail items until the durable seq `upto` was delivered.
struct collected {
  std::vector<std::int64_t> durable;
  std::vector<tail_item> ephemeral;
  std::optional<tether::error> failure;
};

collected collect_until(boost::asio::io_context& io, event_tail& tail, std::int64_t upto,
                        std::chrono::milliseconds pause = std::chrono::milliseconds(0)) {
  collected out;
  while (out.durable.empty() || out.durable.back() < upto) {
    auto items = tether::test::run_sync(io, tail.next());
    if (!items) {
      out.failure = items.error();
      return out;
    }
    EXPECT_FALSE(items->empty()) << "next() returns at least one item";
    for (auto& i : *items) {
      if (i.durable)
        out.durable.push_back(i.event.seq.value);
      else
        out.ephemeral.push_back(std::move(i));
    }
    if (pause.count() > 0) std::this_thread::sleep_for(pause);
  }
  return out;
}

void expect_exactly(const std::vector<std::int64_t>& seqs, std::int64_t from, std::int64_t to) {
  ASSERT_EQ(seqs.size(), static_cast<std::size_t>(to - from + 1));
  for (std::size_t i = 0; i < seqs.size(); ++i) ASSERT_EQ(seqs[i], from + static_cast<std::int64_t>(i)) << "at " << i;
}

TEST_F(tails, a_tail_delivers_history_then_live_events) {
  open();
  const auto s = new_session();
  ASSERT_TRUE(append(s, {notice("1"), notice("2")}));
  auto tail = store().tail(s, event_seq{1});
  auto first = run(tail->next());
  ASSERT_TRUE(first) << why(first);
  ASSERT_EQ(first->size(), 2U);
  EXPECT_EQ((*first)[0].event.seq.value, 2);
  EXPECT_EQ((*first)[1].event.seq.value, 3);
  ASSERT_TRUE(append(s, {notice("3")}));
  auto live = run(tail->next());
  ASSERT_TRUE(live);
  ASSERT_EQ(live->size(), 1U);
  EXPECT_EQ((*live)[0].event.seq.value, 4);
  EXPECT_TRUE((*live)[0].durable);
  EXPECT_EQ((*live)[0].event.as<model::synthetic>()->text, "3");
}

TEST_F(tails, a_tail_created_during_a_write_storm_misses_nothing_and_repeats_nothing) {
  open();
  const auto s = new_session();
  constexpr int total = 2000;
  std::atomic<int> written{0};
  std::thread writer([&] {
    auto& io = new_io();
    for (int i = 0; i < total; ++i) {
      auto r = tether::test::run_sync(io, store().append(single_event(s, notice(std::to_string(i)))));
      if (!r) {
        ADD_FAILURE() << why(r);
        store().stop();  // wakes the tail instead of leaving it waiting
        written = total;
        return;
      }
      ++written;
    }
  });
  while (written.load() < total / 4) std::this_thread::sleep_for(std::chrono::microseconds(100));
  auto tail = store().tail(s, event_seq{0});
  const auto got = collect_until(io_, *tail, total + 1);
  writer.join();
  ASSERT_FALSE(got.failure) << got.failure->describe();
  expect_exactly(got.durable, 1, total + 1);
}

TEST_F(tails, a_slow_tail_that_overflows_rereads_and_still_delivers_everything_in_order) {
  auto o = options();
  o.tail_buffer = 3;
  open(std::move(o));
  const auto s = new_session();
  auto tail = store().tail(s, event_seq{0});
  // Every append publishes 5 events at once into a buffer of 3: each one
  // overflows the tail, whatever the timing.
  constexpr int per_append = 5;
  constexpr int total = 300;
  std::thread writer([&] {
    auto& io = new_io();
    for (int i = 0; i < total; i += per_append) {
      if (i % 7 == 0) store().publish(s, model::text_delta{"delta"});
      append_request req;
      req.session = s;
      for (int k = 0; k < per_append; ++k) req.events.push_back(notice(std::to_string(i + k)));
      auto r = tether::test::run_sync(io, store().append(std::move(req)));
      if (!r) {
        ADD_FAILURE() << why(r);
        store().stop();
        return;
      }
    }
  });
  const auto got = collect_until(io_, *tail, total + 1, std::chrono::milliseconds(5));
  writer.join();
  ASSERT_FALSE(got.failure) << got.failure->describe();
  expect_exactly(got.durable, 1, total + 1);
}

TEST_F(tails, ephemeral_events_reach_live_tails_only_and_carry_the_last_durable_seq) {
  open();
  const auto s = new_session();
  ASSERT_TRUE(append(s, {notice("a")}));
  auto tail = store().tail(s, event_seq{0});
  auto history = run(tail->next());
  ASSERT_TRUE(history);
  ASSERT_EQ(history->size(), 2U);
  store().publish(s, model::text_delta{"hel"});
  store().publish(s, model::text_delta{"lo"});
  auto live = run(tail->next());
  ASSERT_TRUE(live);
  ASSERT_EQ(live->size(), 2U);
  EXPECT_FALSE((*live)[0].durable);
  EXPECT_EQ((*live)[0].event.seq.value, 2);
  ASSERT_NE((*live)[1].event.as<model::text_delta>(), nullptr);
  EXPECT_EQ((*live)[1].event.as<model::text_delta>()->text, "lo");
  EXPECT_EQ((*live)[1].event.session, s);
  EXPECT_EQ(all_events(s).size(), 2U) << "nothing stored";
  store().publish(s, model::synthetic{"durable payloads are not published", ""});  // ignored, no crash
}

TEST_F(tails, close_wakes_a_pending_next_with_closed) {
  open();
  const auto s = new_session();
  auto tail = store().tail(s, event_seq{1});
  std::promise<result<std::vector<tail_item>>> p;
  std::thread waiter([&] {
    auto& io = new_io();
    p.set_value(tether::test::run_sync(io, tail->next()));
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  tail->close();
  auto r = p.get_future().get();
  waiter.join();
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error(), store_errc::closed);
  auto after = run(tail->next());
  ASSERT_FALSE(after);
  EXPECT_EQ(after.error(), store_errc::closed);
}

TEST_F(tails, store_stop_wakes_a_pending_next_with_closed) {
  open();
  const auto s = new_session();
  auto tail = store().tail(s, event_seq{1});
  std::promise<result<std::vector<tail_item>>> p;
  std::thread waiter([&] {
    auto& io = new_io();
    p.set_value(tether::test::run_sync(io, tail->next()));
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  store().stop();
  auto r = p.get_future().get();
  waiter.join();
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error(), store_errc::closed);
  auto late = store().tail(s, event_seq{0});
  auto none = run(late->next());
  ASSERT_FALSE(none);
  EXPECT_EQ(none.error(), store_errc::closed);
}

TEST_F(tails, a_tail_of_a_corrupt_session_reports_the_error) {
  open();
  const auto s = new_session();
  raw_exec(db_path(), "UPDATE events SET data = 'garbage'");
  auto tail = store().tail(s, event_seq{0});
  auto r = run(tail->next());
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error(), store_errc::corrupt);
}

}  // namespace
}  // namespace tether::store::test
