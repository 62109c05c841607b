#include "store/tail.h"

#include <algorithm>
#include <limits>
#include <deque>

#include <spdlog/spdlog.h>
#include <boost/json/serialize.hpp>

#include "store/async.h"
#include "util/metrics.h"

namespace tether::store {

namespace {
constexpr std::size_t catch_up_page = 512;

tether::error closed_error() { return {store_errc::closed, "the tail is closed"}; }

metrics::gauge& buffered_gauge() {
  static metrics::gauge& g = metrics::global().add_gauge(
      "tether_tail_buffered_bytes", "Bytes of events waiting in live tails for their readers (all tails).");
  return g;
}
}  // namespace

std::size_t tail_item_bytes(const model::event& e) {
  return boost::json::serialize(model::to_json(e)).size() + sizeof(tail_item);
}

struct tail_state {
  struct buffered {
    tail_item item;
    std::int64_t live_seq = 0;  // ephemeral: highest durable seq pushed before it (0: none yet)
    std::size_t bytes = 0;
  };

  tail_state(session_id s, std::size_t cap, std::size_t max_bytes, std::int64_t after)
      : session(std::move(s)), capacity(cap), max_bytes(max_bytes), last_delivered(after) {}
  ~tail_state() { buffered_gauge().sub(static_cast<std::int64_t>(bytes)); }
  tail_state(const tail_state&) = delete;
  tail_state& operator=(const tail_state&) = delete;

  const session_id session;
  const std::size_t capacity;
  const std::size_t max_bytes;

  std::mutex mu;  // guards everything below
  std::deque<buffered> buffer;
  std::size_t bytes = 0;             // of `buffer`
  std::size_t page = catch_up_page;  // events per catch-up read, smaller when events are large
  bool catch_up = true;              // durable events must be (re)read from the store
  std::uint64_t epoch = 0;           // +1 per overflow
  std::int64_t last_delivered;
  std::int64_t live_seq = 0;
  bool closed = false;
  bool busy = false;        // a next() is running
  completion<bool> waiter;  // a next() waiting for something to do

  [[nodiscard]] bool ready() const { return closed || catch_up || !buffer.empty(); }

  void clear_buffer() {
    buffer.clear();
    buffered_gauge().sub(static_cast<std::int64_t>(bytes));
    bytes = 0;
  }
  buffered pop_front() {
    auto b = std::move(buffer.front());
    buffer.pop_front();
    bytes -= b.bytes;
    buffered_gauge().sub(static_cast<std::int64_t>(b.bytes));
    return b;
  }
  // Everything buffered goes; durable events are read again from the store.
  void overflow() {
    clear_buffer();
    catch_up = true;
    ++epoch;
  }
  // Makes room for `more` bytes: ephemeral items go first (they are only
  // progress), then everything. True when everything went.
  bool make_room(std::size_t more) {
    if (buffer.size() < capacity && bytes + more <= max_bytes) return false;
    std::deque<buffered> kept;
    std::size_t kept_bytes = 0;
    for (auto& b : buffer) {
      if (!b.item.durable) continue;
      kept_bytes += b.bytes;
      kept.push_back(std::move(b));
    }
    buffered_gauge().sub(static_cast<std::int64_t>(bytes - kept_bytes));
    buffer = std::move(kept);
    bytes = kept_bytes;
    if (buffer.size() < capacity && bytes + more <= max_bytes) return false;
    overflow();
    return true;
  }

  // Under mu: durable events up to `seq` were committed elsewhere (another
  // process sharing the store); unless delivered already, read them from
  // the store. Returns the waiter to wake, if any.
  completion<bool> behind(std::int64_t seq) {
    if (closed || seq <= last_delivered) return {};
    catch_up = true;
    ++epoch;
    return std::move(waiter);
  }

  // Under mu; returns the waiter to wake (outside the lock), if any.
  completion<bool> push(tail_item item, std::size_t size) {
    if (closed) return {};
    const bool durable = item.durable;
    if (durable) live_seq = std::max(live_seq, item.event.seq.value);
    if (size > max_bytes) {  // it can never wait here
      if (durable) overflow();
      return std::move(waiter);
    }
    // After an overflow a durable item comes back from the store; only ephemerals are kept.
    if (make_room(size) && durable) return std::move(waiter);
    buffer.push_back({std::move(item), live_seq, size});
    bytes += size;
    buffered_gauge().add(static_cast<std::int64_t>(size));
    return std::move(waiter);
  }

