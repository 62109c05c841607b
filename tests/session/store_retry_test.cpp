// A store that cannot write or read for a moment (a database restart, a
// killed connection) does not fail a turn: the runner tries the write again
// while the lease holds, without writing anything twice (a commit reported
// failed may have landed), and keeps the turn's writes in order. A turn that
// still fails because of the store gives the inputs it never answered back
// to pending, so the next execution runs them, up to a limit. Faults come
// from flaky_store, between the runner and a real SQLite store.
#include "session/service.h"

#include <algorithm>

#include "session/errors.h"
#include "session/fixture.h"
#include "session/flaky_store.h"

namespace tether::testing {
namespace {

using model::delivery;
using session::start_mode;
using fault = flaky_store::fault;

class store_retry_test : public session_fixture {
 protected:
  store_retry_test() : flaky_(*store_) {}
  // The service reaches the store through flaky_: stop it first.
  ~store_retry_test() override { stop_service(); }

  static session::session_options options() {
    auto o = test_options();
    o.storage_retry_ms = 1;
    o.storage_retry_max_ms = 5;
    return o;
  }
  // Turns that give up at the first storage failure: the reserve kept for
  // the execution's end is the whole lease.
  static session::session_options no_retry() {
    auto o = options();
    o.storage_end_reserve_ms = o.lease_ttl_ms;
    return o;
  }
  void start(session::session_options o = options()) {
    service_ = std::make_unique<session::session_service>(io_.get_executor(), flaky_, runtime_, clock_,
                                                          session::make_node_identity("n1"), o);
  }

  std::vector<std::string> texts(const session_id& s, std::string_view type) {
    std::vector<std::string> out;
    for (const auto& e : events(s)) {
      if (e.type() != type) continue;
      if (const auto* t = e.as<model::text_ended>()) out.push_back(t->text);
      if (const auto* n = e.as<model::synthetic>()) out.push_back(n->text);
    }
    return out;
  }
  std::vector<model::execution_finished> finished(const session_id& s) {
    std::vector<model::execution_finished> out;
    for (const auto& e : events(s))
      if (const auto* f = e.as<model::execution_finished>()) out.push_back(*f);
    return out;
  }
  std::vector<model::input_returned> returned(const session_id& s) {
    std::vector<model::input_returned> out;
    for (const auto& e : events(s))
      if (const auto* r = e.as<model::input_returned>()) out.push_back(*r);
    return out;
  }
  std::size_t promotions_of(const session_id& s, const input_id& in) {
    std::size_t n = 0;
    for (const auto& e : events(s))
      if (const auto* p = e.as<model::input_promoted>(); p != nullptr && p->input == in) ++n;
    return n;
  }
  store::input_row input(const input_id& id) {
    auto r = run(store_->get_input(id));
    EXPECT_TRUE(r) << r.error().describe();
    return r ? *r : store::input_row{};
  }
  // The executions that finished, in order, with their outcome.
  std::vector<model::outcome> outcomes(const session_id& s) {
    std::vector<model::outcome> out;
    for (const auto& f : finished(s)) out.push_back(f.outcome);
    return out;
  }

