// Live tails of the SQLite backend.
//
// The writer publishes committed events to the hub after each COMMIT (in
// commit order, so a session's seqs arrive increasing); publish() of the
// store hands ephemeral events to the hub directly. The hub copies each item
// into the bounded buffer of every tail of that session.
//
// A tail starts in "catch-up" mode: it is registered with the hub before it
// reads anything, then next() reads durable events from the store after the
// last delivered seq, page by page, and only then drains its buffer. Every
// durable item is delivered only if its seq is the next one expected, so
// history and live copies of the same event are delivered once, in order.
// When the buffer overflows it is emptied and the tail goes back to
// catch-up mode (an epoch counter tells a catch-up read that raced with a
// new overflow to read again). Ephemeral items older than the durable events
// already delivered are dropped; the others carry the last delivered seq.
//
// Locks: hub mutex before a tail's mutex, never the other way round.
// Completions are called after the locks are released.
#pragma once

#include <cstddef>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "store/event_store.h"
#include "util/clock.h"

namespace tether::store::sqlite {

struct tail_state;

class tail_hub : public std::enable_shared_from_this<tail_hub> {
 public:
  tail_hub(std::size_t buffer, const tether::clock& clock) : buffer_(buffer == 0 ? 1 : buffer), clock_(clock) {}

  // A tail that reads history through `store` (which must outlive it).
  std::unique_ptr<event_tail> subscribe(event_store& store, session_id s, event_seq after);
  // Committed events, in commit order.
  void publish_durable(const std::vector<model::event>& events);
  void publish_ephemeral(const session_id& s, model::payload p);
  // Closes every tail and refuses new ones (store stop()).
  void close_all();
  void remove(const std::shared_ptr<tail_state>& st);

 private:
  std::size_t buffer_;
  const tether::clock& clock_;
  std::mutex mu_;
  bool closed_ = false;
  std::unordered_map<std::string, std::vector<std::shared_ptr<tail_state>>> tails_;
};

}  // namespace tether::store::sqlite
