// What the store keeps of runtimes (store/projector.h): which runtime ran an
// execution and its session, the binding of the current generation, and
// the kind of each tool call.
#include "store/projector.h"

#include "backends.h"

namespace tether::store::test {
namespace {

template <class F>
class runtimes : public store_test<F> {};
TYPED_TEST_SUITE(runtimes, backends, backend_names);

model::payload bound(std::string external, std::optional<std::int64_t> generation) {
  model::runtime_bound b;
  b.runtime = "codex";
  b.external_session_id = std::move(external);
  b.generation = generation;
  b.last_seen_seq = 3;
  b.state = R"({"model":"m"})";
  return b;
}

TYPED_TEST(runtimes, an_execution_and_its_session_show_the_runtime_that_started_it) {
  this->open();
  const auto s = this->new_session();
  const auto first = execution_id::generate();
  const auto second = execution_id::generate();
  ASSERT_TRUE(this->append(s, {started(first), finished(first)}));
  ASSERT_TRUE(this->append(s, {model::execution_started{second, "node-a", "codex"}}));
  auto a = this->run(this->store().get_execution(first));
  ASSERT_TRUE(a) << why(a);
  EXPECT_EQ(a->runtime, "native");
  auto b = this->run(this->store().get_execution(second));
  ASSERT_TRUE(b) << why(b);
  EXPECT_EQ(b->runtime, "codex");
  auto sess = this->run(this->store().get_session(s));
  ASSERT_TRUE(sess) << why(sess);
  EXPECT_EQ(sess->runtime, "codex") << "the latest execution's";
}

TYPED_TEST(runtimes, a_binding_of_the_current_generation_is_the_sessions_until_a_reset) {
  this->open();
  const auto s = this->new_session();
  ASSERT_TRUE(this->append(s, {bound("thread-1", 0)}));
  auto sess = this->run(this->store().get_session(s));
  ASSERT_TRUE(sess) << why(sess);
  ASSERT_TRUE(sess->binding);
  EXPECT_EQ(sess->binding->runtime, "codex");
  EXPECT_EQ(sess->binding->external_session_id, "thread-1");
  EXPECT_EQ(sess->binding->generation, 0);
  EXPECT_EQ(sess->binding->last_seen_seq.value, 3);
  EXPECT_EQ(sess->binding->state, R"({"model":"m"})");
  ASSERT_TRUE(this->append(s, {model::session_reset{}}));
  sess = this->run(this->store().get_session(s));
  ASSERT_TRUE(sess) << why(sess);
  EXPECT_FALSE(sess->binding);
}

TYPED_TEST(runtimes, a_bind_after_a_reset_for_the_old_generation_does_not_resurrect_the_old_agent_session) {
  this->open();
  const auto s = this->new_session();
  ASSERT_TRUE(this->append(s, {bound("thread-1", 0), model::session_reset{}}));
  auto late = this->append(s, {bound("thread-2", 0)});
  ASSERT_TRUE(late) << why(late) << ": a late bind is kept in the log";
  auto sess = this->run(this->store().get_session(s));
  ASSERT_TRUE(sess) << why(sess);
  EXPECT_EQ(sess->generation, 1);
  EXPECT_FALSE(sess->binding);
  ASSERT_TRUE(this->append(s, {bound("thread-3", 1)}));
  sess = this->run(this->store().get_session(s));
  ASSERT_TRUE(sess && sess->binding);
  EXPECT_EQ(sess->binding->external_session_id, "thread-3");
  EXPECT_EQ(sess->binding->generation, 1);
}

TYPED_TEST(runtimes, a_binding_without_a_generation_or_ahead_of_the_session_is_rejected) {
  this->open();
  const auto s = this->new_session();
  for (const auto& b : {bound("thread-1", std::nullopt), bound("thread-1", 1)}) {
    auto r = this->append(s, {b});
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error(), store_errc::rejected);
    EXPECT_NE(r.error().message.find("generation"), std::string::npos) << r.error().message;
  }
  EXPECT_EQ(this->last_seq(s), 1);
}

TYPED_TEST(runtimes, a_binding_state_over_16_kib_is_rejected_naming_the_limit) {
  this->open();
  const auto s = this->new_session();
  model::runtime_bound b;
  b.runtime = "codex";
  b.generation = 0;
  b.state.assign(model::runtime_bound::max_state_bytes + 1, 'x');
  auto r = this->append(s, {b});
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error(), store_errc::rejected);
  EXPECT_NE(r.error().message.find("16384"), std::string::npos) << r.error().message;
  b.state.pop_back();
  EXPECT_TRUE(this->append(s, {b}));
}

TYPED_TEST(runtimes, a_tool_call_keeps_its_kind_in_its_row_and_its_messages) {
  this->open();
  const auto s = this->new_session();
  const auto e = execution_id::generate();
  const auto local = call_id::generate();
  const auto hosted = call_id::generate();
  const auto agent = call_id::generate();
  ASSERT_TRUE(this->append(s, {started(e), model::tool_called{local, "bash", nullptr, model::tool_kind::local},
                               model::tool_called{hosted, "web", nullptr, model::tool_kind::hosted},
                               model::tool_called{agent, "exec", nullptr, model::tool_kind::agent}}));
  auto calls = this->run(this->store().unsettled_calls(s));
  ASSERT_TRUE(calls) << why(calls);
  ASSERT_EQ(calls->size(), 3U);
  EXPECT_EQ((*calls)[0].kind, model::tool_kind::local);
  EXPECT_EQ((*calls)[1].kind, model::tool_kind::hosted);
  EXPECT_EQ((*calls)[2].kind, model::tool_kind::agent);
  ASSERT_TRUE(this->append(s, {model::tool_failed{agent, "interrupted"}}));
  auto messages = this->run(this->store().context(s));
  ASSERT_TRUE(messages) << why(messages);
  ASSERT_EQ(messages->size(), 4U);
  EXPECT_EQ((*messages)[2].call_kind, model::tool_kind::agent);
  EXPECT_EQ((*messages)[3].role, message_role::tool_result);
  EXPECT_EQ((*messages)[3].call_kind, model::tool_kind::agent);
}

}  // namespace
}  // namespace tether::store::test
