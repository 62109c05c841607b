// model::task — a task's lifecycle and work modes (docs/architecture.md §6), as
// values and the one rule of which status may follow which.
//
//   auto next = model::parse_task_status("in_review");         // optional
//   if (auto ok = model::check_transition(current, *next); !ok) // util_errc::invalid_argument
//     return ok.error();                                       // "a task in backlog cannot go to done (…)"
//   auto stamps = model::stamp(current, *next);                 // which timestamps the change sets
//
// The lifecycle: backlog → todo → in_progress → in_review → done, plus
// blocked and cancelled:
//
//   from         may go to
//   backlog      todo, cancelled
//   todo         in_progress, backlog, blocked, cancelled
//   in_progress  in_review, done, blocked, todo, cancelled
//   in_review    done, in_progress (changes asked for), blocked, cancelled
//   blocked      todo, in_progress, cancelled
//   done         todo (reopened)
//   cancelled    backlog (restored)
//
// A status to itself is no transition (refused: nothing would change).
// Timestamps: started_at the first time a task goes in_progress (kept
// after), completed_at when it goes done (cleared when reopened),
// cancelled_at when it is cancelled (cleared when restored).
//
// Work modes: standard (the agent works on the task), ask (the agent answers
// and changes no file), planning (the agent drafts a plan for approval
// before any change).
//
// A project's repositories (project_repository, check_repositories): each a
// URL or a local path, its checkout's directory name in a workspace, an
// optional branch; exactly one is primary. check_repositories fills what is
// left out (the name from the URL's last component without ".git", the
// first repository primary when none is) and refuses, as
// util_errc::invalid_argument naming the entry: none at all, more than 16,
// an empty URL or one starting with '-', a name that is not one path
// component ([A-Za-z0-9._-]+, not "." or ".."), two with one name, a branch
// starting with '-' or holding "..", more than one primary.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <boost/json/array.hpp>
#include <boost/json/value.hpp>

#include "util/result.h"

namespace tether::model {

enum class task_status { backlog, todo, in_progress, in_review, done, blocked, cancelled };
enum class work_mode { standard, ask, planning };

std::string_view to_string(task_status s);
std::string_view to_string(work_mode m);
std::optional<task_status> parse_task_status(std::string_view s);
std::optional<work_mode> parse_work_mode(std::string_view s);

// The statuses `from` may go to, in the table's order.
std::span<const task_status> next_statuses(task_status from);
// ok, or util_errc::invalid_argument naming both and what `from` allows.
result<void> check_transition(task_status from, task_status to);

// What a transition does to the task's timestamps.
struct stamp_change {
  bool set_started = false;  // only when none is set yet (the caller keeps the first)
  bool set_completed = false;
  bool clear_completed = false;  // reopened
  bool set_cancelled = false;
  bool clear_cancelled = false;  // restored
};
stamp_change stamp(task_status from, task_status to);

struct project_repository {
  std::string url;     // a path, file://, https://, ssh://, git://, or scp-like host:path
  std::string name;    // the checkout's directory in a workspace
  std::string branch;  // empty: the remote's default branch
  bool primary = false;
  bool operator==(const project_repository&) const = default;
};
constexpr std::size_t max_repositories = 16;
result<void> check_repositories(std::vector<project_repository>& repos);
// [{"url","name","branch","primary"}] (branch "" for the default): how the API and the store write them.
boost::json::array to_json(const std::vector<project_repository>& repos);
// Reads that array strictly (util_errc::invalid_argument naming the entry and
// field: not an array, an entry not an object, a key other than url, name,
// branch and primary, a mistyped value); then check_repositories.
result<std::vector<project_repository>> repositories_from_json(const boost::json::value& v);

}  // namespace tether::model
