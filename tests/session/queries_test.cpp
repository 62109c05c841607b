#include "session/queries.h"

#include <algorithm>

#include <boost/json.hpp>

#include "session/counting_store.h"
#include "session/errors.h"
#include "session/fixture.h"
#include "session/service.h"
#include "util/errors.h"

namespace tether::testing {
namespace {

using model::delivery;
using session::create_status;
using session::session_status;
using session::start_mode;

class queries_test : public session_fixture {
 protected:
  queries_test() { make_service(); }

  session::create_request request(std::string id, std::string title) {
    session::create_request r;
    r.id = std::move(id);
    r.title = std::move(title);
    r.workspace = "/srv/project";
    r.profile = "default";
    r.metadata = boost::json::object{{"team", "core"}};
    return r;
  }
  // A session asking the scripted question, its execution finished waiting.
  session_id asking_session() {
    const auto s = new_session();
    runtime_.script({ask("Which color?")});
    admit(s, "ask me");
    eventually([&] { return count(s, "execution.finished") == 1; });
    idle(s);
    return s;
  }
  store::interaction_row pending_question(const session_id& s) {
    auto asking = run(store_->pending_interactions(s));
    EXPECT_TRUE(asking);
    EXPECT_EQ(asking->size(), 1U);
    return asking->front();
  }
};

TEST(session_status_rule, an_open_execution_or_a_drain_is_running_else_a_pending_question_is_waiting_else_idle) {
  using session::drain_activity;
  store::session_row row;
  EXPECT_EQ(session::status_of(row, 0, drain_activity::not_draining), session_status::idle);
  EXPECT_EQ(session::status_of(row, 1, drain_activity::not_draining), session_status::waiting);
  EXPECT_EQ(session::status_of(row, 1, drain_activity::draining), session_status::running);
  row.continuation_pending = true;
  EXPECT_EQ(session::status_of(row, 1, drain_activity::not_draining), session_status::running);
  row.continuation_pending = false;
  row.open_execution = execution_id::generate();
  EXPECT_EQ(session::status_of(row, 0, drain_activity::not_draining), session_status::running);
  EXPECT_EQ(session::to_string(session_status::waiting), "waiting");
}

TEST_F(queries_test, an_exact_retry_of_a_create_returns_the_existing_session_and_writes_nothing) {
  auto first = run(service_->create(request("ses_retry1", "a title")));
  ASSERT_TRUE(first) << first.error().describe();
  EXPECT_EQ(first->status, create_status::created);
  admit(first->session.session.id, "waiting", delivery::queue, start_mode::record_only);
  const auto before = events(first->session.session.id).size();

  auto again = run(service_->create(request("ses_retry1", "a title")));
  ASSERT_TRUE(again) << again.error().describe();
  EXPECT_EQ(again->status, create_status::existing);
  EXPECT_EQ(again->session.session.id, first->session.session.id);
  EXPECT_EQ(again->session.session.created_at, first->session.session.created_at);
  EXPECT_EQ(again->session.pending_inputs, 1U) << "the existing session as it is now";
  EXPECT_EQ(events(first->session.session.id).size(), before);
}

TEST_F(queries_test, the_same_session_id_with_other_attributes_is_a_conflict) {
  ASSERT_TRUE(run(service_->create(request("ses_conflict1", "a title"))));
  for (auto change : {+[](session::create_request& r) { r.title = "another title"; },
                      +[](session::create_request& r) { r.workspace = "/srv/other"; },
                      +[](session::create_request& r) { r.profile = "fast"; },
                      +[](session::create_request& r) { r.metadata["team"] = "other"; }}) {
    auto req = request("ses_conflict1", "a title");
    change(req);
    auto r = run(service_->create(std::move(req)));
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error(), session::session_errc::session_conflict);
  }
  auto row = run(store_->get_session(session_id::trusted("ses_conflict1")));
  ASSERT_TRUE(row);
  EXPECT_EQ(row->title, "a title") << "a conflicting create changes nothing";
}

TEST_F(queries_test, create_session_refuses_an_id_already_taken_even_by_an_exact_retry) {
  ASSERT_TRUE(run(service_->create_session(request("ses_taken1", "t"))));
  for (const auto* title : {"t", "other"}) {
    auto r = run(service_->create_session(request("ses_taken1", title)));
    ASSERT_FALSE(r) << title;
    EXPECT_EQ(r.error(), store::store_errc::session_exists) << title;
  }
}

TEST_F(queries_test, concurrent_exact_creates_make_one_session_and_all_succeed) {
  std::vector<std::future<result<session::session_service::creation>>> calls;
  for (int i = 0; i < 8; ++i)
    calls.push_back(asio::co_spawn(io_, service_->create(request("ses_race1", "t")), asio::use_future));
  int created = 0;
  for (auto& c : calls) {
    auto r = c.get();
    ASSERT_TRUE(r) << r.error().describe();
    created += r->status == create_status::created ? 1 : 0;
  }
  EXPECT_EQ(created, 1);
  EXPECT_EQ(count(session_id::trusted("ses_race1"), "session.created"), 1U);
}

TEST_F(queries_test, describe_counts_what_waits_and_an_unknown_session_is_unknown) {
  const auto s = new_session();
  admit(s, "one", delivery::queue, start_mode::record_only);
  admit(s, "two", delivery::steer, start_mode::record_only);
  auto d = run(service_->describe(s));
  ASSERT_TRUE(d) << d.error().describe();
  EXPECT_EQ(d->pending_inputs, 2U);
  EXPECT_EQ(d->status, session_status::idle) << "inputs recorded without resume leave it idle";
  auto unknown = run(service_->describe(session_id::generate()));
  ASSERT_FALSE(unknown);
  EXPECT_EQ(unknown.error(), session::session_errc::unknown_session);
}

TEST_F(queries_test, a_session_with_a_pending_question_is_waiting) {
  const auto s = asking_session();
  auto d = run(service_->describe(s));
  ASSERT_TRUE(d);
  EXPECT_EQ(d->status, session_status::waiting);
  EXPECT_EQ(d->pending_interactions, 1U);
}

TEST_F(queries_test, the_listing_equals_the_view_of_each_session) {
  const auto quiet = new_session();
  const auto queued = new_session();
  admit(queued, "later", delivery::queue, start_mode::record_only);
  const auto asking = asking_session();
  auto listed = run(service_->list(100));
  ASSERT_TRUE(listed) << listed.error().describe();
  ASSERT_EQ(listed->size(), 3U);
  for (const auto& s : *listed) {
    auto one = run(service_->describe(s.session.id));
    ASSERT_TRUE(one);
    EXPECT_EQ(s.status, one->status) << s.session.id.str();
    EXPECT_EQ(s.pending_inputs, one->pending_inputs) << s.session.id.str();
    EXPECT_EQ(s.pending_interactions, one->pending_interactions) << s.session.id.str();
    EXPECT_EQ(s.session.last_seq, one->session.last_seq) << s.session.id.str();
  }
  const auto find = [&](const session_id& id) {
    return *std::find_if(listed->begin(), listed->end(), [&](const auto& s) { return s.session.id == id; });
  };
  EXPECT_EQ(find(quiet).status, session_status::idle);
  EXPECT_EQ(find(queued).pending_inputs, 1U);
  EXPECT_EQ(find(asking).status, session_status::waiting);
}

TEST_F(queries_test, listing_sessions_costs_one_store_read_however_many_there_are) {
  for (int i = 0; i < 5; ++i) admit(new_session(), "x", delivery::queue, start_mode::record_only);
  counting_store counted(*store_);
  session::session_service svc(io_.get_executor(), counted, runtime_, clock_, session::make_node_identity("n2"),
                               test_options());
  auto listed = run(svc.list(100));
  ASSERT_TRUE(listed);
  EXPECT_EQ(listed->size(), 5U);
  EXPECT_EQ(counted.reads(), 1);
  counted.reset();
  auto one = run(svc.describe(listed->front().session.id));
  ASSERT_TRUE(one);
  EXPECT_EQ(counted.reads(), 1) << "one session is one snapshot";
  run(svc.stop());
}

TEST_F(queries_test, resume_if_work_wakes_a_session_with_pending_input_and_not_an_idle_or_asking_one) {
  const auto idle_one = new_session();
  auto nothing = run(service_->resume_if_work(idle_one));
  ASSERT_TRUE(nothing);
  EXPECT_EQ(*nothing, session::wake_status::nothing_to_do);

  const auto held = new_session();
  admit(held, "run me later", delivery::queue, start_mode::record_only);
  runtime_.script({text("ran")});
  auto woken = run(service_->resume_if_work(held));
  ASSERT_TRUE(woken);
  EXPECT_EQ(*woken, session::wake_status::woken);
  eventually([&] { return count(held, "execution.finished") == 1; });

  const auto asking = asking_session();
  admit(asking, "meanwhile", delivery::queue, start_mode::record_only);
  auto waiting = run(service_->resume_if_work(asking));
  ASSERT_TRUE(waiting);
  EXPECT_EQ(*waiting, session::wake_status::waiting);

  auto unknown = run(service_->resume_if_work(session_id::generate()));
  ASSERT_FALSE(unknown);
  EXPECT_EQ(unknown.error(), session::session_errc::unknown_session);
}

TEST_F(queries_test, an_answer_that_does_not_fit_its_question_is_refused_and_nothing_is_written) {
  const auto s = asking_session();
  const auto q = pending_question(s);
  const auto before = events(s).size();
  auto r = run(service_->submit_answer(
      q.id, boost::json::parse(R"({"answers":[{"question_id":"q1","option_ids":["green"]}]})")));
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error(), util_errc::invalid_argument);
  EXPECT_NE(r.error().message.find("no option 'green'"), std::string::npos) << r.error().message;
  EXPECT_EQ(events(s).size(), before);
}

TEST_F(queries_test, a_fitting_answer_resolves_the_question_and_the_turn_continues) {
  const auto s = asking_session();
  const auto q = pending_question(s);
  runtime_.script({text("blue it is")});
  auto r = run(
      service_->submit_answer(q.id, boost::json::parse(R"({"answers":[{"question_id":"q1","option_ids":["blue"]}]})")));
  ASSERT_TRUE(r) << r.error().describe();
  EXPECT_EQ(r->status, store::interaction_status::answered);
  EXPECT_EQ(r->result.at("answers").at(0).at("option_ids").at(0), "blue");
  eventually([&] { return count(s, "execution.finished") == 2; });
  auto again = run(
      service_->submit_answer(q.id, boost::json::parse(R"({"answers":[{"question_id":"q1","option_ids":["red"]}]})")));
  ASSERT_FALSE(again);
  EXPECT_EQ(again.error(), session::session_errc::interaction_closed);
}

}  // namespace
}  // namespace tether::testing
