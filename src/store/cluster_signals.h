// cluster_signals: several processes on one store (a database server
// backend, store/postgres). What another process sharing the store did
// reaches a watcher; a control message reaches the others'. A store no other
// process shares (SQLite) keeps the defaults: never calls the watcher, sends
// nothing, shared() is false.
#pragma once

#include <functional>
#include <string>

#include "store/types.h"

namespace tether::store {

class cluster_signals {
 public:
  virtual ~cluster_signals() = default;

  // What another process sharing this store did: committed events of
  // `session` up to `seq` (`wakes`: among them an event that may give a
  // session work: an input, an answer, a reset), or a control message
  // (`control`, e.g. "interrupt"). A resync (empty session) says changes may
  // have been missed (the backend lost its connection): look again.
  struct foreign_change {
    session_id session;
    event_seq seq;
    bool wakes = false;
    std::string control;
  };
  // `watcher` is called on a thread of the store for every foreign change
  // (it must only post work). Session tails need no watcher: they see
  // foreign events by themselves. One watcher; set it before start, nullptr
  // removes it.
  virtual void watch_foreign(std::function<void(const foreign_change&)> watcher) { (void)watcher; }
  // Sends a control message about `s` to the other processes' watchers
  // (best effort, not durable). No-op when no other process shares the store.
  virtual void signal(session_id s, std::string control) {
    (void)s;
    (void)control;
  }
  // Whether other processes may share this store.
  [[nodiscard]] virtual bool shared() const { return false; }
};

}  // namespace tether::store
