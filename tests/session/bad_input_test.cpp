#include "session/service.h"

#include "session/errors.h"
#include "session/fixture.h"
#include "util/errors.h"

namespace tether::testing {
namespace {

using model::delivery;
using session::start_mode;

class bad_input_test : public session_fixture {
 protected:
  bad_input_test() {
    auto o = test_options();
    o.max_prompt_bytes = 1024;
    make_service(o);
  }

  error admit_error(const session_id& s, std::optional<std::string> id, std::string prompt) {
    auto r = run(service_->admit(s, {std::move(id), std::move(prompt), delivery::steer, start_mode::record_only}));
    EXPECT_FALSE(r);
    return r ? error{} : r.error();
  }
};

TEST_F(bad_input_test, malformed_input_ids_are_rejected_and_nothing_is_written) {
  const auto s = new_session();
  const auto before = events(s).size();
  for (const char* bad : {"", "msg_", "ses_abc", "msg_has space", "msg_semi;colon", "msg_\xff", "../../etc/passwd"})
    EXPECT_EQ(admit_error(s, std::string(bad), "hi"), util_errc::malformed_id) << bad;
  EXPECT_EQ(admit_error(s, "msg_" + std::string(65, 'a'), "hi"), util_errc::malformed_id);
  EXPECT_EQ(events(s).size(), before);
}

TEST_F(bad_input_test, an_oversized_prompt_is_too_large_and_nothing_is_written) {
  const auto s = new_session();
  const auto before = events(s).size();
  EXPECT_EQ(admit_error(s, std::nullopt, std::string(1025, 'x')), util_errc::too_large);
  EXPECT_EQ(events(s).size(), before);
  admit(s, std::string(1024, 'x'), delivery::steer, start_mode::record_only);  // the limit itself is fine
}

TEST_F(bad_input_test, invalid_utf8_is_rejected_and_nothing_is_written) {
  const auto s = new_session();
  const auto before = events(s).size();
  EXPECT_EQ(admit_error(s, std::nullopt, "bad \xc3\x28 byte"), util_errc::invalid_utf8);
  EXPECT_EQ(admit_error(s, std::nullopt, "surrogate \xed\xa0\x80"), util_errc::invalid_utf8);
  EXPECT_EQ(admit_error(s, std::nullopt, "truncated \xe2\x82"), util_errc::invalid_utf8);
  EXPECT_EQ(events(s).size(), before);
}

TEST_F(bad_input_test, an_empty_prompt_is_invalid) {
  const auto s = new_session();
  EXPECT_EQ(admit_error(s, std::nullopt, ""), session::session_errc::invalid_input);
}

TEST_F(bad_input_test, an_unknown_session_is_reported_as_such) {
  EXPECT_EQ(admit_error(session_id::generate(), std::nullopt, "hi"), session::session_errc::unknown_session);
  auto r = run(service_->resume(session_id::generate()));
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error(), session::session_errc::unknown_session);
  auto i = run(service_->interrupt(session_id::generate()));
  ASSERT_FALSE(i);
  EXPECT_EQ(i.error(), session::session_errc::unknown_session);
}

TEST_F(bad_input_test, an_unknown_interaction_is_reported_as_such) {
  auto r = run(service_->answer(interaction_id::generate(), boost::json::value("x")));
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error(), session::session_errc::unknown_interaction);
}

TEST_F(bad_input_test, an_oversized_answer_is_too_large) {
  auto r = run(service_->answer(interaction_id::generate(), boost::json::value(std::string(2048, 'a'))));
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error(), util_errc::too_large);
}

TEST_F(bad_input_test, a_quarantined_session_refuses_new_inputs) {
  const auto s = new_session();
  ASSERT_TRUE(run(store_->quarantine(s, "test")));
  EXPECT_EQ(admit_error(s, std::nullopt, "hi"), session::session_errc::quarantined);
}

TEST_F(bad_input_test, a_malformed_session_id_is_rejected_on_create) {
  auto r = run(service_->create_session({std::string("ses_bad id"), {}, {}, {}}));
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error(), util_errc::malformed_id);
}

}  // namespace
}  // namespace tether::testing
