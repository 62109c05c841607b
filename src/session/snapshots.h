// workspace_snapshots — what a fork needs of a session's workspace: a copy
// of it as it was at the end of one of its turns (session/fork.h). The node
// takes one after every turn it runs (node/snapshots.h: a private git
// repository per session); the session layer only restores them.
//
//   auto commit = co_await snapshots.restore(source, execution, fork);   // the fork's workspace, as then
//   if (!commit) refuse(commit.error());                                  // no snapshot of that turn here
//
// restore() makes the fork's workspace (it must not exist yet) from the
// snapshot taken when `execution` of `source` ended, and returns the
// snapshot's name (the session.forked event records it). Errors:
// session_errc::cannot_fork (none of that turn on this node: taken
// elsewhere, over the snapshot budget, or the turn was settled by a
// recovery rather than run), std::errc::io_error. discard() removes what a
// restore made, when the fork's log could not be written after it.
#pragma once

#include <string>

#include <boost/asio/awaitable.hpp>

#include "session/types.h"
#include "util/ids.h"
#include "util/result.h"

namespace tether::session {

class workspace_snapshots {
 public:
  template <class T>
  using task = boost::asio::awaitable<T>;
  virtual ~workspace_snapshots() = default;
  virtual task<result<std::string>> restore(session_id source, execution_id execution, session_id fork) = 0;
  virtual task<void> discard(session_id fork) = 0;
};

}  // namespace tether::session
