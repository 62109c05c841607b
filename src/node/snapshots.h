// git_snapshots — a copy of a session's workspace at the end of each turn,
// so the session can be forked there whole (session/fork.h), kept in a
// private bare git repository per session: DATA/snapshots/<session>.git.
//
//   git_snapshots snaps(data_dir);
//   auto name = snaps.take(session, execution, workspace);     // after the turn, before execution.finished
//   auto made = snaps.restore_now(session, execution, fork);     // DATA/workspaces/<fork>, as it was then
//
// Why git: a turn usually changes a few files of many. `git add -A` with the
// repository's own index rehashes only files whose size or mtime changed
// and stores each distinct content once (zlib), across all turns of the
// session; a reflink copy needs a filesystem that has them (not ext4, not
// overlayfs), and a tar of the changed files needs the same index git
// already keeps. The workspace's own repository is never used or trusted:
// GIT_DIR is the private one, GIT_WORK_TREE the workspace, the system and
// global configuration are off, so nothing the agent wrote into the
// workspace (a .git/config, hooks, filters) runs.
//
// A snapshot is one tree, named by the ref refs/turns/<execution>:
//   files/  the workspace as `git add -A` sees it: files its own .gitignore
//           ignores are left out (as a clone would have them), and so are
//           empty directories and the contents of nested repositories
//           (recorded as links to their commits);
//   git/    the workspace's own .git directory, whole, when it is one (so a
//           fork has the repository, its HEAD, branches and index as they
//           were, with the uncommitted changes of files/ on top).
// take() refuses a workspace over the budget (default 2 GiB or 200,000
// entries, counted before anything is hashed): that turn has no snapshot
// and cannot be forked, which restore() says.
//
// A node takes a turn's snapshot after the turn's end is recorded, in the
// background (node/leased_runtime.h): begin() marks the session's snapshot
// pending, end() clears it; restore_now() of that session and wait_taken()
// (the session's next turn) wait for a pending one, so neither sees a
// workspace half snapshotted. take() alone neither marks nor waits.
//
// restore_now() makes DATA/snapshots/<fork>.git borrowing the source's
// objects (objects/info/alternates), reads the tree into the fork's own
// index and checks it out into the fork's workspace, which must not exist
// (or be empty): the fork's next snapshot then rehashes nothing it did not
// change. The calls block (git runs as a child): call them off the I/O
// threads. as_session() adapts restore() for session_service, on a pool.
//
// Errors: session_errc::cannot_fork (no snapshot of that turn here, a
// fork's workspace already in use), std::errc::io_error (git missing or
// failing, a workspace over budget), util_errc::invalid_argument (an id
// that is no ref name).
#pragma once

#include <condition_variable>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include <boost/asio/any_io_executor.hpp>

#include "session/snapshots.h"
#include "util/ids.h"
#include "util/result.h"

namespace tether::node {

struct snapshot_budget {
  std::uint64_t bytes = 2ULL << 30U;
  std::uint64_t entries = 200'000;
};

class git_snapshots {
 public:
  explicit git_snapshots(std::filesystem::path data_dir, snapshot_budget budget = {});

  // Returns the snapshot's tree id.
  result<std::string> take(const session_id& s, const execution_id& e, const std::filesystem::path& workspace) const;
  // Returns the snapshot's tree id; the fork's workspace is DATA/workspaces/<fork>.
  result<std::string> restore_now(const session_id& source, const execution_id& e, const session_id& fork) const;
  void discard_now(const session_id& fork) const;

  void begin(const session_id& s) const;
  void end(const session_id& s) const;
  [[nodiscard]] bool pending(const session_id& s) const;
  void wait_taken(const session_id& s) const;

  [[nodiscard]] std::filesystem::path repository(const session_id& s) const;
  [[nodiscard]] std::filesystem::path workspace(const session_id& s) const;

  // The session layer's view, running the calls on `pool` (which outlives it).
  std::unique_ptr<session::workspace_snapshots> as_session(boost::asio::any_io_executor pool) const;

 private:
  std::filesystem::path data_;
  snapshot_budget budget_;
  struct pending_takes {
    std::mutex m;
    std::condition_variable done;
    std::map<std::string, int, std::less<>> by_session;
  };
  std::shared_ptr<pending_takes> pending_ = std::make_shared<pending_takes>();
};

}  // namespace tether::node
