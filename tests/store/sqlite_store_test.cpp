#include "store/sqlite/sqlite_store.h"

#include <fstream>
#include <future>
#include <thread>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/json/serialize.hpp>

#include "model/errors.h"
#include "store/event_store.h"
#include "store/sqlite/db.h"
#include "store/sqlite/schema.h"
#include "store_fixture.h"

namespace tether::store::test {
namespace {

using append_sqlite = store_test;

TEST_F(append_sqlite, assigns_consecutive_seqs_without_gaps_and_survives_reopen) {
  open();
  const auto s = new_session();
  for (int i = 0; i < 5; ++i) {
    auto r = append(s, {notice("n" + std::to_string(2 * i)), notice("n" + std::to_string(2 * i + 1))});
    ASSERT_TRUE(r) << why(r);
    ASSERT_EQ(r->events.size(), 2U);
    EXPECT_EQ(r->events[0].seq.value, 2 + 2 * i);
    EXPECT_EQ(r->events[1].seq.value, 3 + 2 * i);
    EXPECT_EQ(r->last_seq.value, 3 + 2 * i);
  }
  reopen();
  const auto events = all_events(s);
  ASSERT_EQ(events.size(), 11U);
  for (std::size_t i = 0; i < events.size(); ++i) EXPECT_EQ(events[i].seq.value, static_cast<std::int64_t>(i + 1));
  EXPECT_EQ(last_seq(s), 11);
  auto next = append(s, {notice("after reopen")});
  ASSERT_TRUE(next) << why(next);
  EXPECT_EQ(next->last_seq.value, 12);
}

// A write is queued when it is called: awaiting later, or never, changes
// neither its order nor whether it happens (event_store.h).
TEST_F(append_sqlite, writes_are_queued_when_called_so_a_dropped_or_late_await_keeps_their_order) {
  open();
  const auto s = new_session();
  auto late = store().append(append_request{s, {notice("first, awaited last")}, std::nullopt, 0});
  (void)store().append(append_request{s, {notice("second, never awaited")}, std::nullopt, 0});
  auto third = append(s, {notice("third, awaited at once")});
  ASSERT_TRUE(third) << why(third);
  EXPECT_EQ(third->events[0].seq.value, 4) << "the two earlier writes went first";
  auto first = run(std::move(late));
  ASSERT_TRUE(first) << why(first);
  EXPECT_EQ(first->events[0].seq.value, 2);
  const auto events = all_events(s);
  ASSERT_EQ(events.size(), 4U);
  ASSERT_NE(events[2].as<model::synthetic>(), nullptr);
  EXPECT_EQ(events[2].as<model::synthetic>()->text, "second, never awaited");
}

TEST_F(append_sqlite, the_wal_is_copied_into_the_database_in_the_background_while_the_store_is_open) {
  auto o = options();
  o.checkpoint_pages = 1'000;
  open(o);
  const auto before = std::filesystem::file_size(db_path());
  const auto s = new_session();
  // Enough commits to pass the checkpoint threshold (1,000 WAL pages).
  const std::string big(3'000, 'x');
  for (int i = 0; i < 1'500; ++i) ASSERT_TRUE(append(s, {notice(big + std::to_string(i))}));
  bool grew = false;
  for (int i = 0; i < 10'000 && !grew; ++i) {
    grew = std::filesystem::file_size(db_path()) > before + 1'000'000;
    if (!grew) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  EXPECT_TRUE(grew) << "the database file holds the checkpointed pages before the store closes";
  EXPECT_EQ(last_seq(s), 1'501);
}

TEST_F(append_sqlite, stored_events_read_back_with_ids_times_and_payloads) {
  open();
  const auto s = new_session("hello");
  auto r = append(s, {notice("explicit time")}, std::nullopt, 42);
  ASSERT_TRUE(r) << why(r);
  const auto events = all_events(s);
  ASSERT_EQ(events.size(), 2U);
  EXPECT_EQ(events[0].time, clock_.now()) << "time 0 means the store's clock";
  EXPECT_EQ(events[1].time, 42);
  EXPECT_EQ(events[1].id, r->events[0].id);
  EXPECT_FALSE(events[0].id.empty());
  EXPECT_NE(events[0].id, events[1].id);
  ASSERT_NE(events[0].as<model::session_created>(), nullptr);
  EXPECT_EQ(events[0].as<model::session_created>()->title, "hello");
  ASSERT_NE(events[1].as<model::synthetic>(), nullptr);
  EXPECT_EQ(events[1].as<model::synthetic>()->text, "explicit time");
}

TEST_F(append_sqlite, append_to_an_unknown_session_is_unknown_session) {
  open();
  auto r = append(session_id::generate(), {notice("x")});
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error(), store_errc::unknown_session);
}

TEST_F(append_sqlite, creating_an_existing_session_is_session_exists) {
  open();
  const auto s = new_session();
  auto r = append(s, {model::session_created{"again", "", ""}});
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error(), store_errc::session_exists);
  EXPECT_EQ(last_seq(s), 1);
}

TEST_F(append_sqlite, a_sessions_metadata_is_kept_as_given_and_survives_a_reopen) {
  open();
  const auto s = session_id::generate();
  model::session_created created{"t", "", ""};
  created.metadata = boost::json::parse(R"({"ticket":"T-1","tags":["a","b"],"n":3})").as_object();
  ASSERT_TRUE(append(s, {created}));
  auto row = run(store().get_session(s));
  ASSERT_TRUE(row);
  EXPECT_EQ(row->metadata, created.metadata);
  reopen();
  row = run(store().get_session(s));
  ASSERT_TRUE(row);
  EXPECT_EQ(row->metadata, created.metadata);
  // A session created without metadata reads back an empty object.
  const auto plain = new_session();
  EXPECT_TRUE(run(store().get_session(plain))->metadata.empty());
}

TEST_F(append_sqlite, ephemeral_payloads_are_rejected) {
  open();
  const auto s = new_session();
  auto r = append(s, {notice("kept out too"), model::text_delta{"partial"}});
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error(), store_errc::rejected);
  EXPECT_EQ(all_events(s).size(), 1U);
}

TEST_F(append_sqlite, payloads_that_would_not_read_back_are_rejected_not_stored) {
  open();
  const auto s = new_session();
  auto bad_utf8 = append(s, {notice(std::string("bad \xff\xfe text"))});
  ASSERT_FALSE(bad_utf8);
  EXPECT_EQ(bad_utf8.error(), store_errc::rejected);
  auto empty_id = append(s, {admitted(input_id(), "no id")});
  ASSERT_FALSE(empty_id);
  EXPECT_EQ(empty_id.error(), store_errc::rejected);
  boost::json::value deep = nullptr;
  for (int i = 0; i < 1000; ++i) deep = boost::json::array{deep};
  auto too_deep = append(s, {model::tool_called{call_id::generate(), "read", deep, false}});
  ASSERT_FALSE(too_deep);
  EXPECT_EQ(too_deep.error(), store_errc::rejected);
  EXPECT_EQ(all_events(s).size(), 1U);
}

TEST_F(append_sqlite, an_empty_request_is_rejected) {
  open();
  const auto s = new_session();
  auto r = append(s, {});
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error(), store_errc::rejected);
}

TEST_F(append_sqlite, concurrent_appends_from_many_threads_are_group_committed) {
  // Slow commits (as on a real disk) give the others time to queue up.
  auto o = options();
  o.fail_commit = [] {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    return false;
  };
  open(std::move(o));
  constexpr int threads = 6;
  constexpr int per_thread = 40;
  std::vector<session_id> sessions;
  sessions.reserve(threads / 2);
  for (int t = 0; t < threads / 2; ++t) sessions.push_back(new_session());

  std::atomic<int> acknowledged{0};
  std::vector<std::thread> workers;
  workers.reserve(threads);
  for (int t = 0; t < threads; ++t) {
    workers.emplace_back([&, t] {
      auto& io = new_io();
      for (int i = 0; i < per_thread; ++i) {
        // Two sessions per worker pair: appends to one session race each other too.
        const auto& s = sessions[static_cast<std::size_t>(t / 2)];
        auto r = tether::test::run_sync(io, store().append(append_request{s, {notice("x")}, std::nullopt, 0}));
        if (r) ++acknowledged;
      }
    });
  }
  for (auto& w : workers) w.join();
  EXPECT_EQ(acknowledged.load(), threads * per_thread);
  for (int t = 0; t < threads; t += 2) {
    const auto events = all_events(sessions[static_cast<std::size_t>(t / 2)]);
    ASSERT_EQ(events.size(), static_cast<std::size_t>(1 + 2 * per_thread));
    for (std::size_t i = 0; i < events.size(); ++i) EXPECT_EQ(events[i].seq.value, static_cast<std::int64_t>(i + 1));
  }
  const auto stats = sqlite_stats_of(store());
  EXPECT_GT(stats.largest_batch, 1U) << "no commit grouped two requests";
  EXPECT_LT(stats.commits, stats.requests);
}

TEST_F(append_sqlite, a_rejected_request_does_not_affect_others_in_the_same_commit) {
  commit_gate gate;
  auto o = options();
  o.fail_commit = [&gate] {
    gate.pass();
    return false;
  };
  open(std::move(o));
  const auto s = new_session();
  const auto stats_before = sqlite_stats_of(store());

  // Hold the writer at a commit, queue three requests behind it, release.
  gate.close();
  auto& io = new_io();
  std::optional<result<append_result>> blocker, good1, bad, good2;
  auto spawn = [&io](boost::asio::awaitable<result<append_result>> aw, std::optional<result<append_result>>* out) {
    boost::asio::co_spawn(
        io,
        [](boost::asio::awaitable<result<append_result>> a, std::optional<result<append_result>>* o)
            -> boost::asio::awaitable<void> { o->emplace(co_await std::move(a)); }(std::move(aw), out),
        boost::asio::detached);
  };
  spawn(store().append(append_request{s, {notice("blocker")}, std::nullopt, 0}), &blocker);
  std::thread runner([&io] { io.run(); });
  gate.wait_arrivals(1);
  spawn(store().append(append_request{s, {notice("good 1")}, std::nullopt, 0}), &good1);
  spawn(
      store().append(append_request{
          s, {notice("bad"), model::input_promoted{input_id::generate(), execution_id::generate()}}, std::nullopt, 0}),
      &bad);
  spawn(store().append(append_request{s, {notice("good 2")}, std::nullopt, 0}), &good2);
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
  const auto stats = sqlite_stats_of(store());
  EXPECT_EQ(stats.commits - stats_before.commits, 2U) << "the blocker, then the three together";
  EXPECT_GE(stats.largest_batch, 3U);
  const auto events = all_events(s);
  ASSERT_EQ(events.size(), 4U);
  EXPECT_EQ(events[2].as<model::synthetic>()->text, "good 1");
  EXPECT_EQ(events[3].as<model::synthetic>()->text, "good 2");
}

using fence_sqlite = store_test;

TEST_F(fence_sqlite, a_lease_owned_by_someone_else_fails_the_fence_and_writes_nothing) {
  open();
  const auto s = new_session();
  ASSERT_TRUE(run(store().claim_lease(s, "node-b/1", 30'000)));
  auto r = append(s, {notice("a"), notice("b")}, fence{.lease_owner = "node-a/1"});
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error(), store_errc::fence_failed);
  EXPECT_EQ(all_events(s).size(), 1U);
  EXPECT_EQ(last_seq(s), 1);
}

TEST_F(fence_sqlite, an_expired_lease_fails_the_fence) {
  open();
  const auto s = new_session();
  ASSERT_TRUE(run(store().claim_lease(s, "node-a/1", 30'000)));
  auto ok_now = append(s, {notice("while fresh")}, fence{.lease_owner = "node-a/1"});
  ASSERT_TRUE(ok_now) << why(ok_now);
  clock_.advance(30'000);
  auto r = append(s, {notice("too late")}, fence{.lease_owner = "node-a/1"});
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error(), store_errc::fence_failed);
  EXPECT_EQ(last_seq(s), 2);
}

TEST_F(fence_sqlite, no_lease_at_all_fails_a_lease_fence) {
  open();
  const auto s = new_session();
  auto r = append(s, {notice("x")}, fence{.lease_owner = "node-a/1"});
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error(), store_errc::fence_failed);
}

TEST_F(fence_sqlite, a_stale_last_seq_fails_the_fence) {
  open();
  const auto s = new_session();
  auto first = append(s, {notice("x")}, fence{.last_seq = event_seq{1}});
  ASSERT_TRUE(first) << why(first);
  auto stale = append(s, {notice("y")}, fence{.last_seq = event_seq{1}});
  ASSERT_FALSE(stale);
  EXPECT_EQ(stale.error(), store_errc::fence_failed);
  EXPECT_EQ(last_seq(s), 2);
}

TEST_F(fence_sqlite, an_open_execution_fails_a_no_open_execution_fence) {
  open();
  const auto s = new_session();
  const auto e1 = execution_id::generate();
  auto first = append(s, {started(e1)}, fence{.no_open_execution = true});
  ASSERT_TRUE(first) << why(first);
  auto second = append(s, {started(execution_id::generate())}, fence{.no_open_execution = true});
  ASSERT_FALSE(second);
  EXPECT_EQ(second.error(), store_errc::fence_failed);
  auto row = run(store().get_session(s));
  ASSERT_TRUE(row);
  EXPECT_EQ(row->open_execution, e1);
  EXPECT_EQ(row->last_seq.value, 2);
}

using schema_sqlite = store_test;

TEST_F(schema_sqlite, a_database_from_a_newer_tether_is_refused) {
  open();
  close_store();
  raw_exec(db_path(), "PRAGMA user_version = " + std::to_string(sqlite_schema_version() + 1));
  auto r = open_sqlite_store(options());
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error(), store_errc::schema_too_new);
  EXPECT_NE(r.error().message.find("database schema version " + std::to_string(sqlite_schema_version() + 1) +
                                   " is newer than this Tether (" + std::to_string(sqlite_schema_version()) + ")"),
            std::string::npos)
      << r.error().message;
}

TEST_F(schema_sqlite, a_new_database_gets_the_current_schema_version) {
  open();
  close_store();
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(db_path().c_str(), &db), SQLITE_OK);
  sqlite3_stmt* st = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &st, nullptr), SQLITE_OK);
  ASSERT_EQ(sqlite3_step(st), SQLITE_ROW);
  EXPECT_EQ(sqlite3_column_int(st, 0), sqlite_schema_version());
  sqlite3_finalize(st);
  sqlite3_close(db);
  open();  // reopening an up-to-date database migrates nothing
}

TEST_F(schema_sqlite, a_file_that_is_not_a_database_fails_to_open) {
  {
    std::ofstream f(db_path());
    f << "this is not a database, just some text that is long enough to fill a header. "
         "this is not a database, just some text that is long enough to fill a header.";
  }
  auto r = open_sqlite_store(options());
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error(), store_errc::open_failed);
}

TEST_F(schema_sqlite, a_path_in_a_missing_directory_fails_to_open) {
  auto o = options();
  o.path = (dir_ / "missing" / "tether.db").string();
  auto r = open_sqlite_store(std::move(o));
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error(), store_errc::open_failed);
  EXPECT_FALSE(r.error().message.empty());
}