  // Under mu: moves deliverable buffered items into `out`, about `budget`
  // bytes at most (at least one item), so one next() hands out a bounded batch.
  void drain(std::vector<tail_item>& out, std::size_t budget) {
    std::size_t taken = 0;
    while (!buffer.empty() && (out.empty() || taken < budget)) {
      auto b = pop_front();
      if (b.item.durable) {
        const std::int64_t seq = b.item.event.seq.value;
        if (seq <= last_delivered) continue;
        if (seq != last_delivered + 1) {
          // Cannot happen while publishes follow commits; re-read rather than skip.
          overflow();
          return;
        }
        last_delivered = seq;
        taken += b.bytes;
        out.push_back(std::move(b.item));
      } else {
        if (b.live_seq != 0 && b.live_seq < last_delivered) continue;  // older than delivered history
        b.item.event.seq = event_seq{last_delivered};
        taken += b.bytes;
        out.push_back(std::move(b.item));
      }
    }
  }

  void close_locked(completion<bool>& wake) {
    closed = true;
    clear_buffer();
    wake = std::move(waiter);
  }
};

struct all_tail_state {
  all_tail_state(std::size_t cap, std::size_t max_bytes) : capacity(cap), max_bytes(max_bytes) {}
  ~all_tail_state() { buffered_gauge().sub(static_cast<std::int64_t>(bytes)); }
  all_tail_state(const all_tail_state&) = delete;
  all_tail_state& operator=(const all_tail_state&) = delete;

  const std::size_t capacity;
  const std::size_t max_bytes;

  std::mutex mu;                                         // guards everything below
  std::deque<std::pair<tail_item, std::size_t>> buffer;  // with each item's bytes
  std::size_t bytes = 0;
  bool lagged = false;  // overflowed: dead, the hub no longer feeds it
  bool closed = false;
  bool busy = false;        // a next() is running
  completion<bool> waiter;  // a next() waiting for something to do

  [[nodiscard]] bool ready() const { return closed || lagged || !buffer.empty(); }

  void clear_buffer() {
    buffer.clear();
    buffered_gauge().sub(static_cast<std::int64_t>(bytes));
    bytes = 0;
  }
  [[nodiscard]] bool full(std::size_t more) const { return buffer.size() >= capacity || bytes + more > max_bytes; }

  // Under mu; false once the tail is dead (lagged or closed). Over its
  // budget it drops the ephemeral items it holds first; if that is not
  // enough it is lagged.
  bool push(const model::event& e, bool durable, std::size_t size) {
    if (closed || lagged) return false;
    if (full(size)) {
      std::erase_if(buffer, [this](const auto& b) {
        if (b.first.durable) return false;
        bytes -= b.second;
        buffered_gauge().sub(static_cast<std::int64_t>(b.second));
        return true;
      });
      if (!durable && full(size)) return true;  // this progress is dropped, the tail lives on
      if (full(size)) {
        clear_buffer();
        lagged = true;
        return false;
      }
    }
    buffer.emplace_back(tail_item{e, durable}, size);
    bytes += size;
    buffered_gauge().add(static_cast<std::int64_t>(size));
    return true;
  }

