// event_log: the part of the store every session writes and every stream
// reads: appends (group-committed), ephemeral events, live tails and pages of
// history, and whether writes are taken now. The rest of the store is split
// by concern beside it (lease_store.h, session_reads.h, work_store.h,
// cluster_signals.h); event_store.h joins them and states what holds for
// every call (threads, atomicity, errors, time, storage failures).
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

#include "store/errors.h"
#include "store/task.h"
#include "store/types.h"
#include "util/result.h"

namespace tether::store {

// An event as seen by a live subscriber: durable events carry their seq;
// ephemeral ones carry the seq of the last durable event of their session
// delivered before them (0 on a tail_all() tail), the publish time and an
// empty id.
struct tail_item {
  model::event event;
  bool durable = true;
};

// A live tail of one session. Created by event_log::tail(); it delivers
// every durable event with seq > `after` exactly once and in order, with no
// gap between history and live events (it subscribes before reading
// history), interleaved with ephemeral events published while it is open.
// A slow reader never blocks the writer: when its bounded buffer overflows
// it drops ephemeral events and re-reads durable ones from the store.
// event_log::tail_all() returns a tail of every session with other rules
// (no history, and an overflow ends it with lagged): see there.
class event_tail {
 public:
  virtual ~event_tail() = default;
  // The next items (at least one), waiting as long as needed. Returns
  // store_errc::closed after close() or the store's stop(), or the error of
  // reading history (e.g. corrupt), or lagged (tail_all() only). One next()
  // at a time per tail.
  virtual task<result<std::vector<tail_item>>> next() = 0;
  // Thread-safe; wakes a pending next().
  virtual void close() = 0;
};

struct event_page {
  std::vector<model::event> events;
  bool more = false;  // there are events after the last one returned
};

class event_log {
 public:
  virtual ~event_log() = default;

  // Appends events to an existing session (or creates it: a request whose
  // first event is session.created on an unknown id). Group-committed.
  virtual task<result<append_result>> append(append_request req) = 0;

  // Ephemeral events go to live tails only; nothing is stored.
  virtual void publish(session_id s, model::payload ephemeral) = 0;
  virtual std::unique_ptr<event_tail> tail(session_id s, event_seq after) = 0;
  // A live tail of every session: their durable events after commit, in
  // commit order, interleaved with ephemeral events published while it is
  // open. No history: it starts with what is committed or published after
  // this call. For watching, not resuming: an ephemeral item carries seq 0
  // (there is no one position to carry), a durable one its own seq.
  // It never blocks the writer and never re-reads the store: when more than
  // `buffer` items (0 counts as 1) are waiting unread, they are dropped and
  // next() returns lagged, then and on every later call (the tail is dead:
  // open a new one and catch up by reading). close() and stop() end it with
  // closed.
  virtual std::unique_ptr<event_tail> tail_all(std::size_t buffer) = 0;

  // Events of a session with seq > after, at most `limit` (capped at
  // 10,000) per page; unknown_session for an unknown session.
  virtual task<result<event_page>> read(session_id s, event_seq after, std::size_t limit) = 0;

  // Whether writes are taken now (see event_store.h, Storage failures).
  // Thread-safe and cheap: no I/O. A store that cannot fail this way reports ok.
  [[nodiscard]] virtual store_health health() const { return {}; }
};

}  // namespace tether::store
