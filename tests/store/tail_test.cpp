#include "store/event_store.h"

#include <future>
#include <sstream>
#include <thread>

#include "backends.h"
#include "store/tail.h"
#include "util/metrics.h"

namespace tether::store::test {
namespace {

template <class F>
class tails : public store_test<F> {};
TYPED_TEST_SUITE(tails, backends, backend_names);

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

TYPED_TEST(tails, a_tail_delivers_history_then_live_events) {
  this->open();
  const auto s = this->new_session();
  ASSERT_TRUE(this->append(s, {notice("1"), notice("2")}));
  auto tail = this->store().tail(s, event_seq{1});
  auto first = this->run(tail->next());
  ASSERT_TRUE(first) << why(first);
  ASSERT_EQ(first->size(), 2U);
  EXPECT_EQ((*first)[0].event.seq.value, 2);
  EXPECT_EQ((*first)[1].event.seq.value, 3);
  ASSERT_TRUE(this->append(s, {notice("3")}));
  auto live = this->run(tail->next());
  ASSERT_TRUE(live);
  ASSERT_EQ(live->size(), 1U);
  EXPECT_EQ((*live)[0].event.seq.value, 4);
  EXPECT_TRUE((*live)[0].durable);
  EXPECT_EQ((*live)[0].event.template as<model::synthetic>()->text, "3");
}

TYPED_TEST(tails, a_tail_created_during_a_write_storm_misses_nothing_and_repeats_nothing) {
  this->open();
  const auto s = this->new_session();
  constexpr int total = 2000;
  std::atomic<int> written{0};
  std::thread writer([&] {
    auto& io = this->new_io();
    for (int i = 0; i < total; ++i) {
      auto r = tether::test::run_sync(io, this->store().append(single_event(s, notice(std::to_string(i)))));
      if (!r) {
        ADD_FAILURE() << why(r);
        this->store().stop();  // wakes the tail instead of leaving it waiting
        written = total;
        return;
      }
      ++written;
    }
  });
  while (written.load() < total / 4) std::this_thread::sleep_for(std::chrono::microseconds(100));
  auto tail = this->store().tail(s, event_seq{0});
  const auto got = collect_until(this->io_, *tail, total + 1);
  writer.join();
  ASSERT_FALSE(got.failure) << got.failure->describe();
  expect_exactly(got.durable, 1, total + 1);
}

TYPED_TEST(tails, a_slow_tail_that_overflows_rereads_and_still_delivers_everything_in_order) {
  auto o = this->options();
  o.tail_buffer = 3;
  this->open(std::move(o));
  const auto s = this->new_session();
  auto tail = this->store().tail(s, event_seq{0});
  // Every append publishes 5 events at once into a buffer of 3: each one
  // overflows the tail, whatever the timing.
  constexpr int per_append = 5;
  constexpr int total = 300;
  std::thread writer([&] {
    auto& io = this->new_io();
    for (int i = 0; i < total; i += per_append) {
      if (i % 7 == 0) this->store().publish(s, model::text_delta{"delta"});
      append_request req;
      req.session = s;
      for (int k = 0; k < per_append; ++k) req.events.push_back(notice(std::to_string(i + k)));
      auto r = tether::test::run_sync(io, this->store().append(std::move(req)));
      if (!r) {
        ADD_FAILURE() << why(r);
        this->store().stop();
        return;
      }
    }
  });
  const auto got = collect_until(this->io_, *tail, total + 1, std::chrono::milliseconds(5));
  writer.join();
  ASSERT_FALSE(got.failure) << got.failure->describe();
  expect_exactly(got.durable, 1, total + 1);
}

// The gauge tether_tail_buffered_bytes of the process (0 until a tail held something).
std::int64_t tail_buffered_bytes() {
  std::istringstream in(metrics::global().render());
  for (std::string line; std::getline(in, line);)
    if (line.starts_with("tether_tail_buffered_bytes ")) return std::stoll(line.substr(line.find(' ') + 1));
  return 0;
}

std::size_t bytes_of(const std::vector<tail_item>& items) {
  std::size_t n = 0;
  for (const auto& i : items) n += tail_item_bytes(i.event);
  return n;
}

TYPED_TEST(tails, a_slow_tail_over_its_byte_budget_drops_deltas_first_and_still_delivers_every_durable_event) {
  constexpr std::size_t budget = 16U * 1024U;
  auto o = this->options();
  o.tail_buffer_bytes = budget;  // the count (4096) is never the limit here
  this->open(std::move(o));
  const auto s = this->new_session();
  auto tail = this->store().tail(s, event_seq{0});
  auto created = this->run(tail->next());  // catch-up done: what follows waits in the buffer
  ASSERT_TRUE(created) << why(created);
  const auto before = tail_buffered_bytes();

  // Ten 1 KB deltas fit; ten 4 KB durable events do not: the deltas go first,
  // then the buffer is emptied and the durable events are read again.
  for (int i = 0; i < 10; ++i) this->store().publish(s, model::text_delta{std::string(1024, 'd')});
  EXPECT_GT(tail_buffered_bytes(), before) << "the deltas wait in the tail";
  for (int i = 0; i < 10; ++i) {
    ASSERT_TRUE(this->append(s, {notice(std::string(4096, static_cast<char>('a' + i)))}));
    EXPECT_LE(tail_buffered_bytes() - before, static_cast<std::int64_t>(budget)) << "after append " << i;
  }
  const auto got = collect_until(this->io_, *tail, 11);
  ASSERT_FALSE(got.failure) << got.failure->describe();
  expect_exactly(got.durable, 2, 11);
  EXPECT_TRUE(got.ephemeral.empty()) << "deltas older than the durable events that pushed them out are dropped";
  tail.reset();
  EXPECT_EQ(tail_buffered_bytes(), before) << "a closed tail gives its bytes back";
}

TYPED_TEST(tails, a_tail_reading_large_history_hands_it_out_in_batches_of_about_its_byte_budget) {
  constexpr std::size_t budget = 16U * 1024U;
  constexpr std::size_t event_text = 6000;
  auto o = this->options();
  o.tail_buffer_bytes = budget;
  this->open(std::move(o));
  const auto s = this->new_session();
  for (int i = 0; i < 40; ++i) ASSERT_TRUE(this->append(s, {notice(std::string(event_text, 'x'))}));
  auto tail = this->store().tail(s, event_seq{0});
  std::vector<std::int64_t> seqs;
  while (seqs.empty() || seqs.back() < 41) {
    auto items = this->run(tail->next());
    ASSERT_TRUE(items) << why(items);
    ASSERT_FALSE(items->empty());
    EXPECT_LE(bytes_of(*items), budget + event_text + 1024) << "one batch is the budget and at most one event more";
    for (const auto& i : *items) seqs.push_back(i.event.seq.value);
  }
  expect_exactly(seqs, 1, 41);
}

TYPED_TEST(tails, ephemeral_events_reach_live_tails_only_and_carry_the_last_durable_seq) {
  this->open();
  const auto s = this->new_session();
  ASSERT_TRUE(this->append(s, {notice("a")}));
  auto tail = this->store().tail(s, event_seq{0});
  auto history = this->run(tail->next());
  ASSERT_TRUE(history);
  ASSERT_EQ(history->size(), 2U);
  this->store().publish(s, model::text_delta{"hel"});
  this->store().publish(s, model::text_delta{"lo"});
  auto live = this->run(tail->next());
  ASSERT_TRUE(live);
  ASSERT_EQ(live->size(), 2U);
  EXPECT_FALSE((*live)[0].durable);
  EXPECT_EQ((*live)[0].event.seq.value, 2);
  ASSERT_NE((*live)[1].event.template as<model::text_delta>(), nullptr);
  EXPECT_EQ((*live)[1].event.template as<model::text_delta>()->text, "lo");
  EXPECT_EQ((*live)[1].event.session, s);
  EXPECT_EQ(this->all_events(s).size(), 2U) << "nothing stored";
  this->store().publish(s, model::synthetic{"durable payloads are not published", ""});  // ignored, no crash
}

// A delta published while an append of its session is queued follows that
// append's events (a native turn records step.started without waiting, then
// streams): without the hold the delta overtakes the commit every time.
TYPED_TEST(tails, a_delta_published_while_an_append_is_queued_follows_its_events) {
  this->open();
  const auto s = this->new_session();
  auto tail = this->store().tail(s, event_seq{0});
  ASSERT_TRUE(this->run(tail->next()));  // session.created
  std::int64_t last = 1;
  for (int round = 0; round < 20; ++round) {
    auto pending = this->store().append(single_event(s, notice("step " + std::to_string(round))));
    this->store().publish(s, model::text_delta{"d" + std::to_string(round)});
    ++last;
    std::vector<tail_item> got;
    while (got.size() < 2) {
      auto items = this->run(tail->next());
      ASSERT_TRUE(items);
      for (auto& i : *items) got.push_back(std::move(i));
    }
    ASSERT_TRUE(this->run(std::move(pending)));
    ASSERT_EQ(got.size(), 2U);
    EXPECT_TRUE(got[0].durable) << "round " << round << ": the delta came before the event queued ahead of it";
    EXPECT_EQ(got[0].event.seq.value, last);
    EXPECT_FALSE(got[1].durable);
    EXPECT_EQ(got[1].event.seq.value, last) << "the delta follows the event it waited for";
    EXPECT_TRUE(got[1].event.id.str().starts_with("eph_")) << got[1].event.id.str();
  }
}

TYPED_TEST(tails, a_refused_append_lets_the_deltas_behind_it_go) {
  this->open();
  const auto s = this->new_session();
  auto tail = this->store().tail(s, event_seq{0});
  ASSERT_TRUE(this->run(tail->next()));
  fence f;
  f.lease_owner = "nobody holds this lease";
  auto refused = this->store().append(single_event(s, notice("fenced"), f));
  this->store().publish(s, model::text_delta{"after a refusal"});
  auto r = this->run(std::move(refused));
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error(), store_errc::fence_failed);
  auto items = this->run(tail->next());
  ASSERT_TRUE(items);
  ASSERT_EQ(items->size(), 1U);
  ASSERT_NE((*items)[0].event.template as<model::text_delta>(), nullptr);
  EXPECT_EQ((*items)[0].event.template as<model::text_delta>()->text, "after a refusal");
}

TYPED_TEST(tails, close_wakes_a_pending_next_with_closed) {
  this->open();
  const auto s = this->new_session();
  auto tail = this->store().tail(s, event_seq{1});
  std::promise<result<std::vector<tail_item>>> p;
  std::thread waiter([&] {
    auto& io = this->new_io();
    p.set_value(tether::test::run_sync(io, tail->next()));
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  tail->close();
  auto r = p.get_future().get();
  waiter.join();
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error(), store_errc::closed);
  auto after = this->run(tail->next());
  ASSERT_FALSE(after);
  EXPECT_EQ(after.error(), store_errc::closed);
}

TYPED_TEST(tails, store_stop_wakes_a_pending_next_with_closed) {
  this->open();
  const auto s = this->new_session();
  auto tail = this->store().tail(s, event_seq{1});
  std::promise<result<std::vector<tail_item>>> p;
  std::thread waiter([&] {
    auto& io = this->new_io();
    p.set_value(tether::test::run_sync(io, tail->next()));
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  this->store().stop();
  auto r = p.get_future().get();
  waiter.join();
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error(), store_errc::closed);
  auto late = this->store().tail(s, event_seq{0});
  auto none = this->run(late->next());
  ASSERT_FALSE(none);
  EXPECT_EQ(none.error(), store_errc::closed);
}

template <class F>
class global_tails : public store_test<F> {};
TYPED_TEST_SUITE(global_tails, backends, backend_names);

// Waits for the next items of a tail on a helper thread, so a test can act
// while it waits.
class pending_next {
 public:
  pending_next(boost::asio::io_context& io, event_tail& tail)
      : thread_([this, &io, &tail] { p_.set_value(tether::test::run_sync(io, tail.next())); }) {}
  ~pending_next() {
    if (thread_.joinable()) thread_.join();
  }
  pending_next(const pending_next&) = delete;
  pending_next& operator=(const pending_next&) = delete;

  result<std::vector<tail_item>> get() {
    auto r = p_.get_future().get();
    thread_.join();
    return r;
  }

 private:
  std::promise<result<std::vector<tail_item>>> p_;
  std::thread thread_;
};

// Reads a global tail until it has `n` items (or fails).
result<std::vector<tail_item>> take(boost::asio::io_context& io, event_tail& tail, std::size_t n) {
  std::vector<tail_item> out;
  while (out.size() < n) {
    auto items = tether::test::run_sync(io, tail.next());
    if (!items) return items.error();
    EXPECT_FALSE(items->empty()) << "next() returns at least one item";
    for (auto& i : *items) out.push_back(std::move(i));
  }
  return out;
}

TYPED_TEST(global_tails, a_global_tail_delivers_new_durable_events_of_every_session_in_commit_order) {
  this->open();
  const auto s = this->new_session();
  const auto t = this->new_session();
  ASSERT_TRUE(this->append(s, {notice("before the tail")}));
  auto tail = this->store().tail_all(100);
  ASSERT_TRUE(this->append(s, {notice("s1")}));
  ASSERT_TRUE(this->append(t, {notice("t1"), notice("t2")}));
  ASSERT_TRUE(this->append(s, {notice("s2")}));
  const auto u = this->new_session();  // a session created after the tail is seen too
  auto got = take(this->io_, *tail, 5);
  ASSERT_TRUE(got) << why(got);
  ASSERT_EQ(got->size(), 5U) << "no history: the events before the tail are not replayed";
  const std::vector<std::pair<session_id, std::int64_t>> want{{s, 3}, {t, 2}, {t, 3}, {s, 4}, {u, 1}};
  for (std::size_t i = 0; i < want.size(); ++i) {
    EXPECT_TRUE((*got)[i].durable) << i;
    EXPECT_EQ((*got)[i].event.session, want[i].first) << i;
    EXPECT_EQ((*got)[i].event.seq.value, want[i].second) << i;
  }
  EXPECT_EQ((*got)[0].event.template as<model::synthetic>()->text, "s1");
  EXPECT_NE((*got)[4].event.template as<model::session_created>(), nullptr);
}

TYPED_TEST(global_tails, concurrent_writers_to_two_sessions_reach_a_global_tail_complete_and_in_each_sessions_order) {
  this->open();
  const auto s = this->new_session();
  const auto t = this->new_session();
  auto tail = this->store().tail_all(100'000);
  constexpr int per_session = 300;
  auto write = [&](session_id id) {
    auto& io = this->new_io();
    for (int i = 0; i < per_session; ++i) {
      auto r = tether::test::run_sync(io, this->store().append(single_event(id, notice(std::to_string(i)))));
      if (!r) {
        ADD_FAILURE() << why(r);
        return;
      }
    }
  };
  std::thread ws(write, s);
  std::thread wt(write, t);
  auto got = take(this->io_, *tail, 2 * per_session);
  ws.join();
  wt.join();
  ASSERT_TRUE(got) << why(got);
  std::int64_t last_s = 1;
  std::int64_t last_t = 1;
  for (const auto& i : *got) {
    auto& last = i.event.session == s ? last_s : last_t;
    EXPECT_EQ(i.event.seq.value, last + 1) << "each session's events arrive once, in seq order";
    last = i.event.seq.value;
  }
  EXPECT_EQ(last_s, per_session + 1);
  EXPECT_EQ(last_t, per_session + 1);
}

TYPED_TEST(global_tails, a_global_tail_receives_ephemeral_events_of_sessions_nobody_else_tails) {
  this->open();
  const auto s = this->new_session();
  const auto t = this->new_session();
  auto tail = this->store().tail_all(100);
  this->store().publish(s, model::text_delta{"hel"});
  ASSERT_TRUE(this->append(t, {notice("durable")}));
  this->store().publish(t, model::text_delta{"lo"});
  auto got = take(this->io_, *tail, 3);
  ASSERT_TRUE(got) << why(got);
  ASSERT_EQ(got->size(), 3U);
  EXPECT_FALSE((*got)[0].durable);
  EXPECT_EQ((*got)[0].event.session, s);
  ASSERT_NE((*got)[0].event.template as<model::text_delta>(), nullptr);
  EXPECT_EQ((*got)[0].event.template as<model::text_delta>()->text, "hel");
  EXPECT_EQ((*got)[0].event.seq.value, 0) << "a global tail has no position to give an ephemeral event";
  EXPECT_TRUE((*got)[1].durable);
  EXPECT_EQ((*got)[1].event.seq.value, 2);
  EXPECT_FALSE((*got)[2].durable);
  EXPECT_EQ((*got)[2].event.session, t);
  EXPECT_EQ((*got)[2].event.template as<model::text_delta>()->text, "lo");
}

TYPED_TEST(global_tails, a_global_tail_may_hold_its_buffer_but_one_more_item_makes_it_lagged_for_good) {
  this->open();
  const auto s = this->new_session();
  auto tail = this->store().tail_all(3);
  ASSERT_TRUE(this->append(s, {notice("1"), notice("2")}));
  this->store().publish(s, model::text_delta{"3"});
  auto full = this->run(tail->next());
  ASSERT_TRUE(full) << why(full);
  EXPECT_EQ(full->size(), 3U) << "exactly `buffer` waiting items are kept";

  ASSERT_TRUE(this->append(s, {notice("4"), notice("5"), notice("6"), notice("7")}));
  auto lagged = this->run(tail->next());
  ASSERT_FALSE(lagged);
  EXPECT_EQ(lagged.error(), store_errc::lagged);
  ASSERT_TRUE(this->append(s, {notice("8")})) << "the writer is never held up by a slow tail";
  auto still = this->run(tail->next());
  ASSERT_FALSE(still);
  EXPECT_EQ(still.error(), store_errc::lagged) << "a lagged tail stays dead";
}

TYPED_TEST(global_tails, a_global_tail_over_its_byte_budget_drops_deltas_first_then_lags) {
  auto o = this->options();
  o.tail_buffer_bytes = 16U * 1024U;
  this->open(std::move(o));
  const auto s = this->new_session();
  auto tail = this->store().tail_all(100'000);
  for (int i = 0; i < 10; ++i) this->store().publish(s, model::text_delta{std::string(1024, 'd')});
  ASSERT_TRUE(this->append(s, {notice(std::string(8000, 'a'))}));  // the deltas make room for it
  auto got = this->run(tail->next());
  ASSERT_TRUE(got) << why(got);
  ASSERT_FALSE(got->empty());
  EXPECT_TRUE(got->back().durable) << "the durable event is kept";
  EXPECT_LT(got->size(), 11U) << "some deltas were dropped to make room";

  for (int i = 0; i < 3; ++i)
    ASSERT_TRUE(this->append(s, {notice(std::string(8000, 'b'))}));  // 24 KB durable: too much
  auto lagged = this->run(tail->next());
  ASSERT_FALSE(lagged);
  EXPECT_EQ(lagged.error(), store_errc::lagged);
}

TYPED_TEST(global_tails, a_lagged_global_tail_does_not_disturb_other_tails) {
  this->open();
  const auto s = this->new_session();
  auto slow = this->store().tail_all(1);
  auto fast = this->store().tail_all(100);
  auto session_tail = this->store().tail(s, event_seq{1});
  ASSERT_TRUE(this->append(s, {notice("1"), notice("2")}));
  ASSERT_TRUE(this->append(s, {notice("3")}));
  auto dead = this->run(slow->next());
  ASSERT_FALSE(dead);
  EXPECT_EQ(dead.error(), store_errc::lagged);
  auto got = take(this->io_, *fast, 3);
  ASSERT_TRUE(got) << why(got);
  EXPECT_EQ(got->back().event.seq.value, 4);
  const auto own = collect_until(this->io_, *session_tail, 4);
  ASSERT_FALSE(own.failure);
  expect_exactly(own.durable, 2, 4);
}

TYPED_TEST(global_tails, close_wakes_a_pending_global_next_with_closed) {
  this->open();
  auto tail = this->store().tail_all(10);
  pending_next waiting(this->new_io(), *tail);
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  tail->close();
  auto r = waiting.get();
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error(), store_errc::closed);
  (void)this->new_session();  // an event after close reaches nothing and breaks nothing
  auto after = this->run(tail->next());
  ASSERT_FALSE(after);
  EXPECT_EQ(after.error(), store_errc::closed);
}

TYPED_TEST(global_tails, store_stop_ends_global_tails_with_closed) {
  this->open();
  auto tail = this->store().tail_all(10);
  pending_next waiting(this->new_io(), *tail);
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  this->store().stop();
  auto r = waiting.get();
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error(), store_errc::closed);
  auto late = this->store().tail_all(10);
  auto none = this->run(late->next());
  ASSERT_FALSE(none);
  EXPECT_EQ(none.error(), store_errc::closed);
}

}  // namespace
}  // namespace tether::store::test
