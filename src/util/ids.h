// Strong id types. Every id is "<prefix><body>": the prefix names the kind
// (ses_, msg_, exe_, evt_, call_, int_, tsk_, prj_, rev_, cmt_) so a session id cannot be passed where
// an input id is expected, neither in C++ nor over the wire.
//
// Generated bodies are 26 Crockford base32 characters (48-bit millisecond time
// + 80 random bits), so ids sort roughly by creation time. Ids supplied by
// clients are accepted when the body is 1–64 characters of [0-9A-Za-z_-];
// anything else is util_errc::malformed_id.
#pragma once

#include <compare>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "util/result.h"

namespace tether {

namespace detail {
std::string generate_id_body();
result<void> validate_id(std::string_view prefix, std::string_view text);
}  // namespace detail

template <class Tag>
class strong_id {
 public:
  strong_id() = default;
  static constexpr std::string_view prefix = Tag::prefix;

  // A fresh, globally unique id.
  static strong_id generate() { return strong_id(std::string(prefix) + detail::generate_id_body()); }
  // Validates text supplied from outside (API, stored rows).
  static result<strong_id> parse(std::string_view text) {
    if (auto r = detail::validate_id(prefix, text); !r) return r.error();
    return strong_id(std::string(text));
  }
  // For text already known to be valid (read back from our own store).
  static strong_id trusted(std::string text) { return strong_id(std::move(text)); }

  [[nodiscard]] const std::string& str() const { return value_; }
  [[nodiscard]] bool empty() const { return value_.empty(); }
  auto operator<=>(const strong_id&) const = default;

 private:
  explicit strong_id(std::string v) : value_(std::move(v)) {}
  std::string value_;
};

struct session_tag { static constexpr std::string_view prefix = "ses_"; };
struct input_tag { static constexpr std::string_view prefix = "msg_"; };
struct execution_tag { static constexpr std::string_view prefix = "exe_"; };
struct event_tag { static constexpr std::string_view prefix = "evt_"; };
struct call_tag { static constexpr std::string_view prefix = "call_"; };
struct interaction_tag { static constexpr std::string_view prefix = "int_"; };
struct task_tag { static constexpr std::string_view prefix = "tsk_"; };
struct project_tag { static constexpr std::string_view prefix = "prj_"; };
struct revision_tag { static constexpr std::string_view prefix = "rev_"; };
struct comment_tag { static constexpr std::string_view prefix = "cmt_"; };

using session_id = strong_id<session_tag>;
using input_id = strong_id<input_tag>;  // also the id of a transcript message
using message_id = input_id;
using execution_id = strong_id<execution_tag>;
using event_id = strong_id<event_tag>;
using call_id = strong_id<call_tag>;
using interaction_id = strong_id<interaction_tag>;
using task_id = strong_id<task_tag>;
using project_id = strong_id<project_tag>;
using revision_id = strong_id<revision_tag>;  // a revision of a task's document (the plan)
using comment_id = strong_id<comment_tag>;

// Position of an event inside its session: 1, 2, 3, … without gaps.
struct event_seq {
  std::int64_t value = 0;
  auto operator<=>(const event_seq&) const = default;
};

}  // namespace tether

template <class Tag>
struct std::hash<tether::strong_id<Tag>> {
  std::size_t operator()(const tether::strong_id<Tag>& id) const noexcept { return std::hash<std::string>{}(id.str()); }
};
