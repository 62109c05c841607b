#include "session/coordinator.h"

#include "util/metrics.h"

#include <mutex>
#include <unordered_map>
#include <vector>

#include <spdlog/spdlog.h>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/experimental/concurrent_channel.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "session/errors.h"

namespace tether::session {

namespace asio = boost::asio;
using boost::system::error_code;

void drain_control::set_wake_listener(std::function<void()> listener) {
  std::lock_guard lock(listener_mu_);
  listener_ = std::move(listener);
}

void drain_control::woken() {
  std::function<void()> listener;
  {
    std::lock_guard lock(listener_mu_);
    listener = listener_;
  }
  if (listener) listener();
}

void drain_control::request_stop(stop_reason why) {
  stop_reason expected = stop_reason::none;
  reason_.compare_exchange_strong(expected, why);
  source_.request_stop();
}

namespace {
using outcome_channel = asio::experimental::concurrent_channel<void(error_code, drain_outcome)>;
using done_channel = asio::experimental::concurrent_channel<void(error_code)>;
}  // namespace

struct coordinator::impl : std::enable_shared_from_this<impl> {
  struct entry {
    bool doorbell = false;
    std::shared_ptr<drain_control> control;
    std::vector<std::shared_ptr<outcome_channel>> waiters;
    std::vector<std::shared_ptr<done_channel>> idle_waiters;
    std::optional<drain_outcome> last_work;  // last drain that did something
  };

  asio::any_io_executor executor;
  drain_function drain;
  mutable std::mutex mu;
  std::unordered_map<session_id, entry> sessions;
  bool stopped = false;
  std::size_t loops = 0;
  std::vector<std::shared_ptr<done_channel>> stop_waiters;
  std::atomic<std::uint64_t> drains{0};

  impl(asio::any_io_executor ex, drain_function fn) : executor(std::move(ex)), drain(std::move(fn)) {}

  std::shared_ptr<drain_control> make_control(const session_id& s) {
    auto control = std::make_shared<drain_control>();
    std::weak_ptr<impl> weak = weak_from_this();
    control->wake = [weak, s] {
      if (auto self = weak.lock()) self->ring(s);
    };
    return control;
  }

  // Called with mu held: starts the drain loop for a session that has no entry.
  entry& spawn_locked(const session_id& s) {
    auto& e = sessions[s];
    e.control = make_control(s);
    ++loops;
    metrics::active_sessions().add(1);
    // Posted, not spawned here: co_spawn may run the drain inline on this
    // thread, which holds mu.
    auto self = shared_from_this();
    auto strand = asio::make_strand(executor);
    asio::post(strand, [self, s, control = e.control, strand] {
      asio::co_spawn(strand, drain_loop(self, s, control), [self](const std::exception_ptr&) { self->loop_done(); });
    });
    return e;
  }

  // A wake: start a drain or ring the doorbell of the running one.
  void ring(const session_id& s) {
    std::shared_ptr<drain_control> running;
    {
      std::lock_guard lock(mu);
      if (stopped) return;
      auto it = sessions.find(s);
      if (it == sessions.end()) {
        spawn_locked(s);
        return;
      }
      it->second.doorbell = true;
      running = it->second.control;
    }
    if (running) running->woken();  // a runtime delivering steers mid-turn hears of it
  }

  static asio::awaitable<void> drain_loop(std::shared_ptr<impl> self, session_id s,
                                          std::shared_ptr<drain_control> control) {
    for (;;) {
      self->drains.fetch_add(1);
      drain_outcome out;
      try {
        out = co_await self->drain(s, control);
      } catch (const std::exception& e) {
        spdlog::error("drain of {} threw: {}", s.str(), e.what());
        out = drain_outcome{drain_status::error, std::nullopt, e.what()};
      }
      std::vector<std::shared_ptr<outcome_channel>> waiters;
      std::vector<std::shared_ptr<done_channel>> idle_waiters;
      drain_outcome result;
      {
        std::lock_guard lock(self->mu);
        auto& e = self->sessions.at(s);
        if (out.status != drain_status::idle) e.last_work = out;
        if (e.doorbell && !self->stopped) {
          e.doorbell = false;
          // A successor after an interrupt gets a fresh stop source.
          if (control->stop_token().stop_requested()) {
            control = self->make_control(s);
            e.control = control;
          }
          continue;
        }
        result = e.last_work.value_or(out);
        waiters = std::move(e.waiters);
        idle_waiters = std::move(e.idle_waiters);
        self->sessions.erase(s);
      }
      metrics::active_sessions().sub(1);
      for (auto& w : waiters) w->try_send(error_code{}, result);
      for (auto& w : idle_waiters) w->try_send(error_code{});
      co_return;
    }
  }