using read_sqlite = store_test;

TEST_F(read_sqlite, pages_follow_after_and_limit_and_say_when_there_is_more) {
  open();
  const auto s = new_session();
  std::vector<model::payload> batch;
  batch.reserve(9);
  for (int i = 0; i < 9; ++i) batch.push_back(notice(std::to_string(i)));
  ASSERT_TRUE(append(s, std::move(batch)));  // seqs 2..10

  auto p1 = run(store().read(s, event_seq{0}, 4));
  ASSERT_TRUE(p1);
  ASSERT_EQ(p1->events.size(), 4U);
  EXPECT_EQ(p1->events.front().seq.value, 1);
  EXPECT_TRUE(p1->more);
  auto p2 = run(store().read(s, p1->events.back().seq, 4));
  ASSERT_TRUE(p2);
  ASSERT_EQ(p2->events.size(), 4U);
  EXPECT_EQ(p2->events.front().seq.value, 5);
  EXPECT_TRUE(p2->more);
  auto p3 = run(store().read(s, p2->events.back().seq, 4));
  ASSERT_TRUE(p3);
  ASSERT_EQ(p3->events.size(), 2U);
  EXPECT_EQ(p3->events.back().seq.value, 10);
  EXPECT_FALSE(p3->more);
  auto exact = run(store().read(s, event_seq{6}, 4));
  ASSERT_TRUE(exact);
  EXPECT_EQ(exact->events.size(), 4U);
  EXPECT_FALSE(exact->more);
  auto past = run(store().read(s, event_seq{10}, 4));
  ASSERT_TRUE(past);
  EXPECT_TRUE(past->events.empty());
  EXPECT_FALSE(past->more);
}