  flaky_store flaky_;
};

TEST_F(store_retry_test, a_turns_write_the_store_refused_once_is_written_once_and_the_turn_succeeds) {
  start();
  const auto s = new_session();
  runtime_.script({text("first answer"), text("second answer")});
  flaky_.fail_appends(flaky_store::saying("first answer"), fault::lost);
  flaky_.fail_appends(flaky_store::saying("second answer"), fault::unavailable, 3);
  admit(s, "go");
  idle(s);
  EXPECT_EQ(flaky_.injected(), 4);
  EXPECT_TRUE(runtime_.host_errors().empty()) << runtime_.host_errors().front().describe();
  EXPECT_EQ(texts(s, "text.ended"), (std::vector<std::string>{"first answer", "second answer"}));
  EXPECT_EQ(outcomes(s), std::vector<model::outcome>{model::outcome::succeeded});
  EXPECT_EQ(count(s, "input.returned"), 0U);
}

TEST_F(store_retry_test, a_commit_reported_failed_that_landed_is_found_and_not_written_again) {
  start();
  const auto s = new_session();
  runtime_.script({text("landed unseen"), text("after it")});
  flaky_.fail_appends(flaky_store::saying("landed unseen"), fault::landed);
  admit(s, "go");
  idle(s);
  EXPECT_EQ(flaky_.injected(), 1);
  EXPECT_TRUE(runtime_.host_errors().empty()) << "the runtime is told of the write that landed as of any other";
  EXPECT_EQ(texts(s, "text.ended"), (std::vector<std::string>{"landed unseen", "after it"}));
  EXPECT_EQ(count(s, "step.started"), 2U);
  EXPECT_EQ(outcomes(s), std::vector<model::outcome>{model::outcome::succeeded});
}

TEST_F(store_retry_test, a_promotion_refused_or_landed_unseen_promotes_each_steer_once) {
  start();
  const auto s = new_session();
  runtime_.script({gate(), boundary(), gate(), boundary(), text("took both")});
  admit(s, "start");
  ASSERT_TRUE(eventually([&] { return runtime_.arrivals() == 1; }));
  const auto one = admit(s, "steer 1").input.id;
  flaky_.fail_appends(flaky_store::holding<model::input_promoted>(), fault::lost);
  flaky_.fail_pending_reads(1);
  runtime_.open_gate();
  ASSERT_TRUE(eventually([&] { return runtime_.arrivals() == 2; }));
  const auto two = admit(s, "steer 2").input.id;
  flaky_.fail_appends(flaky_store::holding<model::input_promoted>(), fault::landed);
  runtime_.open_gate();
  idle(s);
  EXPECT_EQ(flaky_.injected(), 3);
  EXPECT_TRUE(runtime_.host_errors().empty()) << runtime_.host_errors().front().describe();
  const auto boundaries = runtime_.boundaries();
  ASSERT_EQ(boundaries.size(), 2U);
  ASSERT_EQ(boundaries[0].size(), 1U);
  EXPECT_EQ(boundaries[0][0].id, one.str());
  ASSERT_EQ(boundaries[1].size(), 1U);
  EXPECT_EQ(boundaries[1][0].id, two.str());
  EXPECT_EQ(promotions_of(s, one), 1U);
  EXPECT_EQ(promotions_of(s, two), 1U);
  EXPECT_EQ(outcomes(s), std::vector<model::outcome>{model::outcome::succeeded});
}

TEST_F(store_retry_test, a_soon_write_that_failed_landed_or_not_is_in_the_log_once_before_the_writes_after_it) {
  start();
  for (const auto f : {fault::lost, fault::landed}) {
    SCOPED_TRACE(f == fault::lost ? "lost" : "landed");
    const auto s = new_session();
    runtime_.script({soon("a"), soon("b"), text("done")});
    flaky_.fail_appends(flaky_store::saying("a"), f);
    admit(s, "go");
    idle(s);
    EXPECT_EQ(texts(s, "synthetic"), (std::vector<std::string>{"a", "b"})) << "in order, once each";
    EXPECT_EQ(texts(s, "text.ended"), std::vector<std::string>{"done"});
    EXPECT_EQ(outcomes(s), std::vector<model::outcome>{model::outcome::succeeded});
  }
  EXPECT_EQ(flaky_.injected(), 2);
  EXPECT_TRUE(runtime_.host_errors().empty()) << runtime_.host_errors().front().describe();
}

TEST_F(store_retry_test, a_turn_failed_by_the_store_gives_back_only_the_inputs_no_answer_followed) {
  start(no_retry());
  const auto s = new_session();
  runtime_.script({text("to the first"), gate(), boundary(), text("to the steer")});
  runtime_.script({text("to the steer, again")});
  const auto first = admit(s, "first").input.id;
  ASSERT_TRUE(eventually([&] { return runtime_.arrivals() == 1; }));
  const auto steer = admit(s, "steer").input.id;
  flaky_.fail_appends(flaky_store::saying("to the steer"), fault::unavailable);
  runtime_.open_gate();
  idle(s);

  ASSERT_EQ(runtime_.host_errors().size(), 1U);
  EXPECT_EQ(runtime_.host_errors()[0], session::session_errc::storage_failed);
  EXPECT_EQ(outcomes(s), (std::vector<model::outcome>{model::outcome::failed, model::outcome::succeeded}));
  const auto back = returned(s);
  ASSERT_EQ(back.size(), 1U);
  EXPECT_EQ(back[0].input, steer);
  EXPECT_EQ(back[0].reason, "storage_failed");
  EXPECT_EQ(back[0].returns, 1);
  const auto ends = finished(s);
  EXPECT_EQ(back[0].execution, ends[0].execution);
  // The first input had its answer: it stays with the failed execution.
  EXPECT_EQ(input(first).execution, ends[0].execution);
  // The steer ran again, in the next execution, as that turn's input.
  const auto again = input(steer);
  EXPECT_EQ(again.status, store::input_status::promoted);
  EXPECT_EQ(again.execution, ends[1].execution);
  EXPECT_EQ(again.returns, 1);
  const auto contexts = runtime_.contexts();
  ASSERT_EQ(contexts.size(), 2U);
  ASSERT_EQ(contexts[1].promoted.size(), 1U);
  EXPECT_EQ(contexts[1].promoted[0].id, steer);
  const auto users = std::count_if(contexts[1].transcript.begin(), contexts[1].transcript.end(),
                                   [&](const store::message_row& m) { return m.id == steer.str(); });
  EXPECT_EQ(users, 1) << "its message is in the transcript once, where it was promoted again";
  EXPECT_EQ(contexts[1].transcript.back().id, steer.str());
  EXPECT_EQ(texts(s, "text.ended"), (std::vector<std::string>{"to the first", "to the steer, again"}));
}

TEST_F(store_retry_test, an_input_given_back_as_often_as_the_limit_stays_failed_and_the_end_says_so) {
  auto o = no_retry();
  o.input_return_limit = 2;
  start(o);
  const auto s = new_session();
  const auto in = admit(s, "never answered", delivery::steer, start_mode::record_only).input.id;
  // Two executions that could not answer it, each giving it back.
  for (int i = 1; i <= 2; ++i) {
    runtime_.script({text("lost " + std::to_string(i))});
    flaky_.fail_appends(flaky_store::saying("lost " + std::to_string(i)), fault::unavailable);
  }
  runtime_.script({text("lost 3")});
  flaky_.fail_appends(flaky_store::saying("lost 3"), fault::unavailable);
  ASSERT_TRUE(run(service_->resume(s)));
  idle(s);

  EXPECT_EQ(outcomes(s), (std::vector<model::outcome>{model::outcome::failed, model::outcome::failed,
                                                      model::outcome::failed}));
  const auto back = returned(s);
  ASSERT_EQ(back.size(), 2U);
  EXPECT_EQ(back[0].returns, 1);
  EXPECT_EQ(back[1].returns, 2);
  const auto ends = finished(s);
  EXPECT_NE(ends[2].error.find(in.str()), std::string::npos) << ends[2].error;
  EXPECT_NE(ends[2].error.find("given back 2 times"), std::string::npos) << ends[2].error;
  const auto row = input(in);
  EXPECT_EQ(row.status, store::input_status::promoted) << "it stays with the last failed execution";
  EXPECT_EQ(row.execution, ends[2].execution);
  EXPECT_EQ(row.returns, 2);
  EXPECT_EQ(runtime_.turns(), 3);
}

TEST_F(store_retry_test, a_turn_failed_for_another_reason_gives_nothing_back) {
  start();
  const auto s = new_session();
  runtime_.script({fail("the model refused")});
  const auto in = admit(s, "go").input.id;
  idle(s);
  EXPECT_EQ(outcomes(s), std::vector<model::outcome>{model::outcome::failed});
  EXPECT_EQ(count(s, "input.returned"), 0U);
  EXPECT_EQ(input(in).status, store::input_status::promoted);
}

}  // namespace
}  // namespace tether::testing
