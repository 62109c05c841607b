// list_stranded: the sessions with an acknowledged input that nobody runs
// (a pending input admitted with resume, no open execution, no pending
// interaction), found through the index of pending resume inputs.
#include "store/event_store.h"

#include <algorithm>
#include <set>

#include "store/sqlite/db.h"
#include "store/sqlite/queries.h"
#include "store/sqlite/schema.h"
#include "store_fixture.h"

namespace tether::store::test {
namespace {

class stranded_sqlite : public store_test {
 protected:
  std::vector<session_id> stranded(std::optional<session_id> after = std::nullopt, std::size_t limit = 100) {
    auto r = run(store().list_stranded(std::move(after), limit));
    EXPECT_TRUE(r) << why(r);
    return r ? *r : std::vector<session_id>{};
  }
  bool listed(const session_id& s) {
    const auto all = stranded();
    return std::find(all.begin(), all.end(), s) != all.end();
  }
  static model::payload admitted_with(const input_id& id, bool resume,
                                      model::delivery d = model::delivery::steer) {
    return model::input_admitted{id, "prompt", d, resume};
  }
};

TEST_F(stranded_sqlite, a_pending_input_admitted_with_resume_and_nothing_running_is_listed) {
  open();
  const auto s = new_session();
  ASSERT_TRUE(append(s, {admitted_with(input_id::generate(), true, model::delivery::queue)}));
  EXPECT_EQ(stranded(), std::vector<session_id>{s});
}

TEST_F(stranded_sqlite, an_input_admitted_without_resume_is_not_listed) {
  open();
  const auto s = new_session();
  ASSERT_TRUE(append(s, {admitted_with(input_id::generate(), false)}));
  EXPECT_TRUE(stranded().empty());
  // A later input that asks for a run lists it.
  ASSERT_TRUE(append(s, {admitted_with(input_id::generate(), true)}));
  EXPECT_EQ(stranded(), std::vector<session_id>{s});
}

TEST_F(stranded_sqlite, a_session_with_an_open_execution_is_recoverys_other_list_not_this_one) {
  open();
  const auto s = new_session();
  const auto e = execution_id::generate();
  ASSERT_TRUE(append(s, {started(e), admitted_with(input_id::generate(), true)}));
  EXPECT_TRUE(stranded().empty());
  ASSERT_TRUE(append(s, {finished(e)}));  // the pending steer outlives it: now it is stranded
  EXPECT_TRUE(listed(s));
}

TEST_F(stranded_sqlite, promoted_and_cancelled_inputs_are_not_pending) {
  open();
  const auto s = new_session();
  const auto a = input_id::generate();
  const auto b = input_id::generate();
  const auto e = execution_id::generate();
  ASSERT_TRUE(append(s, {admitted_with(a, true), admitted_with(b, true)}));
  ASSERT_TRUE(append(s, {started(e), model::input_promoted{a, e}, model::input_cancelled{b, "user"}, finished(e)}));
  EXPECT_TRUE(stranded().empty());
}

TEST_F(stranded_sqlite, a_session_waiting_for_a_human_keeps_its_inputs_waiting_too) {
  open();
  const auto s = new_session();
  const auto i = interaction_id::generate();
  ASSERT_TRUE(append(s, {model::interaction_requested{i, {}, "question", boost::json::object{}},
                         admitted_with(input_id::generate(), true)}));
  EXPECT_TRUE(stranded().empty());
  ASSERT_TRUE(append(s, {model::interaction_resolved{i, "answered", boost::json::object{}}}));
  EXPECT_TRUE(listed(s));
}

TEST_F(stranded_sqlite, an_answered_question_whose_turn_has_not_continued_is_listed_until_it_starts) {
  open();
  const auto s = new_session();
  const auto i = interaction_id::generate();
  const auto e = execution_id::generate();
  ASSERT_TRUE(append(s, {started(e), model::interaction_requested{i, {}, "question", boost::json::object{}}}));
  ASSERT_TRUE(append(s, {finished(e, model::outcome::waiting)}));
  EXPECT_TRUE(stranded().empty());  // waiting for a human
  ASSERT_TRUE(append(s, {model::interaction_resolved{i, "answered", boost::json::object{}}}));
  EXPECT_EQ(stranded(), std::vector<session_id>{s});  // answered: its turn must continue
  const auto next = execution_id::generate();
  ASSERT_TRUE(append(s, {started(next)}));
  EXPECT_TRUE(stranded().empty());  // continuing
  ASSERT_TRUE(append(s, {finished(next)}));
  EXPECT_TRUE(stranded().empty());  // continued
}

TEST_F(stranded_sqlite, a_session_listed_for_both_reasons_is_listed_once) {
  open();
  const auto s = new_session();
  const auto i = interaction_id::generate();
  ASSERT_TRUE(append(s, {model::interaction_requested{i, {}, "question", boost::json::object{}},
                         admitted_with(input_id::generate(), true)}));
  ASSERT_TRUE(append(s, {model::interaction_resolved{i, "answered", boost::json::object{}}}));
  EXPECT_EQ(stranded(), std::vector<session_id>{s});
}

TEST_F(stranded_sqlite, a_quarantined_session_is_not_listed) {
  open();
  const auto s = new_session();
  ASSERT_TRUE(append(s, {admitted_with(input_id::generate(), true)}));
  ASSERT_TRUE(run(store().quarantine(s, "test")));
  EXPECT_TRUE(stranded().empty());
}

TEST_F(stranded_sqlite, inputs_left_pending_by_a_stop_wait_for_the_next_wake_not_for_recovery) {
  open();
  const auto s = new_session();
  const auto e = execution_id::generate();
  ASSERT_TRUE(append(s, {started(e), admitted_with(input_id::generate(), true, model::delivery::queue),
                         finished(e, model::outcome::interrupted)}));
  EXPECT_TRUE(stranded().empty());
  // An input admitted after the stop asks for a run of its own.
  ASSERT_TRUE(append(s, {admitted_with(input_id::generate(), true)}));
  EXPECT_TRUE(listed(s));
  // Other outcomes leave pending inputs to the next execution.
  const auto t = new_session();
  const auto f = execution_id::generate();
  ASSERT_TRUE(append(t, {started(f), admitted_with(input_id::generate(), true, model::delivery::queue),
                         finished(f, model::outcome::failed)}));
  EXPECT_TRUE(listed(t));
}

TEST_F(stranded_sqlite, each_session_is_listed_once_in_id_order_and_pages_follow_after_and_limit) {
  open();
  std::set<session_id> all;
  for (int i = 0; i < 5; ++i) {
    const auto s = new_session();
    all.insert(s);
    ASSERT_TRUE(append(s, {admitted_with(input_id::generate(), true), admitted_with(input_id::generate(), true)}));
  }
  const std::vector<session_id> expected(all.begin(), all.end());
  EXPECT_EQ(stranded(), expected);
  auto first = stranded(std::nullopt, 2);
  ASSERT_EQ(first.size(), 2U);
  auto second = stranded(first.back(), 2);
  ASSERT_EQ(second.size(), 2U);
  auto third = stranded(second.back(), 2);
  ASSERT_EQ(third.size(), 1U);
  first.insert(first.end(), second.begin(), second.end());
  first.insert(first.end(), third.begin(), third.end());
  EXPECT_EQ(first, expected);
}

TEST_F(stranded_sqlite, a_version_5_database_reads_its_pending_inputs_as_asking_for_a_run) {
  {
    auto db = sqlite::connection::open(db_path(), sqlite::open_mode::read_write);
    ASSERT_TRUE(db) << db.error().describe();
    ASSERT_TRUE(sqlite::migrate(**db, 5));
  }
  // A session left by an older binary: one input admitted (v1 event, no
  // `resume`), never promoted, nothing running.
  const auto s = session_id::generate();
  const auto in = input_id::generate();
  raw_exec(db_path(),
           "INSERT INTO sessions(id, created_at, key) VALUES('" + s.str() +
               "', 1000, 1);"
               "INSERT INTO events(session, seq, id, type, version, time, data) VALUES"
               "(1, 1, '" + event_id::generate().str() + "', 'session.created', 1, 1000, '{\"title\":\"\",\"workspace\":\"\",\"profile\":\"\"}'),"
               "(1, 2, '" + event_id::generate().str() + "', 'input.admitted', 1, 1100, '{\"input_id\":\"" + in.str() +
               "\",\"prompt\":\"p\",\"delivery\":\"steer\"}');"
               "INSERT INTO inputs(id, session_id, prompt, delivery, status, admitted_seq) VALUES('" + in.str() + "', '" +
               s.str() + "', 'p', 'steer', 'pending', 2);");
  open();
  EXPECT_EQ(stranded(), std::vector<session_id>{s});
  // Its stored event keeps version 1 and reads back as resume: true.
  const auto events = all_events(s);
  ASSERT_EQ(events.size(), 2U);
  const auto* a = events[1].as<model::input_admitted>();
  ASSERT_NE(a, nullptr);
  EXPECT_TRUE(a->resume);
}

TEST_F(stranded_sqlite, the_listing_reads_the_pending_resume_index_not_every_session) {
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
