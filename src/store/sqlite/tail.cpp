#include "store/sqlite/tail.h"

#include <algorithm>
#include <deque>

#include <spdlog/spdlog.h>

#include "store/sqlite/async.h"

namespace tether::store::sqlite {

namespace {
constexpr std::size_t catch_up_page = 512;

tether::error closed_error() { return {store_errc::closed, "the tail is closed"}; }
}  // namespace

struct tail_state {
  struct buffered {
    tail_item item;
    std::int64_t live_seq = 0;  // ephemeral: highest durable seq pushed before it (0: none yet)
  };

  tail_state(session_id s, std::size_t cap, std::int64_t after)
      : session(std::move(s)), capacity(cap), last_delivered(after) {}

  const session_id session;
  const std::size_t capacity;

  std::mutex mu;  // guards everything below
  std::deque<buffered> buffer;
  bool catch_up = true;     // durable events must be (re)read from the store
  std::uint64_t epoch = 0;  // +1 per overflow
  std::int64_t last_delivered;
  std::int64_t live_seq = 0;
  bool closed = false;
  bool busy = false;        // a next() is running
  completion<bool> waiter;  // a next() waiting for something to do

  [[nodiscard]] bool ready() const { return closed || catch_up || !buffer.empty(); }

  // Under mu; returns the waiter to wake (outside the lock), if any.
  completion<bool> push(tail_item item) {
    if (closed) return {};
    const bool durable = item.durable;
    if (durable) live_seq = std::max(live_seq, item.event.seq.value);
    if (buffer.size() >= capacity) {
      buffer.clear();
      catch_up = true;
      ++epoch;
      // A durable item will come back from the store; only ephemerals are kept.
      if (durable) return std::move(waiter);
    }
    buffer.push_back({std::move(item), live_seq});
    return std::move(waiter);
  }

  // Under mu: moves deliverable buffered items into `out`.
  void drain(std::vector<tail_item>& out) {
    while (!buffer.empty()) {
      auto b = std::move(buffer.front());
      buffer.pop_front();
      if (b.item.durable) {
        const std::int64_t seq = b.item.event.seq.value;
        if (seq <= last_delivered) continue;
        if (seq != last_delivered + 1) {
          // Cannot happen while publishes follow commits; re-read rather than skip.
          buffer.clear();
          catch_up = true;
          ++epoch;
          return;
        }
        last_delivered = seq;
        out.push_back(std::move(b.item));
      } else {
        if (b.live_seq != 0 && b.live_seq < last_delivered) continue;  // older than delivered history
        b.item.event.seq = event_seq{last_delivered};
        out.push_back(std::move(b.item));
      }
    }
  }

  void close_locked(completion<bool>& wake) {
    closed = true;
    buffer.clear();
    wake = std::move(waiter);
  }
};

struct all_tail_state {
  explicit all_tail_state(std::size_t cap) : capacity(cap) {}

  const std::size_t capacity;

  std::mutex mu;  // guards everything below
  std::deque<tail_item> buffer;
  bool lagged = false;  // overflowed: dead, the hub no longer feeds it
  bool closed = false;
  bool busy = false;        // a next() is running
  completion<bool> waiter;  // a next() waiting for something to do

  [[nodiscard]] bool ready() const { return closed || lagged || !buffer.empty(); }

  // Under mu; false once the tail is dead (lagged or closed).
  bool push(const model::event& e, bool durable) {
    if (closed || lagged) return false;
    if (buffer.size() >= capacity) {
      buffer.clear();
      lagged = true;
      return false;
    }
    buffer.push_back(tail_item{e, durable});
    return true;
  }

  void close_locked(completion<bool>& wake) {
    closed = true;
    buffer.clear();
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

task<result<std::vector<tail_item>>> next_items(event_store* store, std::shared_ptr<tail_state> st) {
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
    {
      std::lock_guard lock(st->mu);
      if (st->closed) co_return closed_error();
      if (!st->catch_up) {
        st->drain(out);
        if (!out.empty()) co_return out;
        continue;
      }
      from = st->last_delivered;
      epoch = st->epoch;
    }
    auto reading = store->read(st->session, event_seq{from}, catch_up_page);
    auto page = co_await std::move(reading);
    {
      std::lock_guard lock(st->mu);
      if (st->closed) co_return closed_error();
      if (!page) co_return page.error();
      for (auto& e : page->events) {
        if (e.seq.value <= st->last_delivered) continue;
        st->last_delivered = e.seq.value;
        out.push_back(tail_item{std::move(e), true});
      }
      // Caught up unless there is more history or an overflow raced the read.
      if (!page->more && st->epoch == epoch) {
        st->catch_up = false;
        st->drain(out);
      }
      if (!out.empty()) co_return out;
    }
  }
}

class tail_impl final : public event_tail {
 public:
  tail_impl(event_store& store, std::shared_ptr<tail_hub> hub, std::shared_ptr<tail_state> st)
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
  event_store* store_;
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
    std::vector<tail_item> out(std::make_move_iterator(st->buffer.begin()), std::make_move_iterator(st->buffer.end()));
    st->buffer.clear();
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

std::unique_ptr<event_tail> tail_hub::subscribe(event_store& store, session_id s, event_seq after) {
  auto st = std::make_shared<tail_state>(std::move(s), buffer_, after.value);
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
  auto st = std::make_shared<all_tail_state>(buffer == 0 ? 1 : buffer);
  {
    std::lock_guard lock(mu_);
    if (closed_)
      st->closed = true;
    else
      all_.push_back(st);
  }
  return std::make_unique<all_tail_impl>(shared_from_this(), std::move(st));
}

void tail_hub::push_all_locked(std::span<const model::event> events, bool durable,
                               std::vector<completion<bool>>& wake) {
  std::size_t kept = 0;
  for (auto& st : all_) {
    bool alive = true;
    {
      std::lock_guard tail_lock(st->mu);
      for (const auto& e : events) {
        alive = st->push(e, durable);
        if (!alive) break;
      }
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
    push_all_locked(events, true, wake);
    for (const auto& e : events) {
      if (tails_.empty()) break;
      const auto it = tails_.find(e.session.str());
      if (it == tails_.end()) continue;
      for (const auto& st : it->second) {
        std::lock_guard tail_lock(st->mu);
        if (auto w = st->push(tail_item{e, true})) wake.push_back(std::move(w));
      }
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
    const auto it = tails_.find(s.str());
    if (it == tails_.end() && all_.empty()) return;
    const model::event e{event_id(), s, event_seq{0}, clock_.now(), std::move(p)};
    push_all_locked(std::span(&e, 1), false, wake);
    if (it != tails_.end()) {
      for (const auto& st : it->second) {
        std::lock_guard tail_lock(st->mu);
        if (auto w = st->push(tail_item{e, false})) wake.push_back(std::move(w));
      }
    }
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

}  // namespace tether::store::sqlite
