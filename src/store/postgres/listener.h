// The listener: one thread per PostgreSQL store with its own connection,
// LISTENing on the channels other nodes' commits and signals notify
// (store/postgres/writer.h). For each line of another instance's
// notification it tells the tail hub (the session's tails re-read the new
// events from the database) and the watcher (event_store::watch_foreign);
// it also sends this store's signals (pg_notify on tether_control). When
// its connection is lost it reconnects with backoff (100 ms doubling to
// 5 s) and reports a resync, since notifications sent meanwhile are gone.
#pragma once

#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>

#include "store/cluster_signals.h"
#include "store/postgres/pq.h"
#include "store/tail.h"

namespace tether::store::postgres {

class listener {
 public:
  using watcher = std::function<void(const cluster_signals::foreign_change&)>;

  // `hub` must outlive stop().
  listener(std::string url, std::string instance, tail_hub& hub);
  ~listener();
  listener(const listener&) = delete;
  listener& operator=(const listener&) = delete;

  // Connects and LISTENs before returning, so a commit made after start()
  // returns is never missed.
  result<void> start();
  // Idempotent.
  void stop();

  void watch(watcher w);
  // Queues a control message about `s` for the other instances.
  void signal(const session_id& s, std::string control);

 private:
  void loop();
  result<void> connect();
  void handle(const connection::notification& n);
  void deliver(const cluster_signals::foreign_change& c);
  void send_signals();
  void wake_thread();

  const std::string url_;
  const std::string instance_;
  tail_hub& hub_;
  std::unique_ptr<connection> db_;
  int wake_fd_ = -1;  // eventfd: signals queued, or stopping

  std::mutex mu_;
  watcher watcher_;
  std::deque<std::pair<std::string, std::string>> outgoing_;  // session, control
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace tether::store::postgres