TEST_F(read_sqlite, reading_an_unknown_session_is_unknown_session) {
  open();
  auto r = run(store().read(session_id::generate(), event_seq{0}, 10));
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error(), store_errc::unknown_session);
  auto g = run(store().get_session(session_id::generate()));
  ASSERT_FALSE(g);
  EXPECT_EQ(g.error(), store_errc::unknown_session);
  auto i = run(store().get_input(input_id::generate()));
  ASSERT_FALSE(i);
  EXPECT_EQ(i.error(), store_errc::not_found);
}

TEST_F(read_sqlite, a_row_whose_data_is_not_json_is_corrupt_not_a_crash) {
  open();
  const auto s = new_session();
  ASSERT_TRUE(append(s, {notice("fine")}));
  raw_exec(db_path(), "UPDATE events SET data = 'not json' WHERE seq = 2");
  auto r = run(store().read(s, event_seq{0}, 10));
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error(), store_errc::corrupt);
  EXPECT_NE(r.error().message.find(s.str() + "/2"), std::string::npos) << r.error().message;
  auto before = run(store().read(s, event_seq{0}, 1));
  ASSERT_TRUE(before) << "rows before the bad one still read";
}

TEST_F(read_sqlite, a_row_of_unknown_type_is_undecodable) {
  open();
  const auto s = new_session();
  ASSERT_TRUE(append(s, {notice("fine")}));
  raw_exec(db_path(), "UPDATE events SET type = 'bogus.type' WHERE seq = 2");
  auto r = run(store().read(s, event_seq{1}, 10));
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error(), model::model_errc::undecodable);
  raw_exec(db_path(), "UPDATE events SET type = 'synthetic', data = '[1,2]' WHERE seq = 2");
  auto shape = run(store().read(s, event_seq{1}, 10));
  ASSERT_FALSE(shape);
  EXPECT_EQ(shape.error(), store_errc::corrupt);
  raw_exec(db_path(), "UPDATE events SET data = '{\"text\": 5}' WHERE seq = 2");
  auto field = run(store().read(s, event_seq{1}, 10));
  ASSERT_FALSE(field);
  EXPECT_EQ(field.error(), model::model_errc::undecodable);
}

