#include "e2e/suite.h"

#include <algorithm>
#include <array>
#include <fstream>
#include <iterator>
#include <set>
#include <span>

#include <fmt/format.h>
#include <toml++/toml.h>

#include "e2e/suite_internal.h"

namespace tether::e2e {

namespace {

using detail::key_list;

// Each enum's TOML name; to_string, parsing and "allowed:" lists read these.
template <class E>
using names = std::pair<E, std::string_view>;

constexpr std::array<names<step_kind>, 8> step_names{{{step_kind::create_session, "create_session"},
                                                      {step_kind::send, "send"},
                                                      {step_kind::wait, "wait"},
                                                      {step_kind::stop, "stop"},
                                                      {step_kind::reset, "reset"},
                                                      {step_kind::answer, "answer"},
                                                      {step_kind::restart, "restart"},
                                                      {step_kind::sleep, "sleep"}}};
constexpr std::array<names<wait_target>, 5> wait_names{{{wait_target::idle, "idle"},
                                                        {wait_target::waiting, "waiting"},
                                                        {wait_target::running, "running"},
                                                        {wait_target::runs, "runs"},
                                                        {wait_target::file, "file"}}};
constexpr std::array<names<matcher_kind>, 12> matcher_names{{{matcher_kind::message_exact, "message_exact"},
                                                             {matcher_kind::message_occurrences, "message_occurrences"},
                                                             {matcher_kind::message_ordered, "message_ordered"},
                                                             {matcher_kind::message_absent, "message_absent"},
                                                             {matcher_kind::file_exact, "file_exact"},
                                                             {matcher_kind::run_status, "run_status"},
                                                             {matcher_kind::run_count, "run_count"},
                                                             {matcher_kind::session_status, "session_status"},
                                                             {matcher_kind::interaction_status, "interaction_status"},
                                                             {matcher_kind::runtime, "runtime"},
                                                             {matcher_kind::environment, "environment"},
                                                             {matcher_kind::usage_reported, "usage_reported"}}};
constexpr std::array providers{std::string_view("openai-chat"), std::string_view("openai-responses"),
                               std::string_view("anthropic")};

template <class Range>
std::string join(const Range& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + std::string(n);
  return out;
}

template <class E, std::size_t N>
std::string names_of(const std::array<names<E>, N>& table) {
  std::vector<std::string_view> out;
  out.reserve(N);
  for (const auto& [e, name] : table) out.push_back(name);
  return join(out);
}

template <class E, std::size_t N>
std::optional<E> from_name(std::string_view name, const std::array<names<E>, N>& table) {
  for (const auto& [e, n] : table)
    if (n == name) return e;
  return std::nullopt;
}

template <class E, std::size_t N>
std::string_view name_of(E e, const std::array<names<E>, N>& table) {
  for (const auto& [k, n] : table)
    if (k == e) return n;
  return "unknown";
}

tether::error invalid(std::string_view where, std::string_view message) {
  return make_error(e2e_errc::invalid_definition, fmt::format("{}: {}", where, message));
}

template <class T>
result<void> assign(T& out, result<T> r) {
  if (!r) return r.error();
  out = std::move(*r);
  return ok();
}

bool is_id(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(),
                                   [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-'; });
}

bool is_workspace_path(const std::string& p) {
  const std::filesystem::path path(p);
  if (p.empty() || path.is_absolute()) return false;
  return std::none_of(path.begin(), path.end(), [](const auto& part) { return part == ".."; });
}

// Typed, checked access to one TOML table; every error names `where` and the key.
class table_reader {
 public:
  table_reader(const toml::table& t, std::string where) : t_(t), where_(std::move(where)) {}

  [[nodiscard]] bool has(std::string_view key) const { return t_.contains(key); }
  [[nodiscard]] tether::error fail(std::string_view message) const { return invalid(where_, message); }

  // `what` empty: "unknown key"; otherwise "does not belong to <what>".
  [[nodiscard]] result<void> only(const key_list& known, std::string_view what = {}) const {
    for (const auto& [key, value] : t_) {
      (void)value;
      if (std::find(known.begin(), known.end(), key.str()) != known.end()) continue;
      if (what.empty()) return fail(fmt::format("unknown key \"{}\" (known: {})", key.str(), join(known)));
      return fail(fmt::format("\"{}\" does not belong to {} (it takes: {})", key.str(), what, join(known)));
    }
    return ok();
  }

  [[nodiscard]] result<std::string> raw_text(std::string_view key) const {
    const auto* node = t_.get(key);
    if (node == nullptr) return fail(fmt::format("missing \"{}\"", key));
    auto v = node->value<std::string>();
    if (!node->is_string() || !v) return fail(fmt::format("\"{}\" must be a string", key));
    return *v;
  }

  [[nodiscard]] result<std::string> text(std::string_view key) const {
    auto v = raw_text(key);
    if (v && v->empty()) return fail(fmt::format("\"{}\" must not be empty", key));
    return v;
  }

  [[nodiscard]] result<std::string> text_or(std::string_view key, std::string fallback) const {
    return has(key) ? text(key) : result<std::string>(std::move(fallback));
  }

  [[nodiscard]] result<std::string> raw_text_or(std::string_view key, std::string fallback) const {
    return has(key) ? raw_text(key) : result<std::string>(std::move(fallback));
  }

  [[nodiscard]] result<std::string> one_of(std::string_view key, std::string fallback,
                                           std::span<const std::string_view> allowed) const {
    auto v = text_or(key, std::move(fallback));
    if (v && std::find(allowed.begin(), allowed.end(), *v) == allowed.end())
      return fail(fmt::format("\"{}\" is \"{}\" (allowed: {})", key, *v, join(allowed)));
    return v;
  }

  [[nodiscard]] result<std::string> id(std::string_view key) const {
    auto v = text(key);
    if (v && !is_id(*v)) return fail(fmt::format("\"{}\" is \"{}\", which is not [a-z0-9-]+", key, *v));
    return v;
  }

  [[nodiscard]] result<std::string> path(std::string_view key) const {
    auto v = text(key);
    if (v && !is_workspace_path(*v))
      return fail(fmt::format("\"{}\" is \"{}\", which is not a relative path inside the workspace", key, *v));
    return v;
  }

  [[nodiscard]] result<std::int64_t> integer(std::string_view key, std::int64_t min) const {
    const auto* node = t_.get(key);
    if (node == nullptr) return fail(fmt::format("missing \"{}\"", key));
    if (!node->is_integer()) return fail(fmt::format("\"{}\" must be an integer", key));
    const auto v = node->value<std::int64_t>().value_or(0);
    if (v < min) return fail(fmt::format("\"{}\" is {}; it must be at least {}", key, v, min));
    return v;
  }

  [[nodiscard]] result<std::int64_t> integer_or(std::string_view key, std::int64_t fallback, std::int64_t min) const {
    return has(key) ? integer(key, min) : result<std::int64_t>(fallback);
  }

  [[nodiscard]] result<std::vector<std::string>> texts(std::string_view key) const {
    const auto* node = t_.get(key);
    if (node == nullptr) return fail(fmt::format("missing \"{}\"", key));
    const auto* arr = node->as_array();
    if (arr == nullptr) return fail(fmt::format("\"{}\" must be an array of strings", key));
    std::vector<std::string> out;
    for (const auto& el : *arr) {
      auto v = el.value<std::string>();
      if (!el.is_string() || !v || v->empty())
        return fail(fmt::format("\"{}\" must be an array of non-empty strings", key));
      out.push_back(*v);
    }
    if (out.empty()) return fail(fmt::format("\"{}\" must not be empty", key));
    return out;
  }

  [[nodiscard]] result<void> known_templates(std::string_view key, const std::string& value) const {
    const auto unknown = unknown_template_names(value);
    if (unknown.empty()) return ok();
    std::vector<std::string> braced;
    braced.reserve(unknown.size());
    for (const auto& n : unknown) braced.push_back("{" + n + "}");
    return fail(
        fmt::format("\"{}\" uses unknown template {} (known: {{nonce}}, {{marker}}, {{marker1}}…{{marker9}}, "
                    "{{phrase}}, {{cell}}; write {{{{ and }}}} for literal braces)",
                    key, join(braced)));
  }

  [[nodiscard]] result<std::string> template_text(std::string_view key) const {
    auto v = text(key);
    if (v) TETHER_TRY(known_templates(key, *v));
    return v;
  }

  [[nodiscard]] const toml::node* node(std::string_view key) const { return t_.get(key); }

 private:
  const toml::table& t_;
  std::string where_;
};

// ---- steps ----

key_list step_keys(step_kind k) {
  switch (k) {
    case step_kind::send:
      return {"do", "text", "delivery"};
    case step_kind::wait:
      return {"do", "for", "count", "path", "timeout_ms"};
    case step_kind::answer:
      return {"do", "option", "other"};
    case step_kind::restart:
      return {"do", "mode"};
    case step_kind::sleep:
      return {"do", "ms"};
    default:
      return {"do"};
  }
}

result<void> read_wait(const table_reader& r, step& s) {
  std::string target;
  TETHER_TRY(assign(target, r.text("for")));
  const auto t = from_name(target, wait_names);
  if (!t) return r.fail(fmt::format("\"for\" is \"{}\" (allowed: {})", target, names_of(wait_names)));
  s.target = *t;
  if (r.has("count") && s.target != wait_target::runs) return r.fail("\"count\" belongs to for = \"runs\" only");
  if (r.has("path") && s.target != wait_target::file) return r.fail("\"path\" belongs to for = \"file\" only");
  if (s.target == wait_target::runs) TETHER_TRY(assign(s.count, r.integer("count", 0)));
  if (s.target == wait_target::file) TETHER_TRY(assign(s.path, r.path("path")));
  std::int64_t timeout = 0;
  TETHER_TRY(assign(timeout, r.integer_or("timeout_ms", s.timeout.count(), 1)));
  s.timeout = std::chrono::milliseconds(timeout);
  return ok();
}

result<void> read_answer(const table_reader& r, step& s) {
  if (r.has("option") == r.has("other")) return r.fail("answer takes exactly one of \"option\" and \"other\"");
  if (r.has("option")) return assign(s.option, r.template_text("option"));
  return assign(s.other, r.template_text("other"));
}

result<void> read_step_fields(const table_reader& r, step& s) {
  static constexpr std::array deliveries{std::string_view("steer"), std::string_view("queue")};
  static constexpr std::array modes{std::string_view("graceful"), std::string_view("kill")};
  switch (s.kind) {
    case step_kind::send:
      TETHER_TRY(assign(s.text, r.template_text("text")));
      return assign(s.delivery, r.one_of("delivery", s.delivery, deliveries));
    case step_kind::wait:
      return read_wait(r, s);
    case step_kind::answer:
      return read_answer(r, s);
    case step_kind::restart: {
      std::string mode;
      TETHER_TRY(assign(mode, r.one_of("mode", "graceful", modes)));
      s.mode = mode == "kill" ? restart_mode::kill : restart_mode::graceful;
      return ok();
    }
    case step_kind::sleep: {
      std::int64_t ms = 0;
      TETHER_TRY(assign(ms, r.integer("ms", 0)));
      s.duration = std::chrono::milliseconds(ms);
      return ok();
    }
    default:
      return ok();
  }
}

result<step> read_step(const table_reader& r) {
  std::string name;
  TETHER_TRY(assign(name, r.text("do")));
  const auto kind = from_name(name, step_names);
  if (!kind) return r.fail(fmt::format("unknown step \"{}\" (steps: {})", name, names_of(step_names)));
  TETHER_TRY(r.only(step_keys(*kind), fmt::format("a {} step", name)));
  step s;
  s.kind = *kind;
  TETHER_TRY(read_step_fields(r, s));
  return s;
}

}  // namespace

// ---- matchers ----

namespace detail {

key_list matcher_keys(matcher_kind k) {
  switch (k) {
    case matcher_kind::message_exact:
    case matcher_kind::message_absent:
      return {"kind", "text"};
    case matcher_kind::message_occurrences:
      return {"kind", "text", "count"};
    case matcher_kind::message_ordered:
      return {"kind", "texts"};
    case matcher_kind::file_exact:
      return {"kind", "path", "content"};
    case matcher_kind::run_status:
      return {"kind", "status", "run"};
    case matcher_kind::session_status:
    case matcher_kind::interaction_status:
      return {"kind", "status"};
    case matcher_kind::run_count:
      return {"kind", "count"};
    case matcher_kind::runtime:
    case matcher_kind::environment:
      return {"kind", "value"};
    case matcher_kind::usage_reported:
      return {"kind"};
  }
  return {"kind"};
}

}  // namespace detail

namespace {

using detail::matcher_keys;

result<void> read_templates(const table_reader& r, matcher_spec& m) {
  TETHER_TRY(assign(m.texts, r.texts("texts")));
  for (const auto& t : m.texts) TETHER_TRY(r.known_templates("texts", t));
  return ok();
}

// Every field a matcher kind takes is required but `run`.
result<void> read_matcher_field(const table_reader& r, std::string_view key, matcher_spec& m) {
  if (key == "run") return assign(m.run, r.integer_or(key, 0, 1));
  if (key == "text") return assign(m.text, r.template_text(key));
  if (key == "texts") return read_templates(r, m);
  if (key == "count") return assign(m.count, r.integer(key, 0));
  if (key == "path") return assign(m.path, r.path(key));
  if (key == "status") return assign(m.status, r.text(key));
  if (key == "value") return assign(m.value, r.text(key));
  TETHER_TRY(assign(m.content, r.raw_text(key)));  // content: exact bytes, may be empty
  return r.known_templates(key, m.content);
}

result<matcher_spec> read_matcher(const table_reader& r) {
  std::string name;
  TETHER_TRY(assign(name, r.text("kind")));
  const auto kind = from_name(name, matcher_names);
  if (!kind) return r.fail(fmt::format("unknown matcher \"{}\" (matchers: {})", name, names_of(matcher_names)));
  const auto keys = matcher_keys(*kind);
  TETHER_TRY(r.only(keys, fmt::format("a {} matcher", name)));
  matcher_spec m;
  m.kind = *kind;
  for (const auto key : keys)
    if (key != "kind") TETHER_TRY(read_matcher_field(r, key, m));
  return m;
}

// ---- cases and suites ----

// Calls read(reader) for each table of the array `key` (1-based "<what> N" in errors).
template <class T, class Read>
result<std::vector<T>> read_list(const table_reader& r, const std::string& where, std::string_view key,
                                 std::string_view what, Read read) {
  std::vector<T> out;
  const auto* node = r.node(key);
  if (node == nullptr) return out;
  const auto* arr = node->as_array();
  if (arr == nullptr) return r.fail(fmt::format("\"{}\" must be an array of tables", key));
  for (std::size_t i = 0; i < arr->size(); ++i) {
    const std::string item = fmt::format("{} {} {}", where, what, i + 1);
    const auto* t = (*arr)[i].as_table();
    if (t == nullptr) return invalid(item, "must be a table");
    auto v = read(table_reader(*t, item));
    if (!v) return v.error();
    out.push_back(std::move(*v));
  }
  return out;
}

result<void> check_steps(const table_reader& r, const case_def& c) {
  if (c.steps.empty()) return r.fail("the case has no steps");
  if (c.steps.front().kind != step_kind::create_session)
    return r.fail(fmt::format("the first step must be create_session (it is {})", to_string(c.steps.front().kind)));
  return ok();
}

result<case_def> read_case(const toml::table& t, const std::string& origin, std::size_t index) {
  case_def c;
  TETHER_TRY(assign(c.id, table_reader(t, fmt::format("{}: case {}", origin, index)).id("id")));
  const std::string where = fmt::format("{}: case \"{}\"", origin, c.id);
  const table_reader r(t, where);
  TETHER_TRY(r.only({"id", "title", "mode", "steps", "matchers"}));
  TETHER_TRY(assign(c.title, r.text("title")));
  static constexpr std::array modes{std::string_view("chat")};
  TETHER_TRY(assign(c.mode, r.one_of("mode", c.mode, modes)));
  TETHER_TRY(assign(c.steps, read_list<step>(r, where, "steps", "step", read_step)));
  TETHER_TRY(check_steps(r, c));
  TETHER_TRY(assign(c.matchers, read_list<matcher_spec>(r, where, "matchers", "matcher", read_matcher)));
  return c;
}

result<std::vector<std::string>> distinct_ids(const table_reader& r, std::string_view key) {
  auto ids = r.texts(key);
  if (!ids) return ids;
  std::set<std::string> seen;
  for (const auto& id : *ids) {
    if (!is_id(id)) return r.fail(fmt::format("\"{}\" names \"{}\", which is not [a-z0-9-]+", key, id));
    if (!seen.insert(id).second) return r.fail(fmt::format("\"{}\" names \"{}\" twice", key, id));
  }
  return ids;
}

result<void> read_cases(const toml::table& doc, const std::string& origin, suite_def& s) {
  const auto* node = doc.get("cases");
  const auto* arr = node == nullptr ? nullptr : node->as_array();
  if (node != nullptr && arr == nullptr) return invalid(origin, "\"cases\" must be an array of tables ([[cases]])");
  if (arr == nullptr || arr->empty())
    return invalid(fmt::format("{}: suite \"{}\"", origin, s.id), "the suite has no cases");
  std::set<std::string> seen;
  for (std::size_t i = 0; i < arr->size(); ++i) {
    const auto* t = (*arr)[i].as_table();
    if (t == nullptr) return invalid(fmt::format("{}: case {}", origin, i + 1), "must be a table");
    auto c = read_case(*t, origin, i + 1);
    if (!c) return c.error();
    if (!seen.insert(c->id).second)
      return invalid(fmt::format("{}: suite \"{}\"", origin, s.id), fmt::format("duplicate case id \"{}\"", c->id));
    s.cases.push_back(std::move(*c));
  }
  return ok();
}

result<suite_def> read_suite(const toml::table& doc, const toml::table& t, const std::string& origin) {
  suite_def s;
  s.file = origin;
  TETHER_TRY(assign(s.id, table_reader(t, origin + ": [suite]").id("id")));
  const table_reader r(t, fmt::format("{}: suite \"{}\"", origin, s.id));
  TETHER_TRY(r.only({"id", "title", "description", "profiles", "environments"}));
  TETHER_TRY(assign(s.title, r.text("title")));
  TETHER_TRY(assign(s.description, r.raw_text_or("description", "")));
  TETHER_TRY(assign(s.profiles, distinct_ids(r, "profiles")));
  TETHER_TRY(assign(s.environments, distinct_ids(r, "environments")));
  TETHER_TRY(read_cases(doc, origin, s));
  return s;
}

// ---- profiles and environments ----

result<void> check_model_server(const table_reader& r, const profile_def& p) {
  if (p.model_server == "mock") {
    if (!p.base_url.empty()) return r.fail("\"base_url\" is only used when model_server is not \"mock\"");
    return ok();
  }
  if (p.base_url.empty()) return r.fail(fmt::format("missing \"base_url\" (model_server is \"{}\")", p.model_server));
  if (!p.base_url.starts_with("http://") && !p.base_url.starts_with("https://"))
    return r.fail("\"base_url\" must start with http:// or https://");
  return ok();
}

result<profile_def> read_profile(const std::string& id, const toml::table& t, const std::string& origin) {
  const table_reader r(t, fmt::format("{}: profile \"{}\"", origin, id));
  if (!is_id(id)) return r.fail("the profile id is not [a-z0-9-]+");
  TETHER_TRY(r.only({"title", "runtime", "provider", "model", "model_server", "base_url", "api_key_env"}));
  profile_def p;
  p.id = id;
  TETHER_TRY(assign(p.title, r.text("title")));
  TETHER_TRY(assign(p.runtime, r.text_or("runtime", p.runtime)));
  if (!is_id(p.runtime)) return r.fail(fmt::format("\"runtime\" is \"{}\", which is not [a-z0-9-]+", p.runtime));
  TETHER_TRY(assign(p.provider, r.text("provider")));
  TETHER_TRY(assign(p.provider, r.one_of("provider", p.provider, providers)));
  TETHER_TRY(assign(p.model, r.text_or("model", p.model)));
  TETHER_TRY(assign(p.model_server, r.text_or("model_server", p.model_server)));
  TETHER_TRY(assign(p.base_url, r.text_or("base_url", "")));
  TETHER_TRY(assign(p.api_key_env, r.text_or("api_key_env", "")));
  TETHER_TRY(check_model_server(r, p));
  return p;
}

result<environment_def> read_environment(const std::string& id, const toml::table& t, const std::string& origin) {
  const table_reader r(t, fmt::format("{}: environment \"{}\"", origin, id));
  if (!is_id(id)) return r.fail("the environment id is not [a-z0-9-]+");
  TETHER_TRY(r.only({"title", "kind"}));
  static constexpr std::array kinds{std::string_view("local")};
  environment_def e;
  e.id = id;
  TETHER_TRY(assign(e.title, r.text("title")));
  TETHER_TRY(assign(e.kind, r.one_of("kind", e.kind, kinds)));
  return e;
}

// Reads `[key.ID]` tables with read(id, table, origin) into `out`.
template <class T, class Read>
result<void> read_named(const toml::table& doc, std::string_view key, const std::string& origin,
                        std::map<std::string, T>& out, Read read) {
  const auto* node = doc.get(key);
  if (node == nullptr) return ok();
  const auto* tables = node->as_table();
  if (tables == nullptr) return invalid(origin, fmt::format("\"{}\" must be a table of tables ([{}.ID])", key, key));
  for (const auto& [id, value] : *tables) {
    const auto* t = value.as_table();
    if (t == nullptr) return invalid(origin, fmt::format("{}.{} must be a table", key, id.str()));
    auto v = read(std::string(id.str()), *t, origin);
    if (!v) return v.error();
    out.emplace(v->id, std::move(*v));
  }
  return ok();
}

// One file, without checking the suite's references (they may be in other files).
result<catalogue> parse_file(std::string_view text, const std::string& origin) {
  toml::table doc;
  try {
    doc = toml::parse(text, std::string_view(origin));
  } catch (const toml::parse_error& e) {
    return invalid(
        origin, fmt::format("line {}, column {}: {}", e.source().begin.line, e.source().begin.column, e.description()));
  }
  TETHER_TRY(table_reader(doc, origin).only({"profiles", "environments", "suite", "cases"}));
  catalogue cat;
  TETHER_TRY(read_named(doc, "profiles", origin, cat.profiles, read_profile));
  TETHER_TRY(read_named(doc, "environments", origin, cat.environments, read_environment));
  const auto* suite_node = doc.get("suite");
  if (suite_node == nullptr) {
    if (doc.contains("cases")) return invalid(origin, "[[cases]] without a [suite]");
    return cat;
  }
  const auto* suite_table = suite_node->as_table();
  if (suite_table == nullptr) return invalid(origin, "\"suite\" must be a table ([suite])");
  auto s = read_suite(doc, *suite_table, origin);
  if (!s) return s.error();
  cat.suites.push_back(std::move(*s));
  return cat;
}

template <class T>
std::string known_ids(const std::map<std::string, T>& m) {
  std::vector<std::string_view> ids;
  ids.reserve(m.size());
  for (const auto& [id, v] : m) ids.push_back(id);
  return ids.empty() ? "none" : join(ids);
}

result<void> check_references(const catalogue& cat) {
  for (const auto& s : cat.suites) {
    const std::string where = fmt::format("{}: suite \"{}\"", s.file.string(), s.id);
    for (const auto& p : s.profiles)
      if (!cat.profiles.contains(p))
        return invalid(where, fmt::format("unknown profile \"{}\" (defined: {})", p, known_ids(cat.profiles)));
    for (const auto& e : s.environments)
      if (!cat.environments.contains(e))
        return invalid(where, fmt::format("unknown environment \"{}\" (defined: {})", e, known_ids(cat.environments)));
  }
  return ok();
}

// Where each id was defined, so a duplicate names both files.
struct origins {
  std::map<std::string, std::string> profiles, environments, suites;
};

result<void> claim(std::map<std::string, std::string>& seen, std::string_view what, const std::string& id,
                   const std::string& origin) {
  const auto [it, fresh] = seen.emplace(id, origin);
  if (fresh) return ok();
  return invalid(origin, fmt::format("duplicate {} id \"{}\" (already defined in {})", what, id, it->second));
}

result<void> merge(catalogue& into, catalogue part, const std::string& origin, origins& seen) {
  for (auto& [id, p] : part.profiles) {
    TETHER_TRY(claim(seen.profiles, "profile", id, origin));
    into.profiles.emplace(id, std::move(p));
  }
  for (auto& [id, e] : part.environments) {
    TETHER_TRY(claim(seen.environments, "environment", id, origin));
    into.environments.emplace(id, std::move(e));
  }
  for (auto& s : part.suites) {
    TETHER_TRY(claim(seen.suites, "suite", s.id, origin));
    into.suites.push_back(std::move(s));
  }
  return ok();
}

result<std::vector<std::filesystem::path>> toml_files(const std::filesystem::path& dir) {
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec))
    return make_error(e2e_errc::not_found, fmt::format("{}: no such directory", dir.string()));
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec))
    if (entry.path().extension() == ".toml" && entry.is_regular_file()) files.push_back(entry.path());
  if (ec) return make_error(e2e_errc::io, fmt::format("{}: {}", dir.string(), ec.message()));
  std::sort(files.begin(), files.end());
  return files;
}

result<std::string> read_text(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) return make_error(e2e_errc::io, fmt::format("{}: cannot read the file", file.string()));
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

}  // namespace

result<catalogue> parse_catalogue(std::string_view toml, const std::string& origin) {
  auto cat = parse_file(toml, origin);
  if (cat) TETHER_TRY(check_references(*cat));
  return cat;
}

result<catalogue> load_catalogue(const std::filesystem::path& dir) {
  auto files = toml_files(dir);
  if (!files) return files.error();
  catalogue cat;
  origins seen;
  for (const auto& file : *files) {
    auto text = read_text(file);
    if (!text) return text.error();
    auto part = parse_file(*text, file.string());
    if (!part) return part.error();
    TETHER_TRY(merge(cat, std::move(*part), file.string(), seen));
  }
  TETHER_TRY(check_references(cat));
  return cat;
}

// ---- names ----

std::string_view to_string(step_kind k) { return name_of(k, step_names); }
std::string_view to_string(matcher_kind k) { return name_of(k, matcher_names); }
std::string_view to_string(wait_target t) { return name_of(t, wait_names); }

}  // namespace tether::e2e
