// ask_user: a structured question for a human. Validates and returns
// waiting; the agent loop turns that into interaction.requested (docs/architecture.md §4,
// "Waiting for a human").
#include <boost/json/array.hpp>

#include "model/questions.h"
#include "runtime/native/tools/args.h"
#include "runtime/native/tools/ask_user.h"
#include "runtime/native/tools/local_tools.h"

namespace tether::runtime::native::tool_detail {

namespace json = boost::json;

namespace {

class ask_user_tool final : public tool {
 public:
  ask_user_tool();
  [[nodiscard]] const tool_spec& spec() const override { return spec_; }
  boost::asio::awaitable<tool_outcome> run(json::value input, tool_context ctx) const override;

 private:
  tool_spec spec_;
};

tool_outcome ask(const json::value& input) {
  auto payload = ask_user_question(input);
  if (!payload) return failed(payload.error());
  tool_outcome out;
  out.status = tool_status::waiting;
  out.content = "waiting for the user to answer: " + payload->questions.front().text;
  out.interaction_kind = "question";
  out.interaction_payload = model::to_json(*payload);
  return out;
}

ask_user_tool::ask_user_tool() {
  spec_.name = "ask_user";
  spec_.description = std::string(ask_user_description());
  spec_.parameters = ask_user_parameters();
}

boost::asio::awaitable<tool_outcome> ask_user_tool::run(json::value input, tool_context ctx) const {
  if (ctx.stop.stop_requested()) co_return interrupted();
  co_return ask(input);
}

}  // namespace

std::unique_ptr<tool> make_ask_user_tool() { return std::make_unique<ask_user_tool>(); }

}  // namespace tether::runtime::native::tool_detail

namespace tether::runtime::native {

namespace json = boost::json;
using tool_detail::boolean_property;
using tool_detail::object_schema;
using tool_detail::string_property;

std::string_view ask_user_description() {
  return "Ask the user a question and wait for the answer. Use it when you need a decision or information only the "
         "user has; your turn ends here and continues when they answer. Don't use it for things you can find out "
         "yourself.";
}

json::object ask_user_parameters() {
  json::object option_props;
  option_props["id"] = string_property("Short stable id of the option. Default: the label in lowercase.");
  option_props["label"] = string_property("The option as shown to the user.");
  json::object option = object_schema(std::move(option_props), {"label"});
  json::object options;
  options["type"] = "array";
  options["maxItems"] = model::max_question_options;
  options["items"] = std::move(option);
  options["description"] = "Choices to offer (up to 20). Leave empty for a free-text question.";

  json::object props;
  props["question"] = string_property("The question, complete enough to answer without other context.");
  props["options"] = std::move(options);
  props["multi_select"] = boolean_property("The user may pick several options. Default false.");
  props["allow_other"] = boolean_property(
      "The user may answer in their own words instead of picking an option. Default: false when options are "
      "given, true when there are none.");
  return object_schema(std::move(props), {"question"});
}

result<model::question_payload> ask_user_question(const json::value& input) {
  auto args = tool_detail::tool_args::parse(input, {"question", "options", "multi_select", "allow_other"});
  if (!args) return args.error();
  auto text = args->required_string("question");
  if (!text) return text.error();
  auto multi_select = args->optional_bool("multi_select");
  if (!multi_select) return multi_select.error();
  auto allow_other = args->optional_bool("allow_other");
  if (!allow_other) return allow_other.error();
  auto q = model::make_question("q1", *text, args->find("options"), *multi_select, *allow_other);
  if (!q) return q.error();
  return model::question_payload{{std::move(*q)}};
}

}  // namespace tether::runtime::native
