// The TOML reader of the e2e definitions (private to the suite*.cpp files):
// each enum's TOML name, and table_reader, typed and checked access to one
// TOML table whose every error names where it is and the key.
#pragma once

#include <algorithm>
#include <array>
#include <filesystem>
#include <iterator>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <toml++/toml.h>

#include "e2e/suite_internal.h"

namespace tether::e2e::detail {

// Each enum's TOML name; to_string, parsing and "allowed:" lists read these.
template <class E>
using names = std::pair<E, std::string_view>;

inline constexpr std::array<names<step_kind>, 16> step_names{{{step_kind::create_session, "create_session"},
                                                              {step_kind::send, "send"},
                                                              {step_kind::wait, "wait"},
                                                              {step_kind::stop, "stop"},
                                                              {step_kind::reset, "reset"},
                                                              {step_kind::answer, "answer"},
                                                              {step_kind::restart, "restart"},
                                                              {step_kind::sleep, "sleep"},
                                                              {step_kind::fork, "fork"},
                                                              {step_kind::create_project, "create_project"},
                                                              {step_kind::create_task, "create_task"},
                                                              {step_kind::approve, "approve"},
                                                              {step_kind::reject, "reject"},
                                                              {step_kind::update_project, "update_project"},
                                                              {step_kind::create_repositories, "create_repositories"},
                                                              {step_kind::reconfigure, "reconfigure"}}};
inline constexpr std::array<names<wait_target>, 7> wait_names{{{wait_target::idle, "idle"},
                                                               {wait_target::waiting, "waiting"},
                                                               {wait_target::running, "running"},
                                                               {wait_target::runs, "runs"},
                                                               {wait_target::file, "file"},
                                                               {wait_target::task, "task"},
                                                               {wait_target::children, "children"}}};
inline constexpr std::array<names<matcher_kind>, 25> matcher_names{
    {{matcher_kind::message_exact, "message_exact"},
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
     {matcher_kind::usage_reported, "usage_reported"},
     {matcher_kind::same_agent_process, "same_agent_process"},
     {matcher_kind::new_agent_process, "new_agent_process"},
     {matcher_kind::task_status, "task_status"},
     {matcher_kind::plan_revisions, "plan_revisions"},
     {matcher_kind::project_count, "project_count"},
     {matcher_kind::workspace_repos, "workspace_repos"},
     {matcher_kind::freshness_decision, "freshness_decision"},
     {matcher_kind::context_absent, "context_absent"},
     {matcher_kind::workspace_files, "workspace_files"},
     {matcher_kind::file_absent, "file_absent"},
     {matcher_kind::lease_outcomes, "lease_outcomes"},
     {matcher_kind::same_lease, "same_lease"},
     {matcher_kind::agent_session_resumed, "agent_session_resumed"}}};
inline constexpr std::array providers{std::string_view("openai-chat"), std::string_view("openai-responses"),
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

inline tether::error invalid(std::string_view where, std::string_view message) {
  return make_error(e2e_errc::invalid_definition, fmt::format("{}: {}", where, message));
}

template <class T>
result<void> assign(T& out, result<T> r) {
  if (!r) return r.error();
  out = std::move(*r);
  return ok();
}

// A value read into an optional field.
template <class T>
result<std::optional<T>> as_optional(result<T> r) {
  if (!r) return r.error();
  return std::optional<T>(std::move(*r));
}

inline bool is_id(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(),
                                   [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-'; });
}

inline bool is_workspace_path(const std::string& p) {
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
    if (v) TETHER_TRY(known_templates(key, *v));  // a path is a template too
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

  // A number (integer or float) of at least 0.
  [[nodiscard]] result<double> number(std::string_view key) const {
    const auto* node = t_.get(key);
    if (node == nullptr) return fail(fmt::format("missing \"{}\"", key));
    if (!node->is_number()) return fail(fmt::format("\"{}\" must be a number", key));
    const auto v = node->value<double>().value_or(-1);
    if (v < 0) return fail(fmt::format("\"{}\" must not be negative", key));
    return v;
  }

  // The sub-table `key` (nullptr when absent or not a table).
  [[nodiscard]] const toml::table* table(std::string_view key) const {
    const auto* node = t_.get(key);
    return node != nullptr ? node->as_table() : nullptr;
  }
  [[nodiscard]] const std::string& where() const { return where_; }

  [[nodiscard]] result<std::int64_t> integer_or(std::string_view key, std::int64_t fallback, std::int64_t min) const {
    return has(key) ? integer(key, min) : result<std::int64_t>(fallback);
  }

  [[nodiscard]] result<std::vector<std::string>> texts(std::string_view key, bool may_be_empty = false) const {
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
    if (out.empty() && !may_be_empty) return fail(fmt::format("\"{}\" must not be empty", key));
    return out;
  }

  // A non-empty array of distinct integers, each at least `min`.
  [[nodiscard]] result<std::vector<std::int64_t>> distinct_integers(std::string_view key, std::int64_t min) const {
    const auto* node = t_.get(key);
    if (node == nullptr) return fail(fmt::format("missing \"{}\"", key));
    const auto* arr = node->as_array();
    if (arr == nullptr || arr->empty()) return fail(fmt::format("\"{}\" must be a non-empty array of integers", key));
    std::vector<std::int64_t> out;
    for (const auto& el : *arr) {
      if (!el.is_integer()) return fail(fmt::format("\"{}\" must be a non-empty array of integers", key));
      const auto v = el.value<std::int64_t>().value_or(0);
      if (v < min) return fail(fmt::format("\"{}\" has {}; each must be at least {}", key, v, min));
      if (std::find(out.begin(), out.end(), v) != out.end()) return fail(fmt::format("\"{}\" names {} twice", key, v));
      out.push_back(v);
    }
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
                    "{{phrase}}, {{cell}}, {{runtime}}, {{environment}}; write {{{{ and }}}} for literal braces)",
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

}  // namespace tether::e2e::detail
