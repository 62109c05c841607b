// A native turn whose session lease is lost: the runner's host answers its
// writes with session_errc::lease_lost (the store's fence failure, mapped),
// and the turn ends interrupted, not failed (session/runtime.h), even before
// the stop token says so.
#include <stop_token>

#include "fixture.h"
#include "session/errors.h"

namespace tether::testing {
namespace {

using session::session_errc;
using session::turn_status;

// Every write is refused as the host refuses it once another node fenced the
// session. The stop token is never requested: the turn must read the loss
// from the error itself.
class lost_lease_host final : public session::turn_host {
 public:
  session::task<result<std::vector<store::message_row>>> boundary() override { co_return lost(); }
  session::task<result<session::boundary_result>> boundary_after(std::vector<model::payload>) override {
    ++writes;
    co_return lost();
  }
  session::task<result<std::vector<model::event>>> record(std::vector<model::payload>) override {
    ++writes;
    co_return lost();
  }
  void record_soon(std::vector<model::payload>) override {}
  void publish(model::payload) override {}
  void wake() override {}
  [[nodiscard]] std::stop_token stop_token() const override { return never_.get_token(); }

  int writes = 0;

 private:
  static error lost() { return make_error(session_errc::lease_lost, "the session's lease is gone"); }
  std::stop_source never_;
};

class native_lease : public native_fixture {
 protected:
  session::turn_result turn_with(const std::string& prompt, const std::shared_ptr<lost_lease_host>& host) {
    session::turn_context ctx;
    ctx.session = session_id::generate();
    ctx.execution = execution_id::generate();
    store::message_row user;
    user.seq = event_seq{1};
    user.role = store::message_role::user;
    user.id = "m1";
    user.text = prompt;
    ctx.transcript.push_back(user);
    ctx.promoted.push_back({input_id::generate(), event_seq{1}, prompt});
    ctx.workspace = (dir_ / "workspace").string();
    std::filesystem::create_directories(ctx.workspace);
    return run(runtime_->run_turn(std::move(ctx), host));
  }
};

TEST_P(native_lease, a_tool_call_whose_record_finds_the_lease_gone_ends_the_turn_interrupted) {
  start();
  auto host = std::make_shared<lost_lease_host>();
  const auto r = turn_with("Write file a.txt: x\nReply with exactly: done", host);
  EXPECT_EQ(host->writes, 1) << "the turn stops at the first refused write";
  EXPECT_EQ(r.status, turn_status::interrupted) << r.error;
  EXPECT_FALSE(std::filesystem::exists(dir_ / "workspace" / "a.txt")) << "the call was never recorded, so never run";
}

TEST_P(native_lease, an_answer_whose_write_finds_the_lease_gone_ends_the_turn_interrupted) {
  start();
  auto host = std::make_shared<lost_lease_host>();
  const auto r = turn_with("Reply with exactly: done", host);
  EXPECT_EQ(host->writes, 1);
  EXPECT_EQ(r.status, turn_status::interrupted) << r.error;
}

INSTANTIATE_TEST_SUITE_P(wire, native_lease, ::testing::Values(wire_api::openai_chat), wire_name);

}  // namespace
}  // namespace tether::testing
