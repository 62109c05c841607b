#include "model/task.h"

#include <algorithm>
#include <array>
#include <string>

#include <boost/json.hpp>
#include <fmt/format.h>

#include "util/errors.h"

namespace tether::model {

namespace {

using enum task_status;

constexpr std::array<task_status, 2> from_backlog{todo, cancelled};
constexpr std::array<task_status, 4> from_todo{in_progress, backlog, blocked, cancelled};
constexpr std::array<task_status, 5> from_in_progress{in_review, done, blocked, todo, cancelled};
constexpr std::array<task_status, 4> from_in_review{done, in_progress, blocked, cancelled};
constexpr std::array<task_status, 3> from_blocked{todo, in_progress, cancelled};
constexpr std::array<task_status, 1> from_done{todo};
constexpr std::array<task_status, 1> from_cancelled{backlog};

constexpr std::array<task_status, 7> all_statuses{backlog, todo, in_progress, in_review, done, blocked, cancelled};

}  // namespace

std::string_view to_string(task_status s) {
  switch (s) {
    case backlog:
      return "backlog";
    case todo:
      return "todo";
    case in_progress:
      return "in_progress";
    case in_review:
      return "in_review";
    case done:
      return "done";
    case blocked:
      return "blocked";
    case cancelled:
      return "cancelled";
  }
  return "backlog";
}

std::string_view to_string(work_mode m) {
  switch (m) {
    case work_mode::standard:
      return "standard";
    case work_mode::ask:
      return "ask";
    case work_mode::planning:
      return "planning";
  }
  return "standard";
}

std::optional<task_status> parse_task_status(std::string_view s) {
  for (const auto st : all_statuses)
    if (to_string(st) == s) return st;
  return std::nullopt;
}

std::optional<work_mode> parse_work_mode(std::string_view s) {
  for (const auto m : {work_mode::standard, work_mode::ask, work_mode::planning})
    if (to_string(m) == s) return m;
  return std::nullopt;
}

std::span<const task_status> next_statuses(task_status from) {
  switch (from) {
    case backlog:
      return from_backlog;
    case todo:
      return from_todo;
    case in_progress:
      return from_in_progress;
    case in_review:
      return from_in_review;
    case blocked:
      return from_blocked;
    case done:
      return from_done;
    case cancelled:
      return from_cancelled;
  }
  return {};
}

result<void> check_transition(task_status from, task_status to) {
  const auto next = next_statuses(from);
  if (std::find(next.begin(), next.end(), to) != next.end()) return ok();
  std::string allowed;
  for (const auto s : next) allowed += (allowed.empty() ? "" : ", ") + std::string(to_string(s));
  if (from == to)
    return make_error(util_errc::invalid_argument,
                      fmt::format("the task is already {} (it may go to {})", to_string(from), allowed));
  return make_error(util_errc::invalid_argument, fmt::format("a task in {} cannot go to {} (it may go to {})",
                                                             to_string(from), to_string(to), allowed));
}

stamp_change stamp(task_status from, task_status to) {
  stamp_change c;
  c.set_started = to == in_progress;
  c.set_completed = to == done;
  c.clear_completed = from == done;
  c.set_cancelled = to == cancelled;
  c.clear_cancelled = from == cancelled;
  return c;
}

namespace {

bool valid_name(std::string_view n) {
  if (n.empty() || n == "." || n == ".." || n.size() > 100) return false;
  return std::all_of(n.begin(), n.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' ||
           c == '-';
  });
}

// "https://git.example/team/api.git" -> "api"; "/srv/web/" -> "web".
std::string name_from_url(std::string_view url) {
  while (!url.empty() && url.back() == '/') url.remove_suffix(1);
  if (url.ends_with(".git")) url.remove_suffix(4);
  const auto cut = url.find_last_of("/:");
  return std::string(cut == std::string_view::npos ? url : url.substr(cut + 1));
}

}  // namespace

result<void> check_repositories(std::vector<project_repository>& repos) {
  auto bad = [](std::size_t i, const std::string& why) {
    return make_error(util_errc::invalid_argument, fmt::format("repositories[{}]: {}", i, why));
  };
  if (repos.empty()) return make_error(util_errc::invalid_argument, "a project needs at least one repository");
  if (repos.size() > max_repositories)
    return make_error(util_errc::invalid_argument,
                      fmt::format("a project has at most {} repositories, not {}", max_repositories, repos.size()));
  std::size_t primaries = 0;
  for (std::size_t i = 0; i < repos.size(); ++i) {
    auto& r = repos[i];
    if (r.url.empty()) return bad(i, "the url is empty");
    if (r.url.front() == '-') return bad(i, "a url cannot start with '-'");
    if (r.url.size() > 4096) return bad(i, "the url is longer than 4096 bytes");
    if (r.name.empty()) r.name = name_from_url(r.url);
    if (!valid_name(r.name))
      return bad(i, fmt::format("'{}' is not a directory name ([A-Za-z0-9._-]+, at most 100)", r.name));
    if (!r.branch.empty() && (r.branch.front() == '-' || r.branch.find("..") != std::string::npos))
      return bad(i, fmt::format("'{}' is not a branch name", r.branch));
    for (std::size_t j = 0; j < i; ++j)
      if (repos[j].name == r.name) return bad(i, fmt::format("two repositories are named '{}'", r.name));
    primaries += r.primary ? 1 : 0;
  }
  if (primaries > 1) return make_error(util_errc::invalid_argument, "only one repository can be primary");
  if (primaries == 0) repos.front().primary = true;
  return ok();
}

boost::json::array to_json(const std::vector<project_repository>& repos) {
  boost::json::array out;
  for (const auto& r : repos) {
    out.push_back(boost::json::object{{"url", r.url}, {"name", r.name}, {"branch", r.branch}, {"primary", r.primary}});
  }
  return out;
}

result<std::vector<project_repository>> repositories_from_json(const boost::json::value& v) {
  auto bad = [](std::string what) { return make_error(util_errc::invalid_argument, std::move(what)); };
  if (!v.is_array()) return bad("repositories must be an array of {url, name?, branch?, primary?}");
  std::vector<project_repository> out;
  for (std::size_t i = 0; i < v.as_array().size(); ++i) {
    const auto& e = v.as_array()[i];
    const std::string at = fmt::format("repositories[{}]", i);
    if (e.is_string()) {  // a bare URL
      out.push_back({.url = std::string(e.as_string())});
      continue;
    }
    if (!e.is_object()) return bad(at + " must be an object or a URL string");
    project_repository r;
    for (const auto& [key, value] : e.as_object()) {
      if (key == "primary") {
        if (!value.is_bool()) return bad(at + ".primary must be a boolean");
        r.primary = value.as_bool();
        continue;
      }
      std::string* field = key == "url" ? &r.url : key == "name" ? &r.name : key == "branch" ? &r.branch : nullptr;
      if (field == nullptr) return bad(fmt::format("{}: unknown field '{}'; expected url, name, branch, primary", at,
                                                   std::string_view(key)));
      if (!value.is_string()) return bad(fmt::format("{}.{} must be a string", at, std::string_view(key)));
      *field = std::string(value.as_string());
    }
    out.push_back(std::move(r));
  }
  TETHER_TRY(check_repositories(out));
  return out;
}

}  // namespace tether::model