  void close_locked(completion<bool>& wake) {
    closed = true;
    clear_buffer();
    wake = std::move(waiter);
  }
};

namespace {

tether::error lagged_error(std::size_t capacity) {
  return {store_errc::lagged, "the tail fell more than " + std::to_string(capacity) + " events behind"};
}

// Completes at once when the tail has something to do, else when push() or
// close() wakes it. The check and the registration share the tail's lock, so
// an item arriving in between cannot be missed.
template <class State>
task<bool> wait_ready(std::shared_ptr<State> st) {
  return async_op<bool>([st = std::move(st)](completion<bool> done) mutable {
    std::unique_lock lock(st->mu);
    if (st->ready()) {
      lock.unlock();
      done(true);
      return;
    }
    st->waiter = std::move(done);
  });
}

// Ends a tail's next(): another one may run.
template <class State>
struct not_busy {
  State& st;
  ~not_busy() {
    std::lock_guard lock(st.mu);
    st.busy = false;
  }
};

task<result<std::vector<tail_item>>> next_items(event_log* store, std::shared_ptr<tail_state> st) {
  {
    std::lock_guard lock(st->mu);
    if (st->closed) co_return closed_error();
    if (st->busy) co_return make_error(store_errc::rejected, "next() is already running on this tail");
    st->busy = true;
  }
  const not_busy<tail_state> guard{*st};

  // co_await operands are named locals: g++ 12 may destroy temporaries of a
  // co_await full-expression twice.
  for (;;) {
    auto ready = wait_ready(st);
    co_await std::move(ready);
    std::vector<tail_item> out;
    std::int64_t from = 0;
    std::uint64_t epoch = 0;
    std::size_t limit = catch_up_page;
    {
      std::lock_guard lock(st->mu);
      if (st->closed) co_return closed_error();
      if (!st->catch_up) {
        st->drain(out, st->max_bytes);
        if (!out.empty()) co_return out;
        continue;
      }
      from = st->last_delivered;
      epoch = st->epoch;
      limit = st->page;
    }
    auto reading = store->read(st->session, event_seq{from}, limit);
    auto page = co_await std::move(reading);
    {
      std::lock_guard lock(st->mu);
      if (st->closed) co_return closed_error();
      if (!page) co_return page.error();
      // One next() hands out about the byte budget: the rest of a page is
      // read again by the next call.
      std::size_t read_bytes = 0;
      std::size_t measured = 0;
      bool cut = false;
      for (auto& e : page->events) {
        if (!out.empty() && read_bytes >= st->max_bytes) {
          cut = true;
          break;
        }
        read_bytes += tail_item_bytes(e);
        ++measured;
        if (e.seq.value <= st->last_delivered) continue;
        st->last_delivered = e.seq.value;
        out.push_back(tail_item{std::move(e), true});
      }
      // The next page holds about the byte budget: a page of large events
      // (long prompts, tool outputs) must not cost a slow reader megabytes.
      if (measured > 0) {
        const std::size_t mean = std::max<std::size_t>(1, read_bytes / measured);
        st->page = std::clamp<std::size_t>(st->max_bytes / mean, 1, catch_up_page);
      }
      // Caught up unless there is more history or an overflow raced the read.
      if (!cut && !page->more && st->epoch == epoch) {
        st->catch_up = false;
        st->drain(out, st->max_bytes > read_bytes ? st->max_bytes - read_bytes : 0);
      }
      if (!out.empty()) co_return out;
    }
  }
}

class tail_impl final : public event_tail {
 public:
  tail_impl(event_log& store, std::shared_ptr<tail_hub> hub, std::shared_ptr<tail_state> st)
      : store_(&store), hub_(std::move(hub)), st_(std::move(st)) {}
  ~tail_impl() override { close(); }
  tail_impl(const tail_impl&) = delete;
  tail_impl& operator=(const tail_impl&) = delete;

  task<result<std::vector<tail_item>>> next() override { return next_items(store_, st_); }

  void close() override {
    completion<bool> wake;
    {
      std::lock_guard lock(st_->mu);
      st_->close_locked(wake);
    }
    if (wake) wake(true);
    hub_->remove(st_);
  }

