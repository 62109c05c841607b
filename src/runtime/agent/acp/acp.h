// acp — the Agent Client Protocol client behind make_acp (warm_dialect.h),
// for every ACP agent alike; the launches of the agents it knows are in
// acp_agents.cpp, what the messages mean in acp_protocol.h.
//
// The connection (warm_dialect.h's contract):
//   open()        initialize {protocolVersion: 1, clientCapabilities: {fs:
//                 {readTextFile, writeTextFile}}, clientInfo: {name:
//                 "tether", version}} on the first call; then session/new
//                 {cwd, mcpServers: [Tether's `tether mcp` as a stdio server
//                 {name, command, args: ["mcp"], env: [{name, value}]}]}, or
//                 with a resume session/load {sessionId, cwd, mcpServers}.
//                 The agent replays the session's history as session/update
//                 notifications before it answers the load: they are
//                 dropped (only a running turn's updates count). resume_refused
//                 when the agent lacks the loadSession capability or answers
//                 the load with an error (codex-acp: -32002 for a session
//                 with no turns).
//   start_turn()  session/prompt {sessionId, prompt: [{type: "text", text}]}
//                 is sent and awaited by a coroutine of the connection; its
//                 result {stopReason, usage?} ends the turn, an error answer
//                 ends it with turn_failed.
//   next()        the events mapped from the turn's session/update
//                 notifications and the prompt's result, in order; after the
//                 agent's output ended (it died, or printed garbage), what
//                 was queued, then rpc_closed or protocol.
//   steer()       false: ACP has no input into a running turn.
//   cancel()      session/cancel {sessionId}, a notification; the agent
//                 answers the prompt with stopReason "cancelled"
//                 (turn_failed). Permission requests after it get the
//                 "cancelled" outcome.
//   close()       cancel(), EOF to the agent, waits for the reader (up to 2 s
//                 for the agent to end its output) and for the prompt
//                 coroutine.
//
// Requests from the agent, answered on the strand:
//   session/request_permission  {outcome: {outcome: "selected", optionId}}
//                 with the option the profile's permissions pick
//                 (pick_permission), else {outcome: {outcome: "cancelled"}}
//   fs/read_text_file {path, line?, limit?} → {content}
//   fs/write_text_file {path, content} → {}; both confined to
//                 connect_options.workspace (confined_path), writes only
//                 under approve_all; a refusal is a -32603 error naming why
//   anything else → -32601 method not found
#pragma once

#include <memory>

#include <boost/asio/any_io_executor.hpp>

#include "runtime/agent/warm_dialect.h"

namespace tether::runtime::agent {

std::unique_ptr<agent_connection> connect_acp(boost::asio::any_io_executor strand, process::child& proc,
                                              connect_options o);

}  // namespace tether::runtime::agent
