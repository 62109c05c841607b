// What only a store shared by several processes does, on PostgreSQL: two
// stores on one database stand for two nodes. Concurrent appends and
// admissions through both, fences across them, tails and watchers that see
// the other's commits, the database's own clock, migrations by two at once,
// and a database restart.
#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>
#include <condition_variable>
#include <future>
#include <set>
#include <thread>

#include "backends.h"

namespace tether::store::test {
namespace {

using namespace std::chrono_literals;

class postgres_nodes : public ::testing::Test {
 protected:
  void SetUp() override { url_ = tether::test::postgres_cluster::get().fresh_database(); }
  void TearDown() override {
    for (auto& s : stores_) s->stop();
    stores_.clear();
    tether::test::postgres_cluster::get().drop_database(url_);
  }

  // Another node: a store of its own on the same database.
  event_store& node(const tether::clock* clock = nullptr) {
    postgres_options o;
    o.url = url_;
    o.clock = clock;
    o.retry_initial_ms = 50;
    o.retry_max_ms = 200;
    auto r = open_postgres_store(std::move(o));
    EXPECT_TRUE(r) << why(r);
    if (!r) throw std::runtime_error("cannot open the store");
    return *stores_.emplace_back(std::move(*r));
  }

  template <class T>
  T run(boost::asio::awaitable<T> aw) {
    return tether::test::run_sync(io_, std::move(aw));
  }

  session_id new_session(event_store& st) {
    auto s = session_id::generate();
    auto r = run(st.append(append_request{s, {model::session_created{"t", "/srv", "default"}}, std::nullopt, 0}));
    EXPECT_TRUE(r) << why(r);
    return s;
  }

