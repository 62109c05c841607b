#include "work/task_status.h"

#include <algorithm>
#include <array>
#include <string>

#include <fmt/format.h>

#include "util/errors.h"

namespace tether::work {

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

}  // namespace tether::work
