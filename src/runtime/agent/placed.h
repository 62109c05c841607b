// What an agent started in an environment (a turn's session::turn_place)
// needs of this machine, reached from there. Used by the per-turn runtime
// for each turn and by the warm runtime for each process it starts there.
//
//   TETHER_TRY(co_await reach_relay(place, &o, &in));            // in.endpoint.base_url: the forwarded port
//   in.mcp = co_await placed_tools(place, &o, ticket.token(), "claude-print turn of ses_…");
//   TETHER_TRY(co_await put_home_files(place, home, std::move(files)));
//
// Errors name the environment: "the model relay cannot be reached from
// box: …", "cannot write .claude.json in box: …". Tools that cannot be
// reached are not an error: the agent runs without them (a warning says
// so).
#pragma once

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "runtime/agent/agent_runtime.h"
#include "runtime/agent/dialect.h"
#include "session/runtime.h"

namespace tether::runtime::agent {

// With an open relay grant: in->endpoint.base_url's host and port replaced by
// the relay's port as forwarded to `place`. Nothing to do without a relay.
session::task<result<void>> reach_relay(std::shared_ptr<session::turn_place> place, const agent_options* o,
                                        bool relayed, launch_input* in);

// `tether mcp` there: "tether" from the environment's PATH, the tool bridge's
// socket forwarded there — or, where the environment forwards no socket (a
// Daytona sandbox), the bridge's TCP port (tool_bridge::tcp_port) reached
// through its forward_port, "tcp:HOST:PORT" — `token` the run's. nullopt
// when neither can be (`who` names the turn or process in the warning).
session::task<std::optional<mcp_server>> placed_tools(std::shared_ptr<session::turn_place> place, const agent_options* o,
                                                      std::string token, std::string who);

// Each (relative path, content) of `files` written under `home` there, 0600.
session::task<result<void>> put_home_files(std::shared_ptr<session::turn_place> place, std::filesystem::path home,
                                           std::vector<std::pair<std::string, std::string>> files);

}  // namespace tether::runtime::agent
