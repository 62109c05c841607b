// SQLite only: schema migrations from older databases, and the indexes the
// listings read (query plans).
#include "store/sqlite/schema.h"

#include <boost/json/serialize.hpp>

#include "sqlite_fixture.h"
#include "store/sqlite/db.h"
#include "store/sqlite/queries.h"
#include "store/sqlite/sqlite_store.h"

namespace tether::store::test {
namespace {

using schema_sqlite = sqlite_store_test;

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

TEST_F(schema_sqlite, a_version_5_database_reads_its_pending_inputs_as_asking_for_a_run) {
  {
    auto db = sqlite::connection::open(db_path(), sqlite::open_mode::read_write);
    ASSERT_TRUE(db) << db.error().describe();
    ASSERT_TRUE(sqlite::migrate(**db, 5));
  }
  // A session left by an older binary: one input admitted (v1 event, no
  // `resume`), never promoted, nothing running.
  const auto s = session_id::generate();
  const auto in = input_id::generate();
  raw_exec(db_path(), "INSERT INTO sessions(id, created_at, key) VALUES('" + s.str() +
                          "', 1000, 1);"
                          "INSERT INTO events(session, seq, id, type, version, time, data) VALUES"
                          "(1, 1, '" +
                          event_id::generate().str() +
                          "', 'session.created', 1, 1000, '{\"title\":\"\",\"workspace\":\"\",\"profile\":\"\"}'),"
                          "(1, 2, '" +
                          event_id::generate().str() + "', 'input.admitted', 1, 1100, '{\"input_id\":\"" + in.str() +
                          "\",\"prompt\":\"p\",\"delivery\":\"steer\"}');"
                          "INSERT INTO inputs(id, session_id, prompt, delivery, status, admitted_seq) VALUES('" +
                          in.str() + "', '" + s.str() + "', 'p', 'steer', 'pending', 2);");
  open();
  auto stranded = run(store().list_stranded(std::nullopt, 100));
  ASSERT_TRUE(stranded) << why(stranded);
  EXPECT_EQ(*stranded, std::vector<session_id>{s});
  // Its stored event keeps version 1 and reads back as resume: true.
  const auto events = all_events(s);
  ASSERT_EQ(events.size(), 2U);
  const auto* a = events[1].as<model::input_admitted>();
  ASSERT_NE(a, nullptr);
  EXPECT_TRUE(a->resume);
}

TEST_F(schema_sqlite, a_version_7_database_keeps_its_binding_at_the_sessions_generation_and_ran_native) {
  {
    auto db = sqlite::connection::open(db_path(), sqlite::open_mode::read_write);
    ASSERT_TRUE(db) << db.error().describe();
    ASSERT_TRUE(sqlite::migrate(**db, 7));
  }
  // Written by an older binary: s, reset twice, bound by a v1 runtime.bound
  // after its last reset, with an open execution, a hosted and a local call;
  // t never ran anything.
  const auto s = session_id::generate();
  const auto t = session_id::generate();
  const auto e = execution_id::generate();
  const auto hosted = call_id::generate();
  const auto local = call_id::generate();
  const std::string data = R"('{"title":"","workspace":"","profile":""}')";
  raw_exec(
      db_path(),
      "INSERT INTO sessions(id, created_at, key, generation, runtime, external_session_id, open_execution) "
      "VALUES(" +
          sql_text(s.str()) + ", 1000, 1, 2, 'codex', 'thread-9', " + sql_text(e.str()) + "), (" + sql_text(t.str()) +
          ", 1000, 2, 0, '', '', NULL);"
          "INSERT INTO events(session, seq, id, type, version, time, data) VALUES (1, 1, " +
          sql_text(event_id::generate().str()) + ", 'session.created', 1, 1000, " + data + "), (2, 1, " +
          sql_text(event_id::generate().str()) + ", 'session.created', 1, 1000, " + data + ");" +
          "INSERT INTO executions(id, session_id, node, status, started_seq) VALUES " +
          execution_values(e, s, "running", 1) + ";" +
          "INSERT INTO tool_calls(id, session_id, execution_id, name, input, hosted, status, called_seq) VALUES (" +
          sql_text(hosted.str()) + ", " + sql_text(s.str()) + ", " + sql_text(e.str()) +
          ", 'web', '{}', 1, 'running', 1), (" + sql_text(local.str()) + ", " + sql_text(s.str()) + ", " +
          sql_text(e.str()) + ", 'bash', '{}', 0, 'running', 1);");
  open();
  auto row = run(store().get_session(s));
  ASSERT_TRUE(row) << why(row);
  ASSERT_TRUE(row->binding);
  EXPECT_EQ(row->binding->runtime, "codex");
  EXPECT_EQ(row->binding->external_session_id, "thread-9");
  EXPECT_EQ(row->binding->generation, 2) << "bound after the last reset: the session's generation";
  EXPECT_EQ(row->runtime, "native") << "what ran before runtimes were recorded";
  auto idle = run(store().get_session(t));
  ASSERT_TRUE(idle) << why(idle);
  EXPECT_FALSE(idle->binding);
  EXPECT_EQ(idle->runtime, "") << "nothing ran";
  auto exe = run(store().get_execution(e));
  ASSERT_TRUE(exe) << why(exe);
  EXPECT_EQ(exe->runtime, "native");
  auto calls = run(store().unsettled_calls(s));
  ASSERT_TRUE(calls) << why(calls);
  ASSERT_EQ(calls->size(), 2U);
  for (const auto& c : *calls) EXPECT_EQ(c.kind, c.id == hosted ? model::tool_kind::hosted : model::tool_kind::local);
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

TEST_F(schema_sqlite, the_listing_reads_the_pending_resume_index_not_every_session) {
  open();
  close_store();
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(db_path().c_str(), &db), SQLITE_OK);
  sqlite3_stmt* st = nullptr;
  // The listing's own statement, as the store prepares it.
  const std::string sql = std::string("EXPLAIN QUERY PLAN ") + sqlite::list_stranded_sql;
  ASSERT_EQ(sqlite3_prepare_v2(db, sql.c_str(), -1, &st, nullptr), SQLITE_OK) << sqlite3_errmsg(db);
  std::string plan;
  while (sqlite3_step(st) == SQLITE_ROW)
    plan += std::string(reinterpret_cast<const char*>(sqlite3_column_text(st, 3))) + "\n";
  sqlite3_finalize(st);
  sqlite3_close(db);
  EXPECT_NE(plan.find("inputs_pending_resume"), std::string::npos) << plan;
  EXPECT_NE(plan.find("sessions_continuation_pending"), std::string::npos) << plan;
  EXPECT_EQ(plan.find("SCAN s"), std::string::npos) << "sessions are looked up by key:\n" << plan;
  EXPECT_EQ(plan.find("SCAN x"), std::string::npos) << plan;
}

}  // namespace
}  // namespace tether::store::test
