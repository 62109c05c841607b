#include "mock/tools.h"

#include <cctype>

#include <boost/json/serialize.hpp>

#include "mock/directives.h"

namespace tether::mock {

namespace json = boost::json;

namespace {

bool iequals(std::string_view a, std::string_view b) { return a.size() == b.size() && starts_with_nocase(a, b); }

bool contains_nocase(std::string_view hay, std::string_view needle) {
  for (std::size_t i = 0; i + needle.size() <= hay.size(); ++i)
    if (starts_with_nocase(hay.substr(i), needle)) return true;
  return false;
}

// "mcp__tether__ask_user" for "ask_user"; "tether_ask_user" for names with '_'.
bool prefixed_name(std::string_view offered, std::string_view name) {
  if (offered.size() <= name.size() || !offered.ends_with(name)) return false;
  const auto head = offered.substr(0, offered.size() - name.size());
  if (head.ends_with("__") || head == "tether_") return true;  // Tether's own MCP server: tether_finish
  return name.find('_') != std::string_view::npos && head.ends_with('_');
}

template <class Match>
const tool_offer* find_by(const std::vector<tool_offer>& tools, const std::vector<std::string_view>& names,
                          Match match) {
  for (const auto name : names)
    for (const auto& t : tools)
      if (match(t.name, name)) return &t;
  return nullptr;
}

const tool_offer* find_among(const std::vector<tool_offer>& tools, const std::vector<std::string_view>& names) {
  if (const auto* t = find_by(tools, names, [](std::string_view a, std::string_view b) { return a == b; })) return t;
  if (const auto* t = find_by(tools, names, prefixed_name)) return t;
  return find_by(tools, names, iequals);
}

std::string joined(const std::vector<std::string_view>& names) {
  std::string out;
  for (const auto n : names) {
    if (!out.empty()) out += ", ";
    out += n;
  }
  return out;
}

std::string role_word(tool_role r) {
  switch (r) {
    case tool_role::shell:
      return "shell";
    case tool_role::write:
      return "file-writing";
    case tool_role::question:
      return "question";
    case tool_role::plan:
      return "plan";
  }
  return "shell";
}

std::string missing(tool_role r) {
  return "mock: no " + role_word(r) + " tool offered (looked for " + joined(tool_names(r)) + ")";
}

// ---- JSON schema reading ----

const json::object* properties(const json::object& schema) {
  const auto* p = schema.if_contains("properties");
  return p != nullptr && p->is_object() ? &p->as_object() : nullptr;
}

const json::object* property(const json::object& schema, std::string_view name) {
  const auto* props = properties(schema);
  if (props == nullptr) return nullptr;
  const auto* p = props->if_contains(name);
  return p != nullptr && p->is_object() ? &p->as_object() : nullptr;
}

// The property's main type: "string", "array", … ("" when unknown).
std::string type_of(const json::object& prop) {
  if (const auto* t = prop.if_contains("type")) {
    if (t->is_string()) return std::string(t->as_string());
    if (t->is_array())
      for (const auto& x : t->as_array())
        if (x.is_string() && x.as_string() != "null") return std::string(x.as_string());
  }
  for (const auto* key : {"anyOf", "oneOf"})
    if (const auto* alts = prop.if_contains(key); alts != nullptr && alts->is_array())
      for (const auto& alt : alts->as_array())
        if (alt.is_object())
          if (auto t = type_of(alt.as_object()); !t.empty() && t != "null") return t;
  if (prop.contains("enum")) return "string";
  if (prop.contains("items")) return "array";
  if (prop.contains("properties")) return "object";
  return {};
}

std::string description_of(const json::object& prop) {
  const auto* d = prop.if_contains("description");
  return d != nullptr && d->is_string() ? std::string(d->as_string()) : std::string();
}

std::vector<std::string> required_of(const json::object& schema) {
  std::vector<std::string> out;
  if (const auto* r = schema.if_contains("required"); r != nullptr && r->is_array())
    for (const auto& x : r->as_array())
      if (x.is_string()) out.emplace_back(x.as_string());
  return out;
}

// The first of `keys` that the schema has, else nullopt.
std::optional<std::string> pick(const json::object& schema, std::initializer_list<std::string_view> keys) {
  for (const auto k : keys)
    if (property(schema, k) != nullptr) return std::string(k);
  return std::nullopt;
}

// The item schema of an array property.
json::object items_of(const json::object* prop) {
  if (prop == nullptr) return {};
  const auto* items = prop->if_contains("items");
  return items != nullptr && items->is_object() ? items->as_object() : json::object();
}

// An enum value: `preferred` when the property allows it (or has no enum).
json::value enum_value(const json::object* prop, std::string_view preferred) {
  if (prop == nullptr) return json::string(preferred);
  const auto* e = prop->if_contains("enum");
  if (e == nullptr || !e->is_array() || e->as_array().empty()) return json::string(preferred);
  for (const auto& v : e->as_array())
    if (v.is_string() && v.as_string() == preferred) return v;
  return e->as_array().front();
}

json::value placeholder(const json::object* prop, const std::string& hint) {
  if (prop == nullptr) return json::string(hint);
  if (const auto* d = prop->if_contains("default")) return *d;
  if (const auto* e = prop->if_contains("enum"); e != nullptr && e->is_array() && !e->as_array().empty())
    return e->as_array().front();
  const auto t = type_of(*prop);
  if (t == "boolean") return false;
  if (t == "integer" || t == "number") {
    if (const auto* m = prop->if_contains("minimum"); m != nullptr && m->is_number()) return *m;
    return 0;
  }
  if (t == "array") return json::array();
  if (t == "object") return json::object();
  return json::string(hint);
}

// Fills the required properties `args` still lacks.
void fill_required(const json::object& schema, json::object& args, const std::string& hint) {
  for (const auto& name : required_of(schema))
    if (!args.contains(name)) args[name] = placeholder(property(schema, name), hint);
}

tool_call make_call(const tool_offer& t, const json::object& args) {
  tool_call call;
  call.name = t.name;
  call.kind = t.kind;
  call.tool_namespace = t.tool_namespace;
  call.arguments = json::serialize(args);
  return call;
}

// ---- per action ----

json::object question_object(const json::object& schema, const std::string& question,
                             const std::vector<std::string>& options, const std::optional<std::string>& id) {
  const bool unknown = properties(schema) == nullptr;  // no schema: Tether's ask_user shape
  json::object q;
  q[pick(schema, {"question", "prompt", "text", "title", "message"}).value_or("question")] = question;
  if (property(schema, "header") != nullptr) q["header"] = "Question";
  if (id && property(schema, "id") != nullptr) q["id"] = *id;
  const auto options_key = pick(schema, {"options", "choices"}).value_or("options");
  const auto* options_prop = property(schema, options_key);
  const auto item = items_of(options_prop);
  const bool as_strings = options_prop != nullptr && type_of(item) == "string";
  json::array opts;
  for (const auto& label : options) {
    if (as_strings) {
      opts.emplace_back(label);
      continue;
    }
    json::object o;
    const bool item_known = properties(item) != nullptr;
    if (!item_known || property(item, "id") != nullptr) o["id"] = option_id(label);
    if (!item_known || property(item, "label") != nullptr) o["label"] = label;
    if (property(item, "value") != nullptr) o["value"] = option_id(label);
    if (property(item, "description") != nullptr) o["description"] = label;
    fill_required(item, o, label);
    opts.emplace_back(std::move(o));
  }
  q[options_key] = std::move(opts);
  for (const auto* key : {"multi_select", "multiSelect", "multiple", "allow_multiple"})
    if (property(schema, key) != nullptr) q[key] = false;
  for (const auto* key : {"allow_other", "allowOther", "allow_custom"})
    if (property(schema, key) != nullptr) q[key] = true;
  if (unknown) {
    q["multi_select"] = false;
    q["allow_other"] = true;
  }
  fill_required(schema, q, question);
  return q;
}

json::object plan_step(const json::object& item, const std::string& step, std::size_t index) {
  json::object o;
  o[pick(item, {"step", "content", "title", "text", "description", "name"}).value_or("step")] = step;
  if (const auto* s = property(item, "status")) o["status"] = enum_value(s, "pending");
  if (const auto* p = property(item, "priority")) o["priority"] = enum_value(p, "medium");
  if (property(item, "id") != nullptr) o["id"] = std::to_string(index + 1);
  if (property(item, "activeForm") != nullptr) o["activeForm"] = step;
  fill_required(item, o, step);
  return o;
}

}  // namespace

const std::vector<std::string_view>& tool_names(tool_role r) {
  static const std::vector<std::string_view> shell = {"bash",         "shell",       "Bash",
                                                      "exec_command", "local_shell", "run_command"};
  static const std::vector<std::string_view> write = {"write", "Write", "write_file", "create_file"};
  static const std::vector<std::string_view> question = {"ask_user", "tether_ask_user", "AskUserQuestion", "question"};
  static const std::vector<std::string_view> plan = {"write_plan", "tether_write_plan", "update_plan", "todowrite"};
  switch (r) {
    case tool_role::shell:
      return shell;
    case tool_role::write:
      return write;
    case tool_role::question:
      return question;
    case tool_role::plan:
      return plan;
  }
  return shell;
}

const tool_offer* find_tool(const std::vector<tool_offer>& tools, tool_role r) {
  return find_among(tools, tool_names(r));
}

const tool_offer* find_tool_named(const std::vector<tool_offer>& tools, std::string_view name) {
  const std::vector<std::string_view> names = {name};
  return find_among(tools, names);
}

bool is_question_tool(std::string_view name) {
  for (const auto n : tool_names(tool_role::question))
    if (name == n || prefixed_name(name, n) || iequals(name, n)) return true;
  return false;
}

std::string shell_quote(std::string_view s) {
  std::string out = "'";
  for (const char ch : s) {
    if (ch == '\'')
      out += "'\\''";
    else
      out.push_back(ch);
  }
  out.push_back('\'');
  return out;
}

std::string option_id(std::string_view label) {
  std::string out(label);
  for (char& ch : out) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return out;
}

std::optional<std::string> working_directory(const conversation& c) {
  static constexpr std::string_view line_markers[] = {"Primary working directory:", "Working directory:"};
  for (const auto r : {role::system, role::user}) {
    for (const auto& m : c.messages) {
      if (m.role != r) continue;
      std::string_view text = m.text;
      if (const auto a = text.find("<cwd>"); a != std::string_view::npos) {
        const auto b = text.find("</cwd>", a);
        if (b != std::string_view::npos) return std::string(trim(text.substr(a + 5, b - a - 5)));
      }
      for (const auto marker : line_markers) {
        for (std::size_t i = 0; i + marker.size() <= text.size(); ++i) {
          if (!starts_with_nocase(text.substr(i), marker)) continue;
          auto rest = text.substr(i + marker.size());
          rest = rest.substr(0, rest.find('\n'));
          if (auto dir = trim(rest); !dir.empty()) return std::string(dir);
        }
      }
    }
  }
  return std::nullopt;
}

action_outcome shell_call(const conversation& c, const std::string& command, shell_hints hints) {
  const auto* t = find_tool(c.tools, tool_role::shell);
  if (t == nullptr) return missing(tool_role::shell);
  if (t->kind == tool_kind::custom) {
    tool_call call;
    call.name = t->name;
    call.kind = t->kind;
    call.tool_namespace = t->tool_namespace;
    call.arguments = command;
    return call;
  }
  json::object args;
  if (t->kind == tool_kind::local_shell) {
    args["command"] = json::array{"bash", "-lc", command};
    if (hints.long_wait) args["timeout_ms"] = 130'000;
    return make_call(*t, args);
  }
  const auto& schema = t->schema;
  std::string key = pick(schema, {"command", "cmd"}).value_or("");
  if (key.empty()) {
    for (const auto& r : required_of(schema))
      if (const auto* p = property(schema, r); p != nullptr && type_of(*p) == "string") {
        key = r;
        break;
      }
  }
  if (key.empty()) key = "command";
  const auto* prop = property(schema, key);
  if (prop != nullptr && type_of(*prop) == "array")
    args[key] = json::array{"bash", "-lc", command};
  else
    args[key] = command;
  if (hints.long_wait) {
    for (const auto* k : {"timeout_ms", "yield_time_ms", "timeout"}) {
      const auto* p = property(schema, k);
      if (p == nullptr) continue;
      const auto d = description_of(*p);
      const bool seconds =
          contains_nocase(d, "second") && !contains_nocase(d, "millisecond") && std::string_view(k) == "timeout";
      args[k] = seconds ? 130 : 130'000;
    }
  }
  fill_required(schema, args, "Run a shell command");
  return make_call(*t, args);
}

action_outcome write_call(const conversation& c, const std::string& path, const std::string& content) {
  const auto* t = find_tool(c.tools, tool_role::write);
  if (t == nullptr) {
    if (find_tool(c.tools, tool_role::shell) == nullptr)
      return "mock: no file-writing or shell tool offered (looked for " + joined(tool_names(tool_role::write)) + ", " +
             joined(tool_names(tool_role::shell)) + ")";
    std::string cmd;
    if (const auto slash = path.rfind('/'); slash != std::string::npos && slash > 0)
      cmd = "mkdir -p " + shell_quote(path.substr(0, slash)) + " && ";
    cmd += "printf '%s' " + shell_quote(content) + " > " + shell_quote(path);
    return shell_call(c, cmd);
  }
  const auto& schema = t->schema;
  const auto path_key = pick(schema, {"path", "file_path", "filePath", "filename", "file"}).value_or("path");
  const auto content_key = pick(schema, {"content", "contents", "text", "file_text", "data"}).value_or("content");
  std::string target = path;
  if (const auto* p = property(schema, path_key);
      !target.starts_with('/') && p != nullptr && contains_nocase(description_of(*p), "absolute")) {
    if (auto dir = working_directory(c)) {
      if (!dir->ends_with('/')) dir->push_back('/');
      target = *dir + target;
    }
  }
  json::object args;
  args[path_key] = target;
  args[content_key] = content;
  fill_required(schema, args, "Write " + path);
  return make_call(*t, args);
}

action_outcome question_call(const conversation& c, const std::string& question,
                             const std::vector<std::string>& options) {
  const auto* t = find_tool(c.tools, tool_role::question);
  if (t == nullptr) return missing(tool_role::question);
  const auto& schema = t->schema;
  json::object args;
  if (const auto* qs = property(schema, "questions"); qs != nullptr && type_of(*qs) == "array") {
    json::array list;
    list.emplace_back(question_object(items_of(qs), question, options, std::string("q1")));
    args["questions"] = std::move(list);
    fill_required(schema, args, question);
  } else {
    args = question_object(schema, question, options, std::nullopt);
  }
  return make_call(*t, args);
}

action_outcome plan_call(const conversation& c, const std::vector<std::string>& steps) {
  const auto* t = find_tool(c.tools, tool_role::plan);
  if (t == nullptr) return missing(tool_role::plan);
  const auto& schema = t->schema;
  json::object args;
  auto list_key = pick(schema, {"steps", "plan", "todos", "items", "tasks"});
  if (list_key && type_of(*property(schema, *list_key)) != "array") list_key.reset();
  if (!list_key) {
    if (const auto* props = properties(schema))
      for (const auto& [k, v] : *props)
        if (v.is_object() && type_of(v.as_object()) == "array") {
          list_key = std::string(k);
          break;
        }
  }
  if (list_key || properties(schema) == nullptr) {
    const auto key = list_key.value_or("steps");
    const auto item = items_of(property(schema, key));
    json::array list;
    for (std::size_t i = 0; i < steps.size(); ++i) {
      if (properties(item) != nullptr)
        list.emplace_back(plan_step(item, steps[i], i));
      else
        list.emplace_back(steps[i]);
    }
    args[key] = std::move(list);
  } else {
    std::string markdown;
    for (const auto& s : steps) markdown += "- " + s + "\n";
    args[pick(schema, {"plan", "content", "markdown", "text"}).value_or("plan")] = markdown;
  }
  fill_required(schema, args, "Plan");
  return make_call(*t, args);
}

action_outcome named_call(const conversation& c, const std::string& name, const json::value& input) {
  const auto* t = find_tool_named(c.tools, name);
  if (t == nullptr) {
    std::string offered;
    for (const auto& tool : c.tools) offered += (offered.empty() ? "" : ", ") + tool.name;
    return "mock: tool " + name + " is not offered (offered: " + (offered.empty() ? "none" : offered) + ")";
  }
  tool_call call;
  call.name = t->name;
  call.kind = t->kind;
  call.tool_namespace = t->tool_namespace;
  call.arguments =
      t->kind == tool_kind::custom && input.is_string() ? std::string(input.as_string()) : json::serialize(input);
  return call;
}

}  // namespace tether::mock
