// messages_view: the transcript as the API shows it.
#include <gtest/gtest.h>

#include <boost/json.hpp>

#include "api/views.h"

namespace tether::api {
namespace {

namespace json = boost::json;

store::message_row row(std::int64_t seq, store::message_role role, std::string id, std::string text = "") {
  store::message_row r;
  r.seq = event_seq{seq};
  r.role = role;
  r.id = std::move(id);
  r.text = std::move(text);
  return r;
}

TEST(MessagesView, ToolCallsJoinTheirAssistantMessageWithTheirResult) {
  using store::message_role;
  std::vector<store::message_row> rows;
  rows.push_back(row(2, message_role::user, "msg_u", "do it"));
  rows.push_back(row(5, message_role::assistant, "msg_a", "on it"));
  auto call = row(6, message_role::tool_call, "call_1");
  call.tool = "bash";
  call.input = json::parse(R"({"command":"ls"})");
  rows.push_back(call);
  auto running = row(7, message_role::tool_call, "call_2");
  running.tool = "read";
  rows.push_back(running);
  auto result = row(9, message_role::tool_result, "call_1", "boom");
  result.is_error = true;
  rows.push_back(result);
  rows.push_back(row(10, message_role::notice, "evt_n", "restarted"));
  auto bare = row(11, message_role::tool_call, "call_3");  // a call with no text before it
  bare.tool = "write";
  rows.push_back(bare);

  const auto v = messages_view(rows);
  ASSERT_EQ(v.size(), 5u);
  EXPECT_EQ(v[0].at("role"), "user");
  EXPECT_EQ(v[1].at("role"), "assistant");
  EXPECT_EQ(v[1].at("text"), "on it");
  const auto& calls = v[1].at("tool_calls").as_array();
  ASSERT_EQ(calls.size(), 2u);
  EXPECT_EQ(calls[0].at("name"), "bash");
  EXPECT_EQ(calls[0].at("status"), "failed");
  EXPECT_EQ(calls[0].at("result"), "boom");
  EXPECT_EQ(calls[0].at("input").at("command"), "ls");
  EXPECT_EQ(calls[1].at("status"), "running");
  EXPECT_EQ(v[2].at("role"), "tool");
  EXPECT_EQ(v[2].at("tool"), "bash");
  EXPECT_EQ(v[2].at("is_error"), true);
  EXPECT_EQ(v[3].at("role"), "synthetic");
  EXPECT_EQ(v[4].at("role"), "assistant");
  EXPECT_EQ(v[4].at("text"), "");
  EXPECT_EQ(v[4].at("tool_calls").at(0).at("id"), "call_3");
}

TEST(Views, UsageShowsAnUnknownCostAsNullNeverZero) {
  model::usage u;
  u.input_tokens = 10;
  u.cost_status = "unpriced";
  EXPECT_TRUE(usage_view(u).at("cost_usd").is_null());
  u.cost_usd = 0.25;
  u.cost_status = "estimated";
  EXPECT_EQ(usage_view(u).at("cost_usd").as_double(), 0.25);
}

TEST(Views, AnInputShowsWhereItWasPromoted) {
  store::input_row in;
  in.id = input_id::trusted("msg_x");
  in.session = session_id::trusted("ses_x");
  in.admitted_seq = event_seq{3};
  EXPECT_TRUE(input_view(in).at("promoted_seq").is_null());
  in.status = store::input_status::promoted;
  in.promoted_seq = event_seq{5};
  in.execution = execution_id::trusted("exe_x");
  const auto v = input_view(in);
  EXPECT_EQ(v.at("promoted_seq").as_int64(), 5);
  EXPECT_EQ(v.at("status"), "promoted");
  EXPECT_EQ(v.at("execution"), "exe_x");
}

}  // namespace
}  // namespace tether::api