TEST_F(read_sqlite, a_corrupt_projection_row_is_corrupt) {
  open();
  const auto s = new_session();
  const auto id = input_id::generate();
  ASSERT_TRUE(append(s, {admitted(id, "hi")}));
  raw_exec(db_path(), "UPDATE inputs SET delivery = 'sideways'");
  auto r = run(store().get_input(id));
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error(), store_errc::corrupt);
}

using lifecycle_sqlite = store_test;

TEST_F(lifecycle_sqlite, calls_after_stop_are_closed) {
  open();
  const auto s = new_session();
  store().stop();
  store().stop();  // idempotent
  auto w = append(s, {notice("x")});
  ASSERT_FALSE(w);
  EXPECT_EQ(w.error(), store_errc::closed);
  auto r = run(store().read(s, event_seq{0}, 10));
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error(), store_errc::closed);
}

TEST_F(lifecycle_sqlite, stop_finishes_queued_writes_first) {
  open();
  const auto s = new_session();
  auto& io = new_io();
  std::vector<std::optional<result<append_result>>> out(50);
  for (auto& o : out) {
    boost::asio::co_spawn(
        io,
        [](boost::asio::awaitable<result<append_result>> a,
           std::optional<result<append_result>>* dst) -> boost::asio::awaitable<void> {
          dst->emplace(co_await std::move(a));
        }(store().append(append_request{s, {notice("queued")}, std::nullopt, 0}), &o),
        boost::asio::detached);
  }
  io.poll();  // every append is now queued (initiated)
  store().stop();
  io.run();
  for (auto& o : out) {
    ASSERT_TRUE(o.has_value());
    EXPECT_TRUE(*o) << why(*o);
  }
  reopen();
  EXPECT_EQ(last_seq(s), 51);
}

