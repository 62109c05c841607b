// list_stranded: the sessions with an acknowledged input that nobody runs
// (a pending input admitted with resume, no open execution, no pending
// interaction). (That SQLite finds them through its partial indexes is
// sqlite_schema_test's.)
#include "store/event_store.h"

#include <algorithm>
#include <set>

#include "backends.h"

namespace tether::store::test {
namespace {

template <class F>
class stranded_sessions : public store_test<F> {
 protected:
  std::vector<session_id> stranded(std::optional<session_id> after = std::nullopt, std::size_t limit = 100) {
    auto r = this->run(this->store().list_stranded(std::move(after), limit));
    EXPECT_TRUE(r) << why(r);
    return r ? *r : std::vector<session_id>{};
  }
  bool listed(const session_id& s) {
    const auto all = stranded();
    return std::find(all.begin(), all.end(), s) != all.end();
  }
  static model::payload admitted_with(const input_id& id, bool resume, model::delivery d = model::delivery::steer) {
    return model::input_admitted{id, "prompt", d, resume};
  }
};
TYPED_TEST_SUITE(stranded_sessions, backends, backend_names);

TYPED_TEST(stranded_sessions, a_pending_input_admitted_with_resume_and_nothing_running_is_listed) {
  this->open();
  const auto s = this->new_session();
  ASSERT_TRUE(this->append(s, {this->admitted_with(input_id::generate(), true, model::delivery::queue)}));
  EXPECT_EQ(this->stranded(), std::vector<session_id>{s});
}

TYPED_TEST(stranded_sessions, an_input_admitted_without_resume_is_not_listed) {
  this->open();
  const auto s = this->new_session();
  ASSERT_TRUE(this->append(s, {this->admitted_with(input_id::generate(), false)}));
  EXPECT_TRUE(this->stranded().empty());
  // A later input that asks for a run lists it.
  ASSERT_TRUE(this->append(s, {this->admitted_with(input_id::generate(), true)}));
  EXPECT_EQ(this->stranded(), std::vector<session_id>{s});
}

TYPED_TEST(stranded_sessions, a_session_with_an_open_execution_is_recoverys_other_list_not_this_one) {
  this->open();
  const auto s = this->new_session();
  const auto e = execution_id::generate();
  ASSERT_TRUE(this->append(s, {started(e), this->admitted_with(input_id::generate(), true)}));
  EXPECT_TRUE(this->stranded().empty());
  ASSERT_TRUE(this->append(s, {finished(e)}));  // the pending steer outlives it: now it is stranded
  EXPECT_TRUE(this->listed(s));
}

TYPED_TEST(stranded_sessions, promoted_and_cancelled_inputs_are_not_pending) {
  this->open();
  const auto s = this->new_session();
  const auto a = input_id::generate();
  const auto b = input_id::generate();
  const auto e = execution_id::generate();
  ASSERT_TRUE(this->append(s, {this->admitted_with(a, true), this->admitted_with(b, true)}));
  ASSERT_TRUE(
      this->append(s, {started(e), model::input_promoted{a, e}, model::input_cancelled{b, "user"}, finished(e)}));
  EXPECT_TRUE(this->stranded().empty());
}

TYPED_TEST(stranded_sessions, an_input_given_back_by_a_failed_execution_is_listed_even_if_admitted_without_resume) {
  this->open();
  const auto s = this->new_session();
  const auto a = input_id::generate();
  const auto e = execution_id::generate();
  // Admitted without a run; a later resume promoted it; its execution failed
  // without answering it and gave it back: it is owed a run.
  ASSERT_TRUE(this->append(s, {this->admitted_with(a, false)}));
  ASSERT_TRUE(this->append(s, {started(e), model::input_promoted{a, e}}));
  EXPECT_TRUE(this->stranded().empty());
  ASSERT_TRUE(
      this->append(s, {model::input_returned{a, e, "storage_failed", 1}, finished(e, model::outcome::failed)}));
  EXPECT_EQ(this->stranded(), std::vector<session_id>{s});
  const auto next = execution_id::generate();
  ASSERT_TRUE(this->append(s, {started(next), model::input_promoted{a, next}}));
  EXPECT_TRUE(this->stranded().empty());
}

TYPED_TEST(stranded_sessions, a_session_waiting_for_a_human_keeps_its_inputs_waiting_too) {
  this->open();
  const auto s = this->new_session();
  const auto i = interaction_id::generate();
  ASSERT_TRUE(this->append(s, {model::interaction_requested{i, {}, "question", boost::json::object{}},
                               this->admitted_with(input_id::generate(), true)}));
  EXPECT_TRUE(this->stranded().empty());
  ASSERT_TRUE(this->append(s, {model::interaction_resolved{i, "answered", boost::json::object{}}}));
  EXPECT_TRUE(this->listed(s));
}

TYPED_TEST(stranded_sessions, an_answered_question_whose_turn_has_not_continued_is_listed_until_it_starts) {
  this->open();
  const auto s = this->new_session();
  const auto i = interaction_id::generate();
  const auto e = execution_id::generate();
  ASSERT_TRUE(this->append(s, {started(e), model::interaction_requested{i, {}, "question", boost::json::object{}}}));
  ASSERT_TRUE(this->append(s, {finished(e, model::outcome::waiting)}));
  EXPECT_TRUE(this->stranded().empty());  // waiting for a human
  ASSERT_TRUE(this->append(s, {model::interaction_resolved{i, "answered", boost::json::object{}}}));
  EXPECT_EQ(this->stranded(), std::vector<session_id>{s});  // answered: its turn must continue
  const auto next = execution_id::generate();
  ASSERT_TRUE(this->append(s, {started(next)}));
  EXPECT_TRUE(this->stranded().empty());  // continuing
  ASSERT_TRUE(this->append(s, {finished(next)}));
  EXPECT_TRUE(this->stranded().empty());  // continued
}

TYPED_TEST(stranded_sessions, a_session_listed_for_both_reasons_is_listed_once) {
  this->open();
  const auto s = this->new_session();
  const auto i = interaction_id::generate();
  ASSERT_TRUE(this->append(s, {model::interaction_requested{i, {}, "question", boost::json::object{}},
                               this->admitted_with(input_id::generate(), true)}));
  ASSERT_TRUE(this->append(s, {model::interaction_resolved{i, "answered", boost::json::object{}}}));
  EXPECT_EQ(this->stranded(), std::vector<session_id>{s});
}

TYPED_TEST(stranded_sessions, a_quarantined_session_is_not_listed) {
  this->open();
  const auto s = this->new_session();
  ASSERT_TRUE(this->append(s, {this->admitted_with(input_id::generate(), true)}));
  ASSERT_TRUE(this->run(this->store().quarantine(s, "test")));
  EXPECT_TRUE(this->stranded().empty());
}

TYPED_TEST(stranded_sessions, inputs_left_pending_by_a_stop_wait_for_the_next_wake_not_for_recovery) {
  this->open();
  const auto s = this->new_session();
  const auto e = execution_id::generate();
  ASSERT_TRUE(this->append(s, {started(e), this->admitted_with(input_id::generate(), true, model::delivery::queue),
                               finished(e, model::outcome::interrupted)}));
  EXPECT_TRUE(this->stranded().empty());
  // An input admitted after the stop asks for a run of its own.
  ASSERT_TRUE(this->append(s, {this->admitted_with(input_id::generate(), true)}));
  EXPECT_TRUE(this->listed(s));
  // Other outcomes leave pending inputs to the next execution.
  const auto t = this->new_session();
  const auto f = execution_id::generate();
  ASSERT_TRUE(this->append(t, {started(f), this->admitted_with(input_id::generate(), true, model::delivery::queue),
                               finished(f, model::outcome::failed)}));
  EXPECT_TRUE(this->listed(t));
}

TYPED_TEST(stranded_sessions, each_session_is_listed_once_in_id_order_and_pages_follow_after_and_limit) {
  this->open();
  std::set<session_id> all;
  for (int i = 0; i < 5; ++i) {
    const auto s = this->new_session();
    all.insert(s);
    ASSERT_TRUE(this->append(
        s, {this->admitted_with(input_id::generate(), true), this->admitted_with(input_id::generate(), true)}));
  }
  const std::vector<session_id> expected(all.begin(), all.end());
  EXPECT_EQ(this->stranded(), expected);
  auto first = this->stranded(std::nullopt, 2);
  ASSERT_EQ(first.size(), 2U);
  auto second = this->stranded(first.back(), 2);
  ASSERT_EQ(second.size(), 2U);
  auto third = this->stranded(second.back(), 2);
  ASSERT_EQ(third.size(), 1U);
  first.insert(first.end(), second.begin(), second.end());
  first.insert(first.end(), third.begin(), third.end());
  EXPECT_EQ(first, expected);
}

}  // namespace
}  // namespace tether::store::test
