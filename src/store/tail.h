// Live tails: the hub every backend feeds, so tails behave the same
// whatever stores the events.
//
// The group-committing writer (store/group_commit.h) publishes committed
// events to the hub after each commit (in commit order, so a session's seqs
// arrive increasing); publish() of the store hands ephemeral events to the
// hub directly. (A backend shared by several processes feeds it with what
// the others committed as well.) The hub copies each item
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
// A global tail (tail_all) is simpler: the hub copies every item of every
// session into its bounded buffer and next() hands them out. It never reads
// the store, so it cannot catch up after an overflow: the item that would
// overflow it drops its buffer, marks it lagged and the hub forgets it
// (next() then returns lagged). Its cost to the committing thread is one
// lock and one copy per event and global tail.
//
// Bytes: every tail is bounded by a byte budget as well as by a count (an
// item's bytes are its JSON text, as an SSE frame carries it). Over the
// budget a session tail first drops the ephemeral items it holds (progress
// only), then empties its buffer and goes back to catch-up; a global tail
// drops ephemerals, then lags. A catch-up read asks for as many events as
// fit the budget at the size of the previous page, and one next() hands out
// about the budget at most (always at least one item). The bytes held by
// every tail are the gauge tether_tail_buffered_bytes.
//
// Order: an ephemeral item of a session never precedes a durable event
// whose append was queued before it was published (a delta never comes
// before the step.started its step recorded without waiting). The store
// calls hold(s) when it queues an append of s and release(s) once that
// append is settled (its events published, or refused); ephemerals
// published while an append of s is held wait in the hub and follow it,
// in order (at most the byte budget of them: beyond it the newest are
// dropped, as a full tail would drop them).
//
// Locks: hub mutex before a tail's mutex, never the other way round.
// Completions are called after the locks are released.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <utility>
#include <unordered_map>
#include <vector>

#include "store/async.h"
#include "store/event_log.h"
#include "util/clock.h"

namespace tether::store {

// What an item costs a tail's budget: its JSON text plus the item itself.
std::size_t tail_item_bytes(const model::event& e);

struct tail_state;
struct all_tail_state;

class tail_hub : public std::enable_shared_from_this<tail_hub> {
 public:
  // Every tail holds at most `buffer` items and `max_bytes` bytes unread.
  tail_hub(std::size_t buffer, std::size_t max_bytes, const tether::clock& clock)
      : buffer_(buffer == 0 ? 1 : buffer), max_bytes_(max_bytes == 0 ? 1 : max_bytes), clock_(clock) {}

  // A tail that reads history through `store` (which must outlive it).
  std::unique_ptr<event_tail> subscribe(event_log& store, session_id s, event_seq after);
  // A tail of every session that keeps at most `buffer` items unread.
  std::unique_ptr<event_tail> subscribe_all(std::size_t buffer);
  // Committed events, in commit order.
  void publish_durable(const std::vector<model::event>& events);
  void publish_ephemeral(const session_id& s, model::payload p);
  // Durable events of `s` up to `seq` committed by another process sharing
  // the store: the session's tails that have not delivered them read them
  // from the store (in order, as after an overflow).
  void foreign_commit(const session_id& s, std::int64_t seq);
  // Another process's commits may have been missed: every session tail
  // reads the store again.
  void foreign_resync();

  // See Order above. Every hold() needs its release().
  void hold(const session_id& s);
  void release(const session_id& s);
  // Closes every tail and refuses new ones (store stop()).
  void close_all();
  void remove(const std::shared_ptr<tail_state>& st);
  void remove(const std::shared_ptr<all_tail_state>& st);

 private:
  // Under mu_: copies `events` into every global tail and forgets the ones
  // that lagged; the waiters to wake go to `wake`.
  void push_all_locked(std::span<const model::event> events, std::span<const std::size_t> sizes, bool durable,
                       std::vector<completion<bool>>& wake);
  // Under mu_: hands one ephemeral event to the tails it concerns.
  void push_ephemeral_locked(const model::event& e, std::size_t size, std::vector<completion<bool>>& wake);

  // Ephemeral events waiting behind a session's queued appends.
  struct held_items {
    std::size_t appends = 0;  // queued appends not settled yet
    std::size_t bytes = 0;
    std::vector<std::pair<model::event, std::size_t>> items;  // each with its size
  };

  std::size_t buffer_;
  std::size_t max_bytes_;
  const tether::clock& clock_;
  std::mutex mu_;
  bool closed_ = false;
  std::unordered_map<std::string, std::vector<std::shared_ptr<tail_state>>> tails_;
  std::vector<std::shared_ptr<all_tail_state>> all_;
  std::unordered_map<std::string, held_items> held_;
  std::uint64_t ephemerals_ = 0;  // published so far: an ephemeral's id
};

}  // namespace tether::store