  std::string url_;
  boost::asio::io_context io_;
  std::array<boost::asio::io_context, 2> writer_io_;  // destroyed after stores_
  std::vector<std::unique_ptr<event_store>> stores_;
};

TEST_F(postgres_nodes, appends_to_one_session_through_two_nodes_get_one_gapless_order) {
  auto& a = node();
  auto& b = node();
  const auto s = new_session(a);
  constexpr int per_node = 200;
  // Each writer's io_context is the fixture's, so it outlives the stores:
  // the store's completion thread may still be inside post() (signalling the
  // context's condition variable) after the last append's waiter resumed.
  auto writer = [&](event_store& st, boost::asio::io_context& io, const std::string& who) {
    for (int i = 0; i < per_node; ++i) {
      auto r =
          tether::test::run_sync(io, st.append(append_request{s, {notice(who + std::to_string(i))}, std::nullopt, 0}));
      EXPECT_TRUE(r) << why(r);
    }
  };
  std::thread ta([&] { writer(a, writer_io_[0], "a"); });
  std::thread tb([&] { writer(b, writer_io_[1], "b"); });
  ta.join();
  tb.join();
  auto page = run(b.read(s, event_seq{0}, 10'000));
  ASSERT_TRUE(page) << why(page);
  ASSERT_EQ(page->events.size(), static_cast<std::size_t>(1 + 2 * per_node));
  int next_a = 0;
  int next_b = 0;
  for (std::size_t i = 0; i < page->events.size(); ++i) {
    EXPECT_EQ(page->events[i].seq.value, static_cast<std::int64_t>(i + 1)) << "no gap, no duplicate";
    if (i == 0) continue;
    const auto* n = page->events[i].as<model::synthetic>();
    ASSERT_NE(n, nullptr);
    // Each node's appends keep their own order.
    if (n->text[0] == 'a') {
      EXPECT_EQ(n->text, "a" + std::to_string(next_a++));
    }
    if (n->text[0] == 'b') {
      EXPECT_EQ(n->text, "b" + std::to_string(next_b++));
    }
  }
  EXPECT_EQ(next_a, per_node);
  EXPECT_EQ(next_b, per_node);
}

TEST_F(postgres_nodes, the_same_input_admitted_through_both_nodes_at_once_is_recorded_once) {
  auto& a = node();
  auto& b = node();
  const auto s = new_session(a);
  constexpr int inputs = 100;
  std::vector<input_id> ids;
  for (int i = 0; i < inputs; ++i) ids.push_back(input_id::generate());
  std::atomic<int> recorded{0};
  std::atomic<int> duplicates{0};
  auto admit = [&](event_store& st, boost::asio::io_context& io) {  // io outlives the stores (see above)
    for (const auto& id : ids) {
      auto r = tether::test::run_sync(io, st.append(append_request{s, {admitted(id, "p")}, std::nullopt, 0}));
      if (r)
        ++recorded;
      else if (r.error() == store_errc::duplicate_input)
        ++duplicates;
      else
        ADD_FAILURE() << why(r);
    }
  };
  std::thread ta([&] { admit(a, writer_io_[0]); });
  std::thread tb([&] { admit(b, writer_io_[1]); });
  ta.join();
  tb.join();
  EXPECT_EQ(recorded.load(), inputs) << "each input once";
  EXPECT_EQ(duplicates.load(), inputs) << "the other node's admission is the exact retry";
  auto listed = run(b.list_inputs(s));
  ASSERT_TRUE(listed) << why(listed);
  ASSERT_EQ(listed->size(), static_cast<std::size_t>(inputs));
  for (std::size_t i = 1; i < listed->size(); ++i)
    EXPECT_LT((*listed)[i - 1].admitted_seq.value, (*listed)[i].admitted_seq.value) << "one order";
}

TEST_F(postgres_nodes, a_node_that_lost_its_lease_can_write_nothing) {
  manual_clock clock;
  auto& a = node(&clock);
  auto& b = node(&clock);
  const auto s = new_session(a);
  auto mine = run(a.claim_lease(s, "node-a/1", 1'000));
  ASSERT_TRUE(mine) << why(mine);
  auto refused = run(b.claim_lease(s, "node-b/1", 1'000));
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error(), store_errc::lease_held);
  clock.advance(1'001);  // a is paused past its lease
  auto taken = run(b.claim_lease(s, "node-b/1", 1'000));
  ASSERT_TRUE(taken) << why(taken);
  // The zombie comes back: its fenced append and its renewal are refused.
  auto late = run(a.append(append_request{s, {notice("zombie")}, fence{.lease_owner = "node-a/1"}, 0}));
  ASSERT_FALSE(late);
  EXPECT_EQ(late.error(), store_errc::fence_failed);
  auto renewed = run(a.renew_lease(s, "node-a/1", 1'000));
  ASSERT_FALSE(renewed);
  EXPECT_EQ(renewed.error(), store_errc::lease_held) << "b's fresh lease";
  auto page = run(b.read(s, event_seq{0}, 100));
  ASSERT_TRUE(page) << why(page);
  for (const auto& e : page->events)
    if (const auto* n = e.as<model::synthetic>()) {
      EXPECT_NE(n->text, "zombie");
    }
}

TEST_F(postgres_nodes, leases_use_the_database_clock) {
  auto& a = node();
  const auto s = new_session(a);
  const auto before = real_clock().now();
  auto l = run(a.claim_lease(s, "node-a/1", 60'000));
  ASSERT_TRUE(l) << why(l);
  const auto after = real_clock().now();
  // Same machine: the database's clock agrees with ours to well within a second.
  EXPECT_GE(l->expires_at, before + 60'000 - 1'000);
  EXPECT_LE(l->expires_at, after + 60'000 + 1'000);
}

TEST_F(postgres_nodes, a_tail_on_one_node_sees_the_other_nodes_commits_in_order) {
  auto& a = node();
  auto& b = node();
  const auto s = new_session(a);
  auto t = b.tail(s, event_seq{0});
  constexpr int count = 50;
  for (int i = 0; i < count; ++i) {
    auto r = run(a.append(append_request{s, {notice("n" + std::to_string(i))}, std::nullopt, 0}));
    ASSERT_TRUE(r) << why(r);
  }
  std::vector<std::int64_t> seqs;
  while (seqs.size() < static_cast<std::size_t>(count + 1)) {
    auto items = run(t->next());
    ASSERT_TRUE(items) << why(items);
    for (const auto& it : *items)
      if (it.durable) seqs.push_back(it.event.seq.value);
  }
  for (std::size_t i = 0; i < seqs.size(); ++i) EXPECT_EQ(seqs[i], static_cast<std::int64_t>(i + 1));
  // Resuming after a seq (Last-Event-ID) on the other node starts right after it.
  auto resumed = b.tail(s, event_seq{40});
  auto first = run(resumed->next());
  ASSERT_TRUE(first) << why(first);
  ASSERT_FALSE(first->empty());
  EXPECT_EQ(first->front().event.seq.value, 41);
  t->close();
  resumed->close();
}

// What one node's watcher hears of the others (event_store::watch_foreign).
class heard {
 public:
  explicit heard(event_store& node) : node_(node) {
    node_.watch_foreign([this](const event_store::foreign_change& c) {
      std::lock_guard lock(mu_);
      seen_.push_back(c);
      cv_.notify_all();
    });
  }
  ~heard() { node_.watch_foreign(nullptr); }
  heard(const heard&) = delete;
  heard& operator=(const heard&) = delete;

  // Waits (at most 10 s) until `done` holds for the changes heard so far;
  // what was heard then, or nothing.
  template <class P>
  std::optional<std::vector<event_store::foreign_change>> until(P done) {
    std::unique_lock lock(mu_);
    if (!cv_.wait_for(lock, 10s, [&] { return done(seen_); })) return std::nullopt;
    return seen_;
  }

 private:
  event_store& node_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<event_store::foreign_change> seen_;
};

TEST_F(postgres_nodes, the_other_node_is_told_of_an_input_and_of_a_signal) {
  auto& a = node();
  heard b(node());
  const auto s = new_session(a);
  auto r = run(a.append(append_request{s, {admitted(input_id::generate(), "go")}, std::nullopt, 0}));
  ASSERT_TRUE(r) << why(r);
  a.signal(s, "interrupt");
  const auto seen = b.until([&](const auto& changes) {
    bool input = false;
    bool interrupt = false;
    for (const auto& c : changes) {
      input = input || (c.session == s && c.wakes && c.seq.value == r->last_seq.value);
      interrupt = interrupt || (c.session == s && c.control == "interrupt");
    }
    return input && interrupt;
  });
  ASSERT_TRUE(seen) << "b heard of a's input (with its seq) and of a's interrupt";
  for (const auto& c : *seen)
    if (c.control.empty() && c.seq.value == 1) {
      EXPECT_FALSE(c.wakes) << "session.created gives no work";
    }
}

TEST_F(postgres_nodes, an_input_given_back_to_pending_wakes_the_session_on_the_other_nodes) {
  auto& a = node();
  heard b(node());
  const auto s = new_session(a);
  const auto in = input_id::generate();
  const auto e = execution_id::generate();
  ASSERT_TRUE(run(a.append(append_request{s, {admitted(in, "go")}, std::nullopt, 0})));
  auto promoted = run(a.append(append_request{s, {started(e), model::input_promoted{in, e}}, std::nullopt, 0}));
  ASSERT_TRUE(promoted) << why(promoted);
  auto returned = run(a.append(append_request{
      s, {model::input_returned{in, e, "storage_failed", 1}, finished(e, model::outcome::failed)}, std::nullopt, 0}));
  ASSERT_TRUE(returned) << why(returned);
  const auto seen = b.until([&](const auto& changes) {
    return std::any_of(changes.begin(), changes.end(), [&](const event_store::foreign_change& c) {
      return c.session == s && c.seq.value == returned->last_seq.value;
    });
  });
  ASSERT_TRUE(seen) << "b heard of the return";
  for (const auto& c : *seen) {
    if (c.session != s || !c.control.empty()) continue;
    if (c.seq.value == promoted->last_seq.value) {
      EXPECT_FALSE(c.wakes) << "a promotion gives no work";
    }
    if (c.seq.value == returned->last_seq.value) {
      EXPECT_TRUE(c.wakes) << "the input is pending again";
    }
  }
}

TEST_F(postgres_nodes, two_nodes_opening_a_new_database_at_once_migrate_it_once) {
  std::vector<std::future<result<std::unique_ptr<event_store>>>> opening;
  for (int i = 0; i < 4; ++i)
    opening.push_back(std::async(std::launch::async, [this] {
      postgres_options o;
      o.url = url_;
      return open_postgres_store(std::move(o));
    }));
  for (auto& f : opening) {
    auto r = f.get();
    ASSERT_TRUE(r) << why(r);
    stores_.push_back(std::move(*r));
  }
  auto check = check_postgres(url_);
  ASSERT_TRUE(check) << why(check);
  EXPECT_EQ(check->schema_version, postgres_schema_version());
  EXPECT_LT(std::abs(check->clock_skew_ms), 5'000);
  const auto s = new_session(*stores_[0]);
  auto row = run(stores_[3]->get_session(s));
  ASSERT_TRUE(row) << why(row);
}

TEST(postgres_urls, passwords_never_reach_a_message) {
  EXPECT_EQ(redacted_url("postgres://tether:s3cret@db.internal:5432/tether"),
            "postgres://tether:***@db.internal:5432/tether");
  EXPECT_EQ(redacted_url("host=db password=s3cret dbname=t"), "host=db password=*** dbname=t");
  EXPECT_EQ(redacted_url("postgresql://db/t?password=s3cret&sslmode=require"),
            "postgresql://db/t?password=***&sslmode=require");
  // A connection that fails says where it tried, without the password.
  postgres_options o;
  o.url = "postgresql://tether:s3cret@/nosuchdb?host=/nonexistent-socket-dir&connect_timeout=1";
  auto r = open_postgres_store(std::move(o));
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error(), store_errc::open_failed);
  EXPECT_EQ(r.error().message.find("s3cret"), std::string::npos) << r.error().message;
  EXPECT_NE(r.error().message.find("nonexistent-socket-dir"), std::string::npos) << r.error().message;
  EXPECT_FALSE(is_postgres_url("sqlite"));
  EXPECT_TRUE(is_postgres_url("postgres://x"));
}

// A cluster of its own: the restart must not disturb other tests' databases.
TEST(postgres_restart, a_database_restart_fails_writes_for_a_while_and_loses_no_acknowledged_one) {
  tether::test::postgres_cluster cluster(tether::test::postgres_cluster::own);
  postgres_options o;
  o.url = cluster.fresh_database();
  o.retry_initial_ms = 50;
  o.retry_max_ms = 200;
  // Both contexts outlive the store, whose completion thread may still be
  // inside post() to one of them after its waiter resumed.
  boost::asio::io_context io_;
  boost::asio::io_context load_io;
  auto opened = open_postgres_store(std::move(o));
  ASSERT_TRUE(opened) << why(opened);
  auto& a = **opened;
  auto run = [&](auto aw) { return tether::test::run_sync(io_, std::move(aw)); };
  const auto s = session_id::generate();
  ASSERT_TRUE(run(a.append(append_request{s, {model::session_created{"t", "/srv", "default"}}, std::nullopt, 0})));
  std::atomic<bool> done{false};
  std::vector<input_id> acknowledged;
  std::atomic<std::size_t> acknowledged_count{0};
  std::atomic<int> refused{0};
  std::thread load([&] {
    while (!done) {
      const auto id = input_id::generate();
      auto r = tether::test::run_sync(load_io, a.append(append_request{s, {admitted(id, "p")}, std::nullopt, 0}));
      if (r) {
        acknowledged.push_back(id);  // read after the join; the main thread watches the count
        ++acknowledged_count;
      } else {
        EXPECT_TRUE(r.error() == store_errc::write_failed || r.error() == store_errc::storage_unavailable) << why(r);
        ++refused;
        std::this_thread::sleep_for(10ms);
      }
    }
  });
  std::this_thread::sleep_for(300ms);
  cluster.control("restart");
  // Writes are taken again after the restart, without reopening the store.
  const auto deadline = std::chrono::steady_clock::now() + 30s;
  std::size_t before = 0;
  while (std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(200ms);
    if ((a.health().state == store_state::ok) && refused > 0 && acknowledged_count > before + 10) break;
    before = acknowledged_count;
  }
  done = true;
  load.join();
  EXPECT_GT(refused.load(), 0) << "the restart was noticed";
  EXPECT_TRUE((a.health().state == store_state::ok)) << "the store recovered by itself";
  auto listed = run(a.list_inputs(s));
  ASSERT_TRUE(listed) << why(listed);
  std::set<std::string> stored;
  for (const auto& in : *listed) stored.insert(in.id.str());
  for (const auto& id : acknowledged) EXPECT_TRUE(stored.contains(id.str())) << id.str() << " was acknowledged";
  a.stop();
}

}  // namespace
}  // namespace tether::store::test
