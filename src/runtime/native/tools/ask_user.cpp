// ask_user: a structured question for a human. Validates and returns
// waiting; the agent loop turns that into interaction.requested (DESIGN §4,
// "Waiting for a human").
#include <boost/json/array.hpp>

#include "model/questions.h"
#include "runtime/native/tools/args.h"
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

// The arguments are read here; what makes a valid question is model/questions.h's.
tool_outcome ask(const json::value& input) {
  auto args = tool_args::parse(input, {"question", "options", "multi_select", "allow_other"});
  if (!args) return failed(args.error());
  auto text = args->required_string("question");
  if (!text) return failed(text.error());
  auto multi_select = args->optional_bool("multi_select");
  if (!multi_select) return failed(multi_select.error());
  auto allow_other = args->optional_bool("allow_other");
  if (!allow_other) return failed(allow_other.error());
  auto q = model::make_question("q1", *text, args->find("options"), *multi_select, *allow_other);
  if (!q) return failed(q.error());

  tool_outcome out;
  out.status = tool_status::waiting;
  out.content = "waiting for the user to answer: " + q->text;
  out.interaction_kind = "question";
  out.interaction_payload = model::to_json(model::question_payload{{std::move(*q)}});
  return out;
}

ask_user_tool::ask_user_tool() {
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
  spec_.name = "ask_user";
  spec_.description =
      "Ask the user a question and wait for the answer. Use it when you need a decision or information only the "
      "user has; your turn ends here and continues when they answer. Don't use it for things you can find out "
      "yourself.";
  spec_.parameters = object_schema(std::move(props), {"question"});
}

boost::asio::awaitable<tool_outcome> ask_user_tool::run(json::value input, tool_context ctx) const {
  if (ctx.stop.stop_requested()) co_return interrupted();
  co_return ask(input);
}

}  // namespace

std::unique_ptr<tool> make_ask_user_tool() { return std::make_unique<ask_user_tool>(); }

}  // namespace tether::runtime::native::tool_detail