 private:
  event_log* store_;
  std::shared_ptr<tail_hub> hub_;
  std::shared_ptr<tail_state> st_;
};

task<result<std::vector<tail_item>>> next_all_items(std::shared_ptr<all_tail_state> st) {
  {
    std::lock_guard lock(st->mu);
    if (st->closed) co_return closed_error();
    if (st->lagged) co_return lagged_error(st->capacity);
    if (st->busy) co_return make_error(store_errc::rejected, "next() is already running on this tail");
    st->busy = true;
  }
  const not_busy<all_tail_state> guard{*st};

  for (;;) {
    auto ready = wait_ready(st);
    co_await std::move(ready);
    std::lock_guard lock(st->mu);
    if (st->closed) co_return closed_error();
    if (st->lagged) co_return lagged_error(st->capacity);
    if (st->buffer.empty()) continue;
    std::vector<tail_item> out;
    std::size_t taken = 0;
    while (!st->buffer.empty() && (out.empty() || taken < st->max_bytes)) {
      auto& [item, size] = st->buffer.front();
      taken += size;
      st->bytes -= size;
      buffered_gauge().sub(static_cast<std::int64_t>(size));
      out.push_back(std::move(item));
      st->buffer.pop_front();
    }
    co_return out;
  }
}

class all_tail_impl final : public event_tail {
 public:
  all_tail_impl(std::shared_ptr<tail_hub> hub, std::shared_ptr<all_tail_state> st)
      : hub_(std::move(hub)), st_(std::move(st)) {}
  ~all_tail_impl() override { close(); }
  all_tail_impl(const all_tail_impl&) = delete;
  all_tail_impl& operator=(const all_tail_impl&) = delete;

  task<result<std::vector<tail_item>>> next() override { return next_all_items(st_); }

  void close() override {
    completion<bool> wake;
    {
      std::lock_guard lock(st_->mu);
      st_->close_locked(wake);
    }
    if (wake) wake(true);
    hub_->remove(st_);
  }