TEST_F(schema_sqlite, a_version_1_database_keeps_its_sessions_and_their_last_seq_after_the_upgrade) {
  // Version 1 kept last_seq and updated_at in the sessions row; version 2
  // reads them from the log. Build a version 1 database by hand.
  {
    auto db = sqlite::connection::open(db_path(), sqlite::open_mode::read_write);
    ASSERT_TRUE(db) << db.error().describe();
    ASSERT_TRUE(sqlite::migrate(**db, 1));
  }
  const std::string s = session_id::generate().str();
  // clang-format off
  raw_exec(db_path(),
           "INSERT INTO sessions(id, last_seq, created_at, updated_at) VALUES('" + s + "', 2, 1000, 2000);"
           "INSERT INTO events(session_id, seq, id, type, version, time, data) VALUES"
           "('" + s + "', 1, 'evt_01', 'session.created', 1, 1000, '{\"title\":\"t\",\"workspace\":\"\",\"profile\":\"\"}'),"
           "('" + s + "', 2, 'evt_02', 'session.updated', 1, 2000, '{\"title\":\"u\"}');");
  // clang-format on
  open();
  auto row = run(store().get_session(session_id::trusted(s)));
  ASSERT_TRUE(row) << row.error().describe();
  EXPECT_EQ(row->last_seq.value, 2);
  EXPECT_EQ(row->updated_at, 2000);
  auto next = run(store().append(store::single_event(session_id::trusted(s), model::session_updated{"v"})));
  ASSERT_TRUE(next) << next.error().describe();
  EXPECT_EQ(next->last_seq.value, 3);
}

