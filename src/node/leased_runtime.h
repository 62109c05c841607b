// leased_runtime — the turns of profiles that name an environment
// ([environments.NAME], config.h) run in a lease of it (env/); every other
// turn goes to the node's runtimes as before. It is the session service's
// runtime: name, model, start, stop and forget go to the inner one.
//
// A turn of such a profile, around the profile's runtime:
//   1. The session's lease (key "session-<id>"): the one kept warm from its
//      last turn when it still answers (env::keeper); else
//      env.lease.requested is recorded first, then the kind acquires it by
//      the key — found again (resumed: also after a SIGKILL of Tether, or
//      from another node), made (created), or made again when the provider
//      id the session's log recorded is gone (replaced) — and
//      env.lease.acquired {provider_id, outcome, warm}.
//      A lease made anew (created, replaced) holds no agent state: a turn
//      with a binding records agent.state.unavailable and starts a new agent
//      session with the transcript.
//   2. The host copy of the workspace (the session's, or
//      DATA/workspaces/<session>) goes up when the lease's copy may differ:
//      a lease just acquired, or a host copy changed since the last sync
//      (its tree digest): env.workspace.synced {up}.
//   3. The runtime runs the turn there (session::turn_place: the lease's
//      spawner and workspace, the session's agent home beside it, files put
//      there, the model relay's port and the tool bridge's socket forwarded
//      and kept for the lease's life).
//   4. The workspace comes back whole into the host copy (env/tree.h:
//      receive_tree): env.workspace.synced {down}. Nothing is moved when
//      neither copy changed since the last sync (their stamps: env/tree.h
//      stamp_tree, lease::stamp); the event then names that sync's tree. A lease that fails there
//      (lost, unreachable) fails the turn with the reason — the host copy as
//      it was — and is released (env.lease.released {broken}).
//   5. Given back, the lease stays warm for the environment's keep_warm_ms,
//      then is stopped, never destroyed (env.lease.released {idle}); stop()
//      stops every lease (shutdown).
//
// After every turn, placed or not, the workspace's host copy is snapshotted
// (node/snapshots.h) when keep_snapshots() was called: marked pending before
// the turn's end is recorded, taken in the background on `takes` (so the
// end is not delayed), and waited for by the session's next turn and by a
// fork of it. A snapshot that fails is logged; a fork there is refused with
// the reason.
//
// Every runtime kind runs there (session::turn_place). The kinds' calls
// block: they run on a pool of this runtime's own (eight threads: they wait
// on the network), never on an I/O thread.
#pragma once

#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/thread_pool.hpp>

#include "config/config.h"
#include "env/environment.h"
#include "env/keeper.h"
#include "node/snapshots.h"
#include "session/runtime.h"
#include "store/event_log.h"

namespace tether::node {

class leased_runtime final : public session::runtime {
 public:
  // `inner` and `log` outlive it; `data_dir` holds DATA/workspaces.
  leased_runtime(session::runtime& inner, store::event_log& log, boost::asio::any_io_executor io,
                 std::filesystem::path data_dir);
  ~leased_runtime() override;

  // The turns of `profile` run in `e` (made by env::make_environment from
  // its settings). Errors: util_errc::invalid_argument when the kind cannot be made.
  result<void> place_profile(const std::string& profile, const config::environment_settings& e);
  // Snapshots every turn's workspace into `s` on `takes`; the next turn
  // waits for it on `waits` (all outlive it; two pools, so a wait never
  // holds the thread a take needs).
  void keep_snapshots(const git_snapshots& s, boost::asio::thread_pool& takes, boost::asio::thread_pool& waits);

  [[nodiscard]] std::string name(std::string_view profile) const override { return inner_.name(profile); }
  [[nodiscard]] std::string model(std::string_view profile) const override { return inner_.model(profile); }
  session::task<result<void>> start() override;
  session::task<void> stop() override;
  session::task<void> forget(session_id s) override;
  session::task<session::turn_result> run_turn(session::turn_context ctx,
                                               std::shared_ptr<session::turn_host> host) override;

  struct placed;  // one environment: the kind's object, its keeper, what its leases forwarded
  struct forwards;

 private:
  session::task<session::turn_result> run_placed(placed* p, session::turn_context ctx,
                                                 std::shared_ptr<session::turn_host> host);
  // What the session's log says of its lease in `environment`: the provider
  // id of its last env.lease.acquired, and the tree of its last
  // env.workspace.synced (both copies had it then; "" for none).
  struct recorded_lease {
    std::optional<std::string> provider_id;
    std::string synced_sha;
  };
  session::task<recorded_lease> recorded(session_id s, std::string environment);
  session::task<void> give_back(std::optional<env::keeper::held> h);
  void snapshot_later(session_id s, execution_id e, std::filesystem::path workspace);
  void record_release(const std::string& environment, const std::string& key, const std::string& provider_id,
                      std::string_view reason);

  session::runtime& inner_;
  store::event_log& log_;
  boost::asio::any_io_executor io_;
  std::filesystem::path data_dir_;
  // Made with the first placed profile (eight threads: the kinds wait on the network).
  std::optional<boost::asio::thread_pool> pool_;
  boost::asio::thread_pool* blocking() { return &*pool_; }
  std::map<std::string, std::unique_ptr<placed>, std::less<>> environments_;  // by name
  std::map<std::string, placed*, std::less<>> profiles_;                      // profile -> its environment
  bool stopped_ = false;
  const git_snapshots* snapshots_ = nullptr;
  boost::asio::thread_pool* snapshot_takes_ = nullptr;
  boost::asio::thread_pool* snapshot_waits_ = nullptr;
};

}  // namespace tether::node
