// state_keeper — an agent program's own session state, kept in the store so
// that any node resumes it (docs/architecture.md, "Portable agent
// sessions"). One per node, shared by its agent runtimes.
//
//   // before the agent starts (a turn that would resume ctx.binding):
//   if (!co_await keeper.prepare(ctx.session, kind, binding, dirs.home, dirs.workspace, host))
//     ctx.binding.reset();          // cannot resume here: a new agent session, the whole transcript
//   ... the turn ...
//   co_await keeper.save(ctx.session, kind, agent_session, generation, dirs.home, dirs.workspace, host);
//
// save() reads the program's state files (portable/files.h), puts the chunks
// the store does not hold yet (deflated) and records agent.state.saved, then
// keeps the session within its byte budget (store/agent_state_store.h
// release_states, then collect_chunks of what no state needs). A file
// unchanged since the last save (size and mtime) is not read again; a
// state unchanged since the last save records nothing. A save that fails
// records agent.state.unavailable with the reason and fails nothing.
//
// prepare() reads the session's newest agent.state.* event. An
// agent.state.unavailable of the binding's agent session means it cannot
// be resumed anywhere: false. A saved state is compared with the seq the
// home was last brought to (a file beside the home, which the agent's
// sandbox does not show): equal, the home is current; otherwise the state
// is restored (every chunk's SHA-256 verified, claude's project directory
// renamed to this workspace's), and a restore that fails is recorded as
// agent.state.unavailable: false. A session with no saved state at all, or
// a state of another agent session, leaves the home as it was (true).
//
// Both run their file work on the keeper's own thread and resume the
// caller on its executor. Homes in an environment (a lease) are not
// handled here: their state stays where they run.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>

#include <boost/asio/awaitable.hpp>
#include <boost/asio/thread_pool.hpp>

#include "session/runtime.h"
#include "store/agent_state_store.h"
#include "util/clock.h"
#include "util/ids.h"

namespace tether::runtime::agent::portable {

struct keeper_options {
  // The stored bytes a session's saved states may hold; the newest is kept
  // whatever its size.
  std::int64_t budget_bytes = 256LL << 20;
  // A chunk no state refers to is deleted once it is this old (a save's
  // chunks are put before its event is written).
  time_ms collect_after_ms = 10 * 60 * 1000;
};

class state_keeper {
 public:
  // `clock` outlives the keeper; so does the store bind() is given. The
  // node builds its runtimes (and so the keeper) before it opens its store:
  // until bind(), prepare() and save() do nothing.
  explicit state_keeper(const tether::clock& clock, keeper_options o = {});
  state_keeper(store::agent_state_store& store, const tether::clock& clock, keeper_options o = {});
  void bind(store::agent_state_store& store) { store_ = &store; }
  ~state_keeper();
  state_keeper(const state_keeper&) = delete;
  state_keeper& operator=(const state_keeper&) = delete;

  boost::asio::awaitable<bool> prepare(session_id s, std::string kind, store::runtime_binding binding,
                                       std::filesystem::path home, std::filesystem::path workspace,
                                       std::shared_ptr<session::turn_host> host);
  boost::asio::awaitable<void> save(session_id s, std::string kind, std::string agent_session,
                                    std::int64_t generation, std::filesystem::path home,
                                    std::filesystem::path workspace, std::shared_ptr<session::turn_host> host);
  // The session's cached reads are dropped (its home may change elsewhere).
  void forget(const session_id& s);

  // The seq of the saved state `home` holds (none: unknown), kept beside the home.
  static std::optional<std::int64_t> home_seq(const std::filesystem::path& home);
  static void set_home_seq(const std::filesystem::path& home, std::int64_t seq);

 private:
  struct session_memory;
  std::shared_ptr<session_memory> memory(const session_id& s);
  boost::asio::awaitable<bool> restore(session_id s, std::string kind, model::agent_state_saved saved,
                                       std::int64_t seq, std::filesystem::path home,
                                       std::filesystem::path workspace);
  boost::asio::awaitable<void> unavailable(session_id s, std::string kind, std::string agent_session,
                                           std::string reason, std::shared_ptr<session::turn_host> host);

  store::agent_state_store* store_ = nullptr;
  const tether::clock& clock_;
  keeper_options o_;
  boost::asio::thread_pool files_{1};
  std::mutex mu_;
  std::map<session_id, std::shared_ptr<session_memory>> sessions_;
};

}  // namespace tether::runtime::agent::portable
