#include "runtime/native/tools/tool.h"

#include <boost/json.hpp>
#include <gtest/gtest.h>

#include "fixture.h"

namespace tether::runtime::native::test {
namespace {

namespace json = boost::json;

using bad_input = tools_test;

const std::vector<std::string> all_tools = {"read", "write", "edit", "list", "glob", "grep", "bash", "ask_user"};

TEST(tool_set, local_tools_are_found_by_name_and_listed_in_order) {
  const tool_set tools = make_local_tools();
  std::vector<std::string> names;
  for (const auto& s : tools.specs()) names.push_back(s.name);
  EXPECT_EQ(names, all_tools);
  for (const auto& name : all_tools) {
    ASSERT_NE(tools.find(name), nullptr) << name;
    EXPECT_EQ(tools.find(name)->spec().name, name);
  }
  EXPECT_EQ(tools.find("rm"), nullptr);
}

TEST(tool_set, every_schema_is_a_closed_object_with_described_properties) {
  const tool_set tools = make_local_tools();
  for (const auto& spec : tools.specs()) {
    SCOPED_TRACE(spec.name);
    EXPECT_FALSE(spec.description.empty());
    const auto& p = spec.parameters;
    EXPECT_EQ(p.at("type"), "object");
    EXPECT_EQ(p.at("additionalProperties"), false);
    ASSERT_TRUE(p.at("required").is_array());
    const auto& props = p.at("properties").as_object();
    for (const auto& r : p.at("required").as_array()) EXPECT_TRUE(props.contains(r.as_string()));
    for (const auto& kv : props) {
      EXPECT_TRUE(kv.value().as_object().contains("type")) << kv.key();
      EXPECT_FALSE(kv.value().at("description").as_string().empty()) << kv.key();
    }
  }
}

TEST_F(bad_input, input_that_is_not_an_object_fails_for_every_tool) {
  for (const auto& name : all_tools) {
    for (const json::value& input : {json::value(json::array{1, 2}), json::value(42), json::value("not json")}) {
      const auto out = call(name, input);
      EXPECT_EQ(out.status, tool_status::failed) << name;
      EXPECT_EQ(out.content, "tool input must be a JSON object of arguments") << name;
    }
  }
}

TEST_F(bad_input, null_input_reports_the_first_missing_argument) {
  EXPECT_EQ(call("read", json::value(nullptr)).content, "missing required argument 'path'");
  EXPECT_EQ(call("write", json::value(nullptr)).content, "missing required argument 'path'");
  EXPECT_EQ(call("edit", args({{"path", "a"}})).content, "missing required argument 'old_string'");
  EXPECT_EQ(call("glob", json::value(nullptr)).content, "missing required argument 'pattern'");
  EXPECT_EQ(call("grep", json::value(nullptr)).content, "missing required argument 'pattern'");
  EXPECT_EQ(call("write", args({{"path", "a"}})).content, "missing required argument 'content'");
}

TEST_F(bad_input, mistyped_arguments_name_the_expected_type) {
  EXPECT_EQ(call("read", args({{"path", 7}})).content, "argument 'path' must be a string");
  EXPECT_EQ(call("read", args({{"path", "a"}, {"offset", "ten"}})).content, "argument 'offset' must be an integer");
  EXPECT_EQ(call("read", args({{"path", "a"}, {"limit", 1.5}})).content, "argument 'limit' must be an integer");
  EXPECT_EQ(call("edit", args({{"path", "a"}, {"old_string", "x"}, {"new_string", "y"}, {"replace_all", "yes"}}))
                .content,
            "argument 'replace_all' must be a boolean (true or false)");
  EXPECT_EQ(call("list", args({{"path", json::array{}}})).content, "argument 'path' must be a string");
}

TEST_F(bad_input, unknown_arguments_are_refused_with_the_expected_names) {
  const auto out = call("read", args({{"file", "a.txt"}}));
  EXPECT_EQ(out.status, tool_status::failed);
  EXPECT_EQ(out.content, "unknown argument 'file'; expected one of: path, offset, limit");
}

TEST_F(bad_input, arguments_sent_as_json_text_are_accepted) {
  put("a.txt", "hello\n");
  const auto out = call("read", json::value(R"({"path":"a.txt","offset":1.0})"));
  EXPECT_EQ(out.status, tool_status::succeeded) << out.content;
  EXPECT_EQ(out.content, "     1\thello\n");
}

TEST_F(bad_input, out_of_range_numbers_are_refused) {
  put("a.txt", "hello\n");
  EXPECT_EQ(call("read", args({{"path", "a.txt"}, {"offset", 0}})).status, tool_status::failed);
  EXPECT_EQ(call("read", args({{"path", "a.txt"}, {"limit", -3}})).status, tool_status::failed);
  EXPECT_EQ(call("read", args({{"path", ""}})).content, "the path is empty");
}

}  // namespace
}  // namespace tether::runtime::native::test