  void loop_done() {
    std::vector<std::shared_ptr<done_channel>> waiters;
    {
      std::lock_guard lock(mu);
      --loops;
      if (loops == 0) waiters = std::move(stop_waiters);
    }
    for (auto& w : waiters) w->try_send(error_code{});
  }
};

coordinator::coordinator(asio::any_io_executor executor, drain_function drain)
    : impl_(std::make_shared<impl>(std::move(executor), std::move(drain))) {}

coordinator::~coordinator() {
  std::lock_guard lock(impl_->mu);
  impl_->stopped = true;
  for (auto& [s, e] : impl_->sessions) e.control->request_stop(stop_reason::shutdown);
}

void coordinator::wake(session_id s) { impl_->ring(s); }

asio::awaitable<result<drain_outcome>> coordinator::resume(session_id s) {
  auto ex = co_await asio::this_coro::executor;
  auto ch = std::make_shared<outcome_channel>(ex, 1);
  {
    std::lock_guard lock(impl_->mu);
    if (impl_->stopped) co_return make_error(session_errc::stopped, "the node is stopping");
    auto it = impl_->sessions.find(s);
    auto& e = it != impl_->sessions.end() ? it->second : impl_->spawn_locked(s);
    if (it != impl_->sessions.end()) e.doorbell = true;
    e.waiters.push_back(ch);
  }
  auto [ec, out] = co_await ch->async_receive(asio::as_tuple(asio::use_awaitable));
  if (ec) {
    // This waiter was cancelled; the drain goes on for everybody else.
    std::lock_guard lock(impl_->mu);
    if (auto it = impl_->sessions.find(s); it != impl_->sessions.end()) std::erase(it->second.waiters, ch);
    co_return error(ec, "resume wait cancelled");
  }
  co_return out;
}

interrupt_ack coordinator::interrupt(session_id s) {
  std::lock_guard lock(impl_->mu);
  auto it = impl_->sessions.find(s);
  if (it == impl_->sessions.end()) return {false};
  auto& e = it->second;
  e.doorbell = false;  // wakes recorded before the interrupt belong to the interrupted work
  e.control->request_stop(stop_reason::user);
  return {true};
}

asio::awaitable<void> coordinator::idle(session_id s) {
  auto ex = co_await asio::this_coro::executor;
  auto ch = std::make_shared<done_channel>(ex, 1);
  {
    std::lock_guard lock(impl_->mu);
    auto it = impl_->sessions.find(s);
    if (it == impl_->sessions.end()) co_return;
    it->second.idle_waiters.push_back(ch);
  }
  co_await ch->async_receive(asio::as_tuple(asio::use_awaitable));
}

bool coordinator::active(const session_id& s) const {
  std::lock_guard lock(impl_->mu);
  return impl_->sessions.contains(s);
}

asio::awaitable<void> coordinator::stop() {
  auto ex = co_await asio::this_coro::executor;
  auto ch = std::make_shared<done_channel>(ex, 1);
  {
    std::lock_guard lock(impl_->mu);
    impl_->stopped = true;
    for (auto& [s, e] : impl_->sessions) {
      e.doorbell = false;
      e.control->request_stop(stop_reason::shutdown);
    }
    if (impl_->loops == 0) co_return;
    impl_->stop_waiters.push_back(ch);
  }
  co_await ch->async_receive(asio::as_tuple(asio::use_awaitable));
}

std::size_t coordinator::waiters(const session_id& s) const {
  std::lock_guard lock(impl_->mu);
  const auto it = impl_->sessions.find(s);
  return it == impl_->sessions.end() ? 0 : it->second.waiters.size();
}

std::uint64_t coordinator::drains_started() const { return impl_->drains.load(); }

}  // namespace tether::session