// SQL text of a v3 database's rows, for a test that builds one by hand.
std::string sql_text(std::string_view text) { return "'" + std::string(text) + "'"; }

std::string joined(const std::vector<std::string>& rows) {
  std::string out;
  for (const auto& r : rows) out += (out.empty() ? "" : ", ") + r;
  return out;
}

// (session, seq, id, type, version, time, data): the payload as the store writes it.
std::string event_values(int key, int seq, const model::payload& p, time_ms time) {
  return "(" + std::to_string(key) + ", " + std::to_string(seq) + ", " + sql_text(event_id::generate().str()) + ", " +
         sql_text(model::type_name(p)) + ", " + std::to_string(model::type_version(p)) + ", " + std::to_string(time) +
         ", " + sql_text(boost::json::serialize(model::encode(p))) + ")";
}

// (id, session_id, prompt, delivery, status, admitted_seq, execution_id)
std::string input_values(const input_id& id, const session_id& s, std::string_view status, int admitted_seq,
                         const std::optional<execution_id>& e = std::nullopt) {
  return "(" + sql_text(id.str()) + ", " + sql_text(s.str()) + ", 'prompt', 'steer', " + sql_text(status) + ", " +
         std::to_string(admitted_seq) + ", " + (e ? sql_text(e->str()) : "NULL") + ")";
}

// (id, session_id, node, status, started_seq)
std::string execution_values(const execution_id& id, const session_id& s, std::string_view status, int started_seq) {
  return "(" + sql_text(id.str()) + ", " + sql_text(s.str()) + ", 'n', " + sql_text(status) + ", " +
         std::to_string(started_seq) + ")";
}

// EXPLAIN QUERY PLAN of `sql`, one detail line per row.
std::string query_plan(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  EXPECT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  sqlite3_stmt* st = nullptr;
  const std::string explain = "EXPLAIN QUERY PLAN " + sql;
  EXPECT_EQ(sqlite3_prepare_v2(db, explain.c_str(), -1, &st, nullptr), SQLITE_OK) << sqlite3_errmsg(db);
  std::string plan;
  while (sqlite3_step(st) == SQLITE_ROW)
    plan += std::string(reinterpret_cast<const char*>(sqlite3_column_text(st, 3))) + "\n";
  sqlite3_finalize(st);
  sqlite3_close(db);
  return plan;
}

