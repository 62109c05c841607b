// ask_user: a structured question for a human. Validates and returns
// waiting; the agent loop turns that into interaction.requested (DESIGN §4,
// "Waiting for a human").
#include <boost/json/array.hpp>

#include "runtime/native/tools/args.h"
#include "runtime/native/tools/local_tools.h"

namespace tether::runtime::native::tool_detail {

namespace json = boost::json;

namespace {

constexpr std::size_t max_options = 20;
constexpr std::size_t max_question_bytes = 10'000;
constexpr std::size_t max_label_bytes = 500;

std::string ascii_lowercase(std::string_view s) {
  std::string out(s);
  for (char& c : out)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return out;
}

bool blank(std::string_view s) { return s.find_first_not_of(" \t\r\n") == std::string_view::npos; }

// One option: {"id"?, "label"}; the id defaults to the lowercased label.
result<json::object> parse_option(const json::value& v, std::size_t index) {
  const std::string where = "options[" + std::to_string(index) + "]";
  const auto bad = [](std::string m) { return tether::error(util_errc::invalid_argument, std::move(m)); };
  if (!v.is_object()) return bad(where + " must be an object with a label (and optionally an id)");
  const auto& o = v.get_object();
  for (const auto& kv : o)
    if (kv.key() != "id" && kv.key() != "label")
      return bad("unknown key '" + std::string(kv.key()) + "' in " + where + "; expected id and label");
  const auto* label = o.if_contains("label");
  if (label == nullptr || label->is_null()) return bad(missing_argument(where + ".label"));
  if (!label->is_string()) return bad(wrong_type(where + ".label", "a string"));
  if (blank(label->get_string())) return bad(where + ".label is empty");
  if (label->get_string().size() > max_label_bytes)
    return bad(where + ".label is longer than " + std::to_string(max_label_bytes) + " bytes");
  std::string id;
  if (const auto* idv = o.if_contains("id"); idv != nullptr && !idv->is_null()) {
    if (!idv->is_string()) return bad(wrong_type(where + ".id", "a string"));
    if (blank(idv->get_string())) return bad(where + ".id is empty; leave it out to use the lowercased label");
    id = std::string(idv->get_string());
  } else {
    id = ascii_lowercase(label->get_string());
  }
  json::object out;
  out["id"] = id;
  out["label"] = label->get_string();
  return out;
}

class ask_user_tool final : public tool {
 public:
  ask_user_tool();
  [[nodiscard]] const tool_spec& spec() const override { return spec_; }
  boost::asio::awaitable<tool_outcome> run(json::value input, tool_context ctx) const override;

 private:
  tool_spec spec_;
};

tool_outcome ask(const json::value& input) {
  auto args = tool_args::parse(input, {"question", "options", "multi_select", "allow_other"});
  if (!args) return failed(args.error());
  auto question = args->required_string("question");
  if (!question) return failed(question.error());
  auto multi_select = args->optional_bool("multi_select");
  if (!multi_select) return failed(multi_select.error());
  auto allow_other = args->optional_bool("allow_other");
  if (!allow_other) return failed(allow_other.error());
  if (blank(*question)) return failed("the question is empty");
  if (question->size() > max_question_bytes)
    return failed("the question is longer than " + std::to_string(max_question_bytes) + " bytes");

  json::array options;
  if (const auto* raw = args->find("options")) {
    if (!raw->is_array()) return failed(wrong_type("options", "an array of {id, label} objects"));
    const auto& items = raw->get_array();
    if (items.size() > max_options)
      return failed("at most " + std::to_string(max_options) + " options are allowed; got " +
                    std::to_string(items.size()));
    for (std::size_t i = 0; i < items.size(); ++i) {
      auto option = parse_option(items[i], i);
      if (!option) return failed(option.error());
      for (const auto& seen : options)
        if (seen.as_object().at("id") == option->at("id"))
          return failed("duplicate option id '" + std::string(option->at("id").as_string()) +
                        "'; give each option a distinct id or label");
      options.emplace_back(std::move(option.value()));
    }
  }

  json::object q;
  q["id"] = "q1";
  q["question"] = *question;
  q["multi_select"] = multi_select->value_or(false);
  q["allow_other"] = allow_other->value_or(options.empty());
  q["options"] = std::move(options);
  json::array questions;
  questions.emplace_back(std::move(q));
  json::object payload;
  payload["questions"] = std::move(questions);

  tool_outcome out;
  out.status = tool_status::waiting;
  out.content = "waiting for the user to answer: " + *question;
  out.interaction_kind = "question";
  out.interaction_payload = std::move(payload);
  return out;
}

ask_user_tool::ask_user_tool() {
  json::object option_props;
  option_props["id"] = string_property("Short stable id of the option. Default: the label in lowercase.");
  option_props["label"] = string_property("The option as shown to the user.");
  json::object option = object_schema(std::move(option_props), {"label"});
  json::object options;
  options["type"] = "array";
  options["maxItems"] = max_options;
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
