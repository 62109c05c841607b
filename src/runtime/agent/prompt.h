// prompt — what an agent program is told at the start of a turn, from the
// session's transcript (Tether's record) and what the agent has already seen.
//
// Resuming the agent's own session (a binding of this runtime): only what
// came after the binding's last_seen_seq and did not come from the agent:
// the user's inputs, Tether's notices (the restart notice), and answers to
// the agent's questions ("answered: LABELS"), in order, blank-line separated.
// The agent's own messages and tool calls are in its session already.
// An input from before this turn's first one belongs to an earlier turn
// that ended (stopped by the user, failed) before the agent took it up: such
// inputs go first, under a header saying they are context and not requests,
// one line each with the text as a JSON string ("user: \"…\""), so a turn
// the user stopped is not run again by the next one.
//
// Starting a new agent session (no binding: the first turn, after a reset,
// or a session another runtime began): the earlier transcript, if any, as a
// rendering ("user: …", "assistant: …", tool calls in one line each) under
// a header saying it is the conversation so far, then the new part: this
// turn's inputs, or on a continuation whatever came after the last
// assistant message.
//
// A prompt with nothing new (a continuation with nothing after the agent's
// last turn) is "Continue."
#pragma once

#include <string>

#include "session/runtime.h"

namespace tether::runtime::agent {

// Whether `ctx` carries a binding this runtime (`kind`) made and can resume.
bool can_resume(const session::turn_context& ctx, std::string_view kind);

std::string render_prompt(const session::turn_context& ctx, std::string_view kind);

// The highest seq in the transcript (what the agent has seen once it got the prompt).
event_seq last_seq(const session::turn_context& ctx);

}  // namespace tether::runtime::agent
