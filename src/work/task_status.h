// work::task_status — a task's lifecycle and work modes (DESIGN §6), as
// values and the one rule of which status may follow which.
//
//   auto next = work::parse_task_status("in_review");         // optional
//   if (auto ok = work::check_transition(current, *next); !ok) // util_errc::invalid_argument
//     return ok.error();                                       // "a task in backlog cannot go to done (…)"
//   auto stamps = work::stamp(current, *next);                 // which timestamps the change sets
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
#pragma once

#include <optional>
#include <span>
#include <string_view>

#include "util/result.h"

namespace tether::work {

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
  bool set_started = false;      // only when none is set yet (the caller keeps the first)
  bool set_completed = false;
  bool clear_completed = false;  // reopened
  bool set_cancelled = false;
  bool clear_cancelled = false;  // restored
};
stamp_change stamp(task_status from, task_status to);

}  // namespace tether::work