 private:
  std::shared_ptr<tail_hub> hub_;
  std::shared_ptr<all_tail_state> st_;
};

}  // namespace

std::unique_ptr<event_tail> tail_hub::subscribe(event_log& store, session_id s, event_seq after) {
  auto st = std::make_shared<tail_state>(std::move(s), buffer_, max_bytes_, after.value);
  {
    std::lock_guard lock(mu_);
    if (closed_)
      st->closed = true;
    else
      tails_[st->session.str()].push_back(st);
  }
  return std::make_unique<tail_impl>(store, shared_from_this(), std::move(st));
}

std::unique_ptr<event_tail> tail_hub::subscribe_all(std::size_t buffer) {
  auto st = std::make_shared<all_tail_state>(buffer == 0 ? 1 : buffer, max_bytes_);
  {
    std::lock_guard lock(mu_);
    if (closed_)
      st->closed = true;
    else
      all_.push_back(st);
  }
  return std::make_unique<all_tail_impl>(shared_from_this(), std::move(st));
}

void tail_hub::push_all_locked(std::span<const model::event> events, std::span<const std::size_t> sizes, bool durable,
                               std::vector<completion<bool>>& wake) {
  std::size_t kept = 0;
  for (auto& st : all_) {
    bool alive = true;
    {
      std::lock_guard tail_lock(st->mu);
      for (std::size_t i = 0; i < events.size() && alive; ++i) alive = st->push(events[i], durable, sizes[i]);
      if (st->waiter) wake.push_back(std::move(st->waiter));
    }
    // A dead tail is forgotten here rather than fed until its owner closes it.
    if (alive) all_[kept++] = std::move(st);
  }
  all_.resize(kept);
}

void tail_hub::publish_durable(const std::vector<model::event>& events) {
  std::vector<completion<bool>> wake;
  {
    std::lock_guard lock(mu_);
    if (tails_.empty() && all_.empty()) return;
    // Sizes only of the events some tail will hold (measuring one costs a serialization).
    std::vector<std::size_t> sizes(events.size(), 0);
    for (std::size_t i = 0; i < events.size(); ++i)
      if (!all_.empty() || tails_.contains(events[i].session.str())) sizes[i] = tail_item_bytes(events[i]);
    push_all_locked(events, sizes, true, wake);
    for (std::size_t i = 0; i < events.size(); ++i) {
      if (tails_.empty()) break;
      const auto& e = events[i];
      const auto it = tails_.find(e.session.str());
      if (it == tails_.end()) continue;
      for (const auto& st : it->second) {
        std::lock_guard tail_lock(st->mu);
        if (auto w = st->push(tail_item{e, true}, sizes[i])) wake.push_back(std::move(w));
      }
    }
  }
  for (auto& w : wake) w(true);
}

void tail_hub::foreign_commit(const session_id& s, std::int64_t seq) {
  std::vector<completion<bool>> wake;
  {
    std::lock_guard lock(mu_);
    const auto it = tails_.find(s.str());
    if (it == tails_.end()) return;
    for (const auto& st : it->second) {
      std::lock_guard tail_lock(st->mu);
      if (auto w = st->behind(seq)) wake.push_back(std::move(w));
    }
  }
  for (auto& w : wake) w(true);
}

void tail_hub::foreign_resync() {
  std::vector<completion<bool>> wake;
  {
    std::lock_guard lock(mu_);
    for (const auto& [session, tails] : tails_)
      for (const auto& st : tails) {
        std::lock_guard tail_lock(st->mu);
        if (auto w = st->behind(std::numeric_limits<std::int64_t>::max())) wake.push_back(std::move(w));
      }
  }
  for (auto& w : wake) w(true);
}

void tail_hub::publish_ephemeral(const session_id& s, model::payload p) {
  if (model::type_durability(p) != model::durability::ephemeral) {
    spdlog::warn("store: publish() ignored durable event {} for {}; append it instead", model::type_name(p), s.str());
    return;
  }
  std::vector<completion<bool>> wake;
  {
    std::lock_guard lock(mu_);
    if (tails_.find(s.str()) == tails_.end() && all_.empty()) return;  // nobody would see it
    // Its own id, never a seq: "eph_" and a count of this node's ephemerals.
    model::event e{event_id::trusted("eph_" + std::to_string(++ephemerals_)), s, event_seq{0}, clock_.now(),
                   std::move(p)};
    const std::size_t size = tail_item_bytes(e);
    if (const auto held = held_.find(s.str()); held != held_.end()) {
      auto& h = held->second;
      if (h.bytes + size <= max_bytes_) {
        h.bytes += size;
        h.items.emplace_back(std::move(e), size);
      }
      return;
    }
    push_ephemeral_locked(e, size, wake);
  }
  for (auto& w : wake) w(true);
}

void tail_hub::push_ephemeral_locked(const model::event& e, std::size_t size, std::vector<completion<bool>>& wake) {
  push_all_locked(std::span(&e, 1), std::span(&size, 1), false, wake);
  const auto it = tails_.find(e.session.str());
  if (it == tails_.end()) return;
  for (const auto& st : it->second) {
    std::lock_guard tail_lock(st->mu);
    if (auto w = st->push(tail_item{e, false}, size)) wake.push_back(std::move(w));
  }
}

void tail_hub::hold(const session_id& s) {
  std::lock_guard lock(mu_);
  ++held_[s.str()].appends;
}

void tail_hub::release(const session_id& s) {
  std::vector<completion<bool>> wake;
  {
    std::lock_guard lock(mu_);
    const auto it = held_.find(s.str());
    if (it == held_.end()) return;
    if (--it->second.appends > 0) return;
    auto items = std::move(it->second.items);
    held_.erase(it);
    for (const auto& [e, size] : items) push_ephemeral_locked(e, size, wake);
  }
  for (auto& w : wake) w(true);
}

void tail_hub::close_all() {
  std::vector<completion<bool>> wake;
  {
    std::lock_guard lock(mu_);
    closed_ = true;
    for (auto& [session, states] : tails_) {
      for (auto& st : states) {
        std::lock_guard tail_lock(st->mu);
        completion<bool> w;
        st->close_locked(w);
        if (w) wake.push_back(std::move(w));
      }
    }
    tails_.clear();
    for (auto& st : all_) {
      std::lock_guard tail_lock(st->mu);
      completion<bool> w;
      st->close_locked(w);
      if (w) wake.push_back(std::move(w));
    }
    all_.clear();
  }
  for (auto& w : wake) w(true);
}

void tail_hub::remove(const std::shared_ptr<tail_state>& st) {
  std::lock_guard lock(mu_);
  const auto it = tails_.find(st->session.str());
  if (it == tails_.end()) return;
  std::erase(it->second, st);
  if (it->second.empty()) tails_.erase(it);
}

void tail_hub::remove(const std::shared_ptr<all_tail_state>& st) {
  std::lock_guard lock(mu_);
  std::erase(all_, st);
}

}  // namespace tether::store