TEST_F(schema_sqlite, a_version_3_database_gets_promotion_seqs_and_execution_times_from_its_log) {
  {
    auto db = sqlite::connection::open(db_path(), sqlite::open_mode::read_write);
    ASSERT_TRUE(db) << db.error().describe();
    ASSERT_TRUE(sqlite::migrate(**db, 3));
  }
  // Two sessions, so the backfill must match each promotion to its own
  // session's input: s promotes a at seq 5 (b is cancelled, c still
  // pending); t promotes x at seq 4. Execution e finished, f and g did not.
  const auto s = session_id::generate();
  const auto t = session_id::generate();
  const auto a = input_id::generate();
  const auto b = input_id::generate();
  const auto c = input_id::generate();
  const auto x = input_id::generate();
  const auto e = execution_id::generate();
  const auto f = execution_id::generate();
  const auto g = execution_id::generate();
  const model::payload created = model::session_created{"t", "", ""};
  const model::payload finished_e = model::execution_finished{e, model::outcome::succeeded, "", "", {}};
  const std::vector<std::string> events{
      event_values(1, 1, created, 1000),
      event_values(1, 2, model::input_admitted{a, "prompt", {}}, 1100),
      event_values(1, 3, model::input_admitted{b, "prompt", {}}, 1200),
      event_values(1, 4, model::execution_started{e, "n"}, 1300),
      event_values(1, 5, model::input_promoted{a, e}, 1400),
      event_values(1, 6, model::input_cancelled{b, "user"}, 1450),
      event_values(1, 7, finished_e, 1500),
      event_values(1, 8, model::input_admitted{c, "prompt", {}}, 1550),
      event_values(1, 9, model::execution_started{f, "n"}, 1600),
      event_values(2, 1, created, 2000),
      event_values(2, 2, model::input_admitted{x, "prompt", {}}, 2100),
      event_values(2, 3, model::execution_started{g, "n"}, 2200),
      event_values(2, 4, model::input_promoted{x, g}, 2300),
  };
  const std::vector<std::string> inputs_rows{
      input_values(a, s, "promoted", 2, e),
      input_values(b, s, "cancelled", 3),
      input_values(c, s, "pending", 8),
      input_values(x, t, "promoted", 2, g),
  };
  const std::vector<std::string> executions_rows{
      execution_values(e, s, "finished", 4),
      execution_values(f, s, "running", 9),
      execution_values(g, t, "running", 3),
  };
  const std::string sql =
      "INSERT INTO sessions(id, created_at, key, open_execution) VALUES(" + sql_text(s.str()) + ", 1000, 1, " +
      sql_text(f.str()) + "), (" + sql_text(t.str()) + ", 1000, 2, " + sql_text(g.str()) + ");" +
      "INSERT INTO events(session, seq, id, type, version, time, data) VALUES " + joined(events) + ";" +
      "INSERT INTO inputs(id, session_id, prompt, delivery, status, admitted_seq, execution_id) VALUES " +
      joined(inputs_rows) + ";" + "INSERT INTO executions(id, session_id, node, status, started_seq) VALUES " +
      joined(executions_rows) + ";";
  raw_exec(db_path(), sql);
  open();

  auto inputs = run(store().list_inputs(s));
  ASSERT_TRUE(inputs) << why(inputs);
  ASSERT_EQ(inputs->size(), 3U);
  EXPECT_EQ((*inputs)[0].promoted_seq, std::optional(event_seq{5}));
  EXPECT_FALSE((*inputs)[1].promoted_seq.has_value());
  EXPECT_FALSE((*inputs)[2].promoted_seq.has_value());
  auto other = run(store().get_input(x));
  ASSERT_TRUE(other) << why(other);
  EXPECT_EQ(other->promoted_seq, std::optional(event_seq{4}));

  auto done = run(store().get_execution(e));
  ASSERT_TRUE(done) << why(done);
  EXPECT_EQ(done->started_at, 1300);
  EXPECT_EQ(done->finished_at, std::optional<time_ms>(1500));
  auto open_one = run(store().get_execution(f));
  ASSERT_TRUE(open_one) << why(open_one);
  EXPECT_EQ(open_one->started_at, 1600);
  EXPECT_FALSE(open_one->finished_at.has_value());
  auto elsewhere = run(store().get_execution(g));
  ASSERT_TRUE(elsewhere) << why(elsewhere);
  EXPECT_EQ(elsewhere->started_at, 2200);

  // The upgraded database takes new events and projects them as usual.
  ASSERT_TRUE(append(s, {finished(f), model::input_promoted{c, f}}, std::nullopt, 9000));
  auto c_row = run(store().get_input(c));
  ASSERT_TRUE(c_row) << why(c_row);
  EXPECT_EQ(c_row->promoted_seq, std::optional(event_seq{11}));
  auto f_row = run(store().get_execution(f));
  ASSERT_TRUE(f_row);
  EXPECT_EQ(f_row->finished_at, std::optional<time_ms>(9000));
}

TEST_F(schema_sqlite, all_inputs_and_all_interactions_of_a_session_are_listed_through_an_index) {
  open();
  close_store();
  for (const std::string sql : {"SELECT id FROM inputs WHERE session_id = 'x' ORDER BY admitted_seq",
                                "SELECT id FROM interactions WHERE session_id = 'x' ORDER BY requested_seq"}) {
    const auto plan = query_plan(db_path(), sql);
    EXPECT_NE(plan.find("USING INDEX"), std::string::npos) << sql << "\n" << plan;
    EXPECT_EQ(plan.find("TEMP B-TREE"), std::string::npos) << "sorted by the index: " << sql << "\n" << plan;
  }
}

}  // namespace
}  // namespace tether::store::test
