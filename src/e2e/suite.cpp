#include "e2e/suite.h"

#include <algorithm>
#include <array>
#include <set>
#include <span>

#include <fmt/format.h>
#include <toml++/toml.h>

#include "e2e/suite_internal.h"
#include "e2e/suite_toml.h"

namespace tether::e2e {

namespace {

using namespace detail;

// ---- steps ----

key_list step_keys(step_kind k) {
  switch (k) {
    case step_kind::send:
      return {"do", "text", "delivery"};
    case step_kind::wait:
      return {"do", "for", "count", "path", "status", "timeout_ms"};
    case step_kind::answer:
      return {"do", "option", "other"};
    case step_kind::restart:
      return {"do", "mode"};
    case step_kind::sleep:
      return {"do", "ms"};
    case step_kind::fork:
      return {"do", "run"};
    case step_kind::create_project:
    case step_kind::update_project:
      return {"do", "name", "repositories", "setup"};
    case step_kind::create_task:
      return {"do", "title", "mode", "project", "text"};
    case step_kind::reject:
      return {"do", "reason"};
    case step_kind::create_repositories:
      return {"do", "repositories"};
    case step_kind::reconfigure:
      return {"do", "model", "instructions"};
    default:
      return {"do"};
  }
}

// repositories = [{ name, branch?, content? }, …]
result<void> read_repositories(const table_reader& r, step& s) {
  const auto* node = r.node("repositories");
  if (node == nullptr) return ok();
  const auto* arr = node->as_array();
  if (arr == nullptr || arr->empty()) return r.fail("\"repositories\" must be a non-empty array of tables");
  for (std::size_t i = 0; i < arr->size(); ++i) {
    const auto* t = (*arr)[i].as_table();
    if (t == nullptr) return r.fail(fmt::format("repositories[{}] must be a table {{ name, branch?, content? }}", i));
    const table_reader item(*t, fmt::format("repositories[{}]", i));
    TETHER_TRY(item.only({"name", "branch", "content"}));
    repo_spec repo;
    TETHER_TRY(assign(repo.name, item.id("name")));
    TETHER_TRY(assign(repo.branch, item.text_or("branch", repo.branch)));
    TETHER_TRY(assign(repo.content, item.has("content") ? item.template_text("content") : result<std::string>("")));
    s.repositories.push_back(std::move(repo));
  }
  s.has_repositories = true;
  return ok();
}

result<void> read_project_step(const table_reader& r, step& s) {
  TETHER_TRY(assign(s.name, r.template_text("name")));
  TETHER_TRY(read_repositories(r, s));
  if (s.kind == step_kind::create_project && !s.has_repositories)
    return r.fail("create_project needs \"repositories\"");
  if (r.has("setup")) {
    TETHER_TRY(assign(s.setup, r.texts("setup")));
    s.has_setup = true;
  }
  return ok();
}

result<void> read_task_step(const table_reader& r, step& s) {
  static constexpr std::array work_modes{std::string_view("standard"), std::string_view("ask"),
                                         std::string_view("planning")};
  TETHER_TRY(assign(s.title, r.text("title")));
  TETHER_TRY(assign(s.work_mode, r.one_of("mode", s.work_mode, work_modes)));
  TETHER_TRY(assign(s.project, r.has("project") ? r.template_text("project") : result<std::string>("")));
  return assign(s.text, r.has("text") ? r.template_text("text") : result<std::string>(""));
}

result<void> read_wait(const table_reader& r, step& s) {
  std::string target;
  TETHER_TRY(assign(target, r.text("for")));
  const auto t = from_name(target, wait_names);
  if (!t) return r.fail(fmt::format("\"for\" is \"{}\" (allowed: {})", target, names_of(wait_names)));
  s.target = *t;
  if (r.has("count") && s.target != wait_target::runs) return r.fail("\"count\" belongs to for = \"runs\" only");
  if (r.has("path") && s.target != wait_target::file) return r.fail("\"path\" belongs to for = \"file\" only");
  if (r.has("status") && s.target != wait_target::task && s.target != wait_target::children)
    return r.fail("\"status\" belongs to for = \"task\" or \"children\" only");
  if (s.target == wait_target::task || s.target == wait_target::children) TETHER_TRY(assign(s.status, r.text("status")));
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
    case step_kind::fork:
      return assign(s.run, r.integer_or("run", 0, 0));
    case step_kind::sleep: {
      std::int64_t ms = 0;
      TETHER_TRY(assign(ms, r.integer("ms", 0)));
      s.duration = std::chrono::milliseconds(ms);
      return ok();
    }
    case step_kind::create_project:
    case step_kind::update_project:
      return read_project_step(r, s);
    case step_kind::create_task:
      return read_task_step(r, s);
    case step_kind::reject:
      return assign(s.reason, r.template_text("reason"));
    case step_kind::create_repositories:
      TETHER_TRY(read_repositories(r, s));
      return s.has_repositories ? ok() : r.fail("create_repositories needs \"repositories\"");
    case step_kind::reconfigure:
      if (!r.has("model") && !r.has("instructions")) return r.fail("reconfigure needs \"model\" or \"instructions\"");
      if (r.has("model")) {
        std::string model;
        TETHER_TRY(assign(model, r.text("model")));
        s.model = std::move(model);
      }
      if (r.has("instructions")) {
        std::string instructions;
        TETHER_TRY(assign(instructions, r.raw_text("instructions")));
        s.instructions = std::move(instructions);
      }
      return ok();
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
    case matcher_kind::same_agent_process:
    case matcher_kind::agent_session_resumed:
      return {"kind", "runs"};
    case matcher_kind::usage_reported:
    case matcher_kind::new_agent_process:
      return {"kind"};
    case matcher_kind::task_status:
      return {"kind", "status", "of"};
    case matcher_kind::plan_revisions:
    case matcher_kind::project_count:
    case matcher_kind::workspace_files:
      return {"kind", "count"};
    case matcher_kind::workspace_repos:
      return {"kind", "repos", "of"};
    case matcher_kind::freshness_decision:
      return {"kind", "run", "session", "workspace", "reasons"};
    case matcher_kind::context_absent:
      return {"kind", "text"};
    case matcher_kind::file_absent:
      return {"kind", "path"};
    case matcher_kind::lease_outcomes:
      return {"kind", "outcomes"};
    case matcher_kind::same_lease:
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

// lease_outcomes: one outcome per leased turn, each created | resumed | replaced.
result<void> read_outcomes(const table_reader& r, matcher_spec& m) {
  TETHER_TRY(assign(m.texts, r.texts("outcomes")));
  for (const auto& o : m.texts)
    if (o != "created" && o != "resumed" && o != "replaced")
      return r.fail(fmt::format("\"outcomes\": \"{}\" is not created, resumed or replaced", o));
  return ok();
}

// Every field a matcher kind takes is required but `run` and `runs`.
result<void> read_matcher_field(const table_reader& r, std::string_view key, matcher_spec& m) {
  if (key == "run") return assign(m.run, r.integer_or(key, 0, 1));
  if (key == "of") {
    static constexpr std::array of{std::string_view("task"), std::string_view("children")};
    return assign(m.of, r.one_of(key, m.of, of));
  }
  if (key == "session") return assign(m.session, r.text(key));
  if (key == "workspace") return assign(m.workspace, r.text(key));
  if (key == "runs") return r.has(key) ? assign(m.runs, r.distinct_integers(key, 1)) : ok();
  if (key == "text") return assign(m.text, r.template_text(key));
  if (key == "texts") return read_templates(r, m);
  if (key == "repos") return assign(m.texts, r.texts(key));                 // "api@main"
  if (key == "reasons") return assign(m.texts, r.texts(key, true));  // category names; [] when none changed
  if (key == "outcomes") return read_outcomes(r, m);
  if (key == "count") return assign(m.count, r.integer(key, 0));
  if (key == "path") return assign(m.path, r.path(key));
  if (key == "status") return assign(m.status, r.text(key));
  if (key == "value") return assign(m.value, r.template_text(key));
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
  // The session comes first: create_session, or create_task after the projects it needs.
  auto first = std::find_if(c.steps.begin(), c.steps.end(), [](const step& s) {
    return s.kind != step_kind::create_project && s.kind != step_kind::create_repositories;
  });
  if (first == c.steps.end() || (first->kind != step_kind::create_session && first->kind != step_kind::create_task))
    return r.fail(fmt::format("the first step must be create_session, or create_task after create_project and "
                              "create_repositories steps (it is {})",
                              to_string(first == c.steps.end() ? c.steps.back().kind : first->kind)));
  if (c.mode == "task" && first->kind != step_kind::create_task) return r.fail("a task case starts with create_task");
  if (c.mode == "chat" && first->kind != step_kind::create_session) return r.fail("a chat case starts with create_session");
  return ok();
}

// not_applicable = { "<runtime kind>" = "<reason>", … }
result<void> read_not_applicable(const table_reader& r, case_def& c) {
  const auto* node = r.node("not_applicable");
  if (node == nullptr) return ok();
  const auto* t = node->as_table();
  if (t == nullptr) return r.fail("\"not_applicable\" must be a table of runtime kind = \"reason\"");
  for (const auto& [key, value] : *t) {
    const std::string kind(key.str());
    if (std::find(runtime_kinds.begin(), runtime_kinds.end(), kind) == runtime_kinds.end())
      return r.fail(fmt::format("\"not_applicable\" names \"{}\", which is not a runtime kind (known: {})", kind,
                                join(runtime_kinds)));
    const auto reason = value.value<std::string>();
    if (!value.is_string() || !reason || reason->empty())
      return r.fail(fmt::format("\"not_applicable\".\"{}\" must be a non-empty string (the reason)", kind));
    c.not_applicable.emplace(kind, *reason);
  }
  return ok();
}

result<case_def> read_case(const toml::table& t, const std::string& origin, std::size_t index) {
  case_def c;
  TETHER_TRY(assign(c.id, table_reader(t, fmt::format("{}: case {}", origin, index)).id("id")));
  const std::string where = fmt::format("{}: case \"{}\"", origin, c.id);
  const table_reader r(t, where);
  TETHER_TRY(r.only({"id", "title", "mode", "steps", "matchers", "not_applicable"}));
  TETHER_TRY(assign(c.title, r.text("title")));
  static constexpr std::array modes{std::string_view("chat"), std::string_view("task")};
  TETHER_TRY(assign(c.mode, r.one_of("mode", c.mode, modes)));
  TETHER_TRY(assign(c.steps, read_list<step>(r, where, "steps", "step", read_step)));
  TETHER_TRY(check_steps(r, c));
  TETHER_TRY(assign(c.matchers, read_list<matcher_spec>(r, where, "matchers", "matcher", read_matcher)));
  TETHER_TRY(read_not_applicable(r, c));
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

// The keys a profile of runtime kind `runtime` takes (see profile_def).
key_list profile_keys(std::string_view runtime) {
  key_list keys{"title", "runtime", "model", "model_server", "base_url", "api_key_env"};
  if (runtime == "native") keys.emplace_back("provider");
  if (runtime == "opencode-run" || runtime == "opencode" || runtime == "acp-opencode") keys.emplace_back("wire");
  if (is_warm_runtime(runtime)) {
    keys.emplace_back("keep_alive_ms");
    keys.emplace_back("max_processes");
  }
  if (runtime == "acp") keys.emplace_back("command");
  return keys;
}

// keep_alive_ms, max_processes and command: only read where profile_keys let them in.
result<void> read_warm_keys(const table_reader& r, profile_def& p) {
  if (r.has("keep_alive_ms")) TETHER_TRY(assign(p.keep_alive_ms, as_optional(r.integer("keep_alive_ms", 100))));
  if (r.has("max_processes")) TETHER_TRY(assign(p.max_processes, as_optional(r.integer("max_processes", 1))));
  if (p.runtime == "acp") TETHER_TRY(assign(p.command, r.text("command")));
  return ok();
}

result<profile_def> read_profile(const std::string& id, const toml::table& t, const std::string& origin) {
  const table_reader r(t, fmt::format("{}: profile \"{}\"", origin, id));
  if (!is_id(id)) return r.fail("the profile id is not [a-z0-9-]+");
  profile_def p;
  p.id = id;
  TETHER_TRY(assign(p.runtime, r.one_of("runtime", p.runtime, runtime_kinds)));
  TETHER_TRY(r.only(profile_keys(p.runtime), fmt::format("a {} profile", p.runtime)));
  TETHER_TRY(assign(p.title, r.text("title")));
  if (p.runtime == "native") {
    TETHER_TRY(assign(p.provider, r.text("provider")));
    TETHER_TRY(assign(p.provider, r.one_of("provider", p.provider, providers)));
  }
  static constexpr std::array wires{std::string_view("chat"), std::string_view("responses"),
                                    std::string_view("messages")};
  if (r.has("wire")) TETHER_TRY(assign(p.wire, r.one_of("wire", "", wires)));
  TETHER_TRY(read_warm_keys(r, p));
  TETHER_TRY(assign(p.model, r.text_or("model", p.model)));
  TETHER_TRY(assign(p.model_server, r.text_or("model_server", p.model_server)));
  TETHER_TRY(assign(p.base_url, r.text_or("base_url", "")));
  TETHER_TRY(assign(p.api_key_env, r.text_or("api_key_env", "")));
  TETHER_TRY(check_model_server(r, p));
  return p;
}

result<environment_price> read_price(const table_reader& env) {
  const auto* t = env.table("price");
  if (t == nullptr) return env.fail("\"price\" must be a table");
  const table_reader r(*t, env.where() + " price");
  TETHER_TRY(r.only({"cpu_hour", "memory_gib_hour", "disk_gib_hour", "source", "date", "url"}));
  environment_price p;
  TETHER_TRY(assign(p.cpu_hour, r.number("cpu_hour")));
  TETHER_TRY(assign(p.memory_gib_hour, r.number("memory_gib_hour")));
  TETHER_TRY(assign(p.disk_gib_hour, r.number("disk_gib_hour")));
  TETHER_TRY(assign(p.source, r.text("source")));
  TETHER_TRY(assign(p.date, r.text("date")));
  TETHER_TRY(assign(p.url, r.text_or("url", "")));
  return p;
}

// The keys of a leased kind: warm time, resources, price, and Daytona's own.
result<void> read_lease_keys(const table_reader& r, environment_def& e) {
  if (r.has("keep_warm_ms")) TETHER_TRY(assign(e.keep_warm_ms, as_optional(r.integer("keep_warm_ms", 0))));
  TETHER_TRY(assign(e.cpu, r.integer_or("cpu", 0, 0)));
  TETHER_TRY(assign(e.memory_gib, r.integer_or("memory_gib", 0, 0)));
  TETHER_TRY(assign(e.disk_gib, r.integer_or("disk_gib", 0, 0)));
  if (r.has("price")) TETHER_TRY(assign(e.price, as_optional(read_price(r))));
  if (e.kind != "daytona") return ok();
  TETHER_TRY(assign(e.api_url, r.text_or("api_url", "https://app.daytona.io/api")));
  TETHER_TRY(assign(e.api_key_env, r.text_or("api_key_env", e.api_key_env)));
  for (auto [key, field] : {std::pair{"target", &e.target}, std::pair{"image", &e.image},
                            std::pair{"snapshot", &e.snapshot}, std::pair{"reach_host", &e.reach_host}})
    TETHER_TRY(assign(*field, r.text_or(key, "")));
  return ok();
}

result<environment_def> read_environment(const std::string& id, const toml::table& t, const std::string& origin) {
  const table_reader r(t, fmt::format("{}: environment \"{}\"", origin, id));
  if (!is_id(id)) return r.fail("the environment id is not [a-z0-9-]+");
  static constexpr std::array kinds{std::string_view("local"), std::string_view("postgres-2node"),
                                    std::string_view("ssh"), std::string_view("daytona")};
  environment_def e;
  e.id = id;
  TETHER_TRY(assign(e.kind, r.one_of("kind", e.kind, kinds)));
  key_list keys{"title", "kind"};
  if (is_leased_environment(e.kind))
    for (const char* k : {"keep_warm_ms", "cpu", "memory_gib", "disk_gib", "price"}) keys.emplace_back(k);
  if (e.kind == "daytona")
    for (const char* k : {"api_url", "api_key_env", "target", "image", "snapshot", "reach_host"}) keys.emplace_back(k);
  TETHER_TRY(r.only(keys, fmt::format("a {} environment", e.kind)));
  TETHER_TRY(assign(e.title, r.text("title")));
  if (is_leased_environment(e.kind)) TETHER_TRY(read_lease_keys(r, e));
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

}  // namespace

result<catalogue> detail::parse_file(std::string_view text, const std::string& origin) {
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

bool is_warm_runtime(std::string_view kind) {
  return std::find(warm_runtime_kinds.begin(), warm_runtime_kinds.end(), kind) != warm_runtime_kinds.end();
}

// ---- names ----

std::string_view to_string(step_kind k) { return name_of(k, step_names); }
bool is_leased_environment(std::string_view kind) { return kind == "ssh" || kind == "daytona"; }

std::string_view to_string(matcher_kind k) { return name_of(k, matcher_names); }
std::string_view to_string(wait_target t) { return name_of(t, wait_names); }

}  // namespace tether::e2e
