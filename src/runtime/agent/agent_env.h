// Where an agent process runs and what environment it gets (agent_runtime.h,
// steps 1 and 3).
#pragma once

#include <sys/types.h>

#include <chrono>
#include <deque>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/steady_timer.hpp>

#include "runtime/agent/dialect.h"
#include "runtime/agent/relay/model_relay.h"
#include "util/ids.h"
#include "util/result.h"

namespace tether::process {
class child;
}

namespace tether::session {
class turn_place;
}

namespace tether::runtime::agent {

struct agent_options;

struct agent_dirs {
  std::filesystem::path home;       // DATA/agents/<session>/home, 0700, with its XDG dirs
  std::filesystem::path workspace;  // the session's workspace (created), canonical
};

// Creates the session's agent home and its workspace (`workspace`, or
// DATA/workspaces/<session> when empty).
result<agent_dirs> prepare_dirs(const std::filesystem::path& data_dir, const session_id& s,
                                const std::string& workspace);

// The whole environment of the agent: what a native tool gets
// (runtime::tool_environment: PATH, LANG, LANGUAGE, LC_*, TERM, TZ, USER,
// LOGNAME, the profile's pass-through names, never a withheld one nor
// TETHER_TOKEN), HOME and the XDG variables in its home, set_env, then
// `extra` (the dialect's), then the model key under its variable.
std::vector<std::string> agent_environment(const agent_options& o, const agent_dirs& dirs,
                                           const std::map<std::string, std::string>& extra,
                                           const std::string& model_key);

// The run's grant of the model relay when the agent's model goes through it
// (o.relay set, an endpoint with a base URL): `in`'s base URL becomes the
// relay's. Otherwise an empty ticket and `in` as it was.
relay_ticket open_relay(const agent_options& o, launch_input& in);

// Starts the agent (step 3 of agent_runtime.h): the dialect's launch (argv
// and its variables), stdin a pipe, in the session's workspace, its own
// process group, in bubblewrap's `contain` sandbox when o.bwrap is set
// (the data directory hidden but for the home, the workspace and the
// bridge's and relay's sockets), recorded in DATA/run/procs before it runs.
// With an open `relay` grant the model key variable holds its token, and
// with o.relay_only the sandbox has no network (unless the launch
// serves_loopback): `tether relay-forward` runs the agent, listening on the
// relay's port inside. The caller calls
// forget_agent() once it reaped the child.
result<std::unique_ptr<process::child>> spawn_agent(const boost::asio::any_io_executor& ex, const agent_options& o,
                                                    const agent_dirs& dirs, launch l, const relay_ticket& relay);
void forget_agent(const agent_options& o, pid_t pid);

// Starts the agent in an environment (a turn's session::turn_place): the
// launch's argv through the place's spawner, in `dirs` (paths there: the
// place's workspace and home), its home's directories made first and its
// stdin the file `prompt_file` there (an environment need not pass an end
// of input on; the file is removed once open), or with `prompt_file` "" a
// pipe (a warm agent's protocol).
// Its environment is agent_environment()'s without PATH,
// USER and LOGNAME (the environment's own). No sandbox and no record in DATA/run/procs: the
// environment is the isolation and journals its commands.
result<std::unique_ptr<process::child>> spawn_placed_agent(const boost::asio::any_io_executor& ex,
                                                           const agent_options& o, session::turn_place& place,
                                                           const agent_dirs& dirs, launch l, const relay_ticket& relay,
                                                           const std::string& prompt_file);

// `url` ("http://127.0.0.1:P/path") with its host and port replaced by
// `authority` ("HOST:PORT").
std::string with_authority(const std::string& url, const std::string& authority);

// The last lines of an agent's stderr, for failure messages: read() runs
// until the stream ends; tail() is what it said last. drain() waits up to
// `patience` for the end (what a dying agent says last), then closes the
// stream and waits for read() to return: the child may go after it.
class stderr_tail {
 public:
  explicit stderr_tail(const boost::asio::any_io_executor& ex) : ended_(ex) {}
  // `proc` is owned by the caller's shared state, which outlives the await.
  boost::asio::awaitable<void> read(process::child& proc);  // NOLINT(cppcoreguidelines-avoid-reference-coroutine-parameters)
  boost::asio::awaitable<void> drain(process::child& proc,  // NOLINT(cppcoreguidelines-avoid-reference-coroutine-parameters)
                                     std::chrono::milliseconds patience);
  [[nodiscard]] std::string tail() const;
  [[nodiscard]] bool done() const { return done_; }

 private:
  std::deque<std::string> lines_;
  bool done_ = false;
  boost::asio::steady_timer ended_;
};

}  // namespace tether::runtime::agent
