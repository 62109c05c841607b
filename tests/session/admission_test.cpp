#include "session/service.h"

#include <future>

#include "session/errors.h"
#include "session/fixture.h"
#include "util/errors.h"

namespace tether::testing {
namespace {

using model::delivery;
using session::start_mode;

class admission_test : public session_fixture {
 protected:
  admission_test() { make_service(); }
};

TEST_F(admission_test, admission_is_durable_before_it_returns) {
  const auto s = new_session();
  const auto a = admit(s, "hello", delivery::steer, start_mode::record_only);
  // A second store on the same file sees the input without any further step.
  store::sqlite_options o;
  o.path = (dir_ / "tether.db").string();
  auto other = store::open_sqlite_store(o);
  ASSERT_TRUE(other) << other.error().describe();
  auto row = run((*other)->get_input(a.input.id));
  ASSERT_TRUE(row) << row.error().describe();
  EXPECT_EQ(row->prompt, "hello");
  EXPECT_EQ(row->status, store::input_status::pending);
  (*other)->stop();
}

TEST_F(admission_test, omitted_ids_get_fresh_ids) {
  const auto s = new_session();
  const auto a = admit(s, "one", delivery::queue, start_mode::record_only);
  const auto b = admit(s, "two", delivery::queue, start_mode::record_only);
  EXPECT_TRUE(a.input.id.str().starts_with("msg_"));
  EXPECT_NE(a.input.id, b.input.id);
  EXPECT_EQ(a.status, session::admit_status::admitted);
}

TEST_F(admission_test, exact_retry_returns_the_original_input_and_changes_nothing) {
  const auto s = new_session();
  const auto a = admit(s, "hello", delivery::queue, start_mode::record_only, "msg_retry1");
  const auto before = events(s).size();
  const auto b = admit(s, "hello", delivery::queue, start_mode::record_only, "msg_retry1");
  EXPECT_EQ(b.status, session::admit_status::existing);
  EXPECT_EQ(b.input.id, a.input.id);
  EXPECT_EQ(b.input.admitted_seq, a.input.admitted_seq);
  EXPECT_EQ(events(s).size(), before);
}

TEST_F(admission_test, same_id_with_a_different_prompt_is_a_conflict) {
  const auto s = new_session();
  admit(s, "hello", delivery::steer, start_mode::record_only, "msg_c1");
  auto r = run(service_->admit(s, {"msg_c1", "other words", delivery::steer, start_mode::record_only}));
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error(), session::session_errc::input_conflict);
}

TEST_F(admission_test, same_id_with_a_different_delivery_is_a_conflict) {
  const auto s = new_session();
  admit(s, "hello", delivery::steer, start_mode::record_only, "msg_c2");
  auto r = run(service_->admit(s, {"msg_c2", "hello", delivery::queue, start_mode::record_only}));
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error(), session::session_errc::input_conflict);
}

TEST_F(admission_test, same_id_in_another_session_is_a_conflict) {
  const auto s = new_session();
  const auto t = new_session();
  admit(s, "hello", delivery::steer, start_mode::record_only, "msg_c3");
  auto r = run(service_->admit(t, {"msg_c3", "hello", delivery::steer, start_mode::record_only}));
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error(), session::session_errc::input_conflict);
  EXPECT_EQ(count(t, "input.admitted"), 0U);
}

TEST_F(admission_test, an_id_already_visible_in_the_transcript_is_rejected) {
  const auto s = new_session();
  runtime_.script({text("answer")});
  admit(s, "go");
  idle(s);
  std::string assistant_id;
  for (const auto& e : events(s))
    if (const auto* t = e.as<model::text_ended>()) assistant_id = t->message.str();
  ASSERT_FALSE(assistant_id.empty());
  auto r = run(service_->admit(s, {assistant_id, "reuse", delivery::steer, start_mode::record_only}));
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error(), session::session_errc::input_conflict);
}

TEST_F(admission_test, fifty_concurrent_exact_retries_record_one_input) {
  const auto s = new_session();
  std::vector<std::future<result<session::admission>>> all;
  for (int i = 0; i < 50; ++i)
    all.push_back(asio::co_spawn(
        io_, service_->admit(s, {"msg_same", "once", delivery::queue, start_mode::record_only}), asio::use_future));
  int admitted = 0;
  for (auto& f : all) {
    auto r = f.get();
    ASSERT_TRUE(r) << r.error().describe();
    EXPECT_EQ(r->input.id.str(), "msg_same");
    admitted += r->status == session::admit_status::admitted ? 1 : 0;
  }
  EXPECT_EQ(admitted, 1);
  EXPECT_EQ(count(s, "input.admitted"), 1U);
}

TEST_F(admission_test, exact_retry_of_an_input_admitted_but_never_started_starts_it) {
  const auto s = new_session();
  admit(s, "start me", delivery::steer, start_mode::record_only, "msg_late");
  EXPECT_EQ(runtime_.turns(), 0);
  const auto again = admit(s, "start me", delivery::steer, start_mode::resume, "msg_late");
  EXPECT_EQ(again.status, session::admit_status::existing);
  eventually([&] { return count(s, "execution.finished") == 1; });
  idle(s);
  ASSERT_EQ(runtime_.contexts().size(), 1U);
  EXPECT_EQ(runtime_.contexts()[0].transcript.back().text, "start me");
}

TEST_F(admission_test, resume_false_records_without_starting_and_a_later_resume_runs_it) {
  const auto s = new_session();
  admit(s, "later", delivery::steer, start_mode::record_only);
  idle(s);
  EXPECT_EQ(runtime_.turns(), 0);
  EXPECT_EQ(count(s, "execution.started"), 0U);
  auto r = run(service_->resume(s));
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, session::drain_status::succeeded);
  EXPECT_EQ(runtime_.turns(), 1);
  EXPECT_EQ(count(s, "input.promoted"), 1U);
}

}  // namespace
}  // namespace tether::testing
