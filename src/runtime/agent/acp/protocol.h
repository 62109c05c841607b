// acp_protocol — the parts of the Agent Client Protocol client (make_acp,
// warm_dialect.h) that do no I/O but files: what a session/update means for
// the running turn, which permission option the profile's policy picks, and
// the workspace confinement of the agent's fs/* requests.
//
// The session/update mapping (acp_turn), one object per connection, reset
// by begin() at each session/prompt:
//
//   update.sessionUpdate   events
//   agent_message_chunk    text_piece {content.text}; the text collects into
//                          one agent_message, emitted before the next tool
//                          starts and at the end of the turn
//   tool_call              remembered (title, kind, rawInput); tool_start
//                          once its status is in_progress, completed or
//                          failed (its input is complete by then)
//   tool_call_update       merges title/kind/rawInput; completed or failed:
//                          tool_start if not yet, then tool_end {ok, the
//                          text of its content, else rawOutput}
//   usage_update           the session's cumulative cost (cost.amount)
//   anything else          nothing (plans, thoughts, modes, commands…)
//
// finish(result of session/prompt {stopReason, usage?}): the collected text,
// tool_end {ok=false} for tools that never finished, turn_usage (the
// result's usage: input = inputTokens + cachedReadTokens +
// cachedWriteTokens, cached = cachedReadTokens, output = outputTokens +
// thoughtTokens; the agent's cost is the growth of the session's cost
// during the turn) when the agent reported either, then turn_done for
// stopReason end_turn and turn_failed naming any other reason (cancelled,
// refusal, max_tokens, max_turn_requests). Calls of Tether's own question
// tool are left out (the bridge records them).
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include "runtime/agent/settings.h"
#include "runtime/agent/dialect.h"
#include "util/result.h"

namespace tether::runtime::agent {

class acp_turn {
 public:
  void begin();
  // One session/update's `update` object.
  std::vector<agent_event> update(const boost::json::object& u);
  // The result of the turn's session/prompt.
  std::vector<agent_event> finish(const boost::json::value& result);
  // The agent answered session/prompt with an error.
  std::vector<agent_event> fail(std::string message);
  // The client allowed tool call `id` (session/request_permission): it runs.
  std::vector<agent_event> approved(const std::string& id);
  // The kind ACP gave a tool call of this session ("read", "edit", …; "" unknown).
  [[nodiscard]] std::string tool_kind(const std::string& id) const;

 private:
  struct tool {
    std::string title;
    std::string kind;
    boost::json::value input = boost::json::object{};
    bool started = false;
    bool ended = false;
    bool hidden = false;  // Tether's question tool
  };
  void merge(tool& t, const boost::json::object& u);
  void flush_text(std::vector<agent_event>& out);
  void start(const std::string& id, tool& t, std::vector<agent_event>& out);
  std::vector<agent_event> wrap_up();

  std::map<std::string, tool> tools_;
  std::string text_;
  std::optional<double> cost_;  // the session's, as last reported
  std::optional<double> cost_at_begin_;
};

// The optionId of `options` (session/request_permission's) that the policy
// picks for a tool call of ACP kind `kind`; nullopt: none fits (the answer
// is then the "cancelled" outcome). approve_all allows, deny_all rejects,
// approve_reads allows kinds read, search, fetch and think and rejects the
// rest. "_once" options are preferred over "_always" ones.
std::optional<std::string> pick_permission(agent_permissions policy, std::string_view kind,
                                           const boost::json::array& options);

// Where the agent's fs/* request for `path` lands: the path inside
// `workspace` (canonical), or std::errc::permission_denied with the reason
// when it is not inside: a path with a `..` component, an absolute path outside, a
// symlink whose target is outside (or dangling). A relative path is taken
// from the workspace. Symlinks inside the workspace that lead inside are
// resolved here; the file is then opened beneath a descriptor of the
// workspace with no link allowed on the way (util/beneath.h), so a link
// swapped in after the check makes the call fail, never escape.
result<std::filesystem::path> confined_path(const std::filesystem::path& workspace, std::string_view path);

// fs/read_text_file: the file's text, from 1-based `line`, at most `limit`
// lines; fs/write_text_file: creates or replaces the file (and its parent
// directories inside the workspace) through a temporary file renamed into
// place. Neither opens a FIFO, socket or device, nor follows a link put
// there after the check. Both confined as above; writes refused
// (permission_denied) unless the policy is approve_all; other failures are
// the file system's error codes, the message naming the path.
result<std::string> read_text_file(const std::filesystem::path& workspace, std::string_view path,
                                   std::optional<std::int64_t> line, std::optional<std::int64_t> limit);
result<void> write_text_file(const std::filesystem::path& workspace, agent_permissions policy,
                             std::string_view path, std::string_view content);

}  // namespace tether::runtime::agent
