// The warm agent processes of one profile (warm_registry.h).
#include "runtime/agent/warm_registry.h"

#include <sys/wait.h>

#include <spdlog/spdlog.h>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/json/serialize.hpp>

#include "process/child.h"
#include "runtime/agent/turn_recorder.h"

namespace tether::runtime::agent {

namespace asio = boost::asio;

namespace {

constexpr auto use_tuple = asio::as_tuple(asio::use_awaitable);
constexpr auto room_poll = std::chrono::milliseconds(50);
constexpr auto stop_poll = std::chrono::milliseconds(20);
constexpr auto stderr_patience = std::chrono::milliseconds(500);

// Whether child `pid` has exited (not reaped: its wait stays with its owner).
// Its stderr ending says so too, but possibly after the next turn took it.
bool exited(pid_t pid) {
  if (pid <= 0) return false;
  siginfo_t info{};
  return ::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0 && info.si_pid == pid;
}

}  // namespace

warm_process::warm_process(const asio::any_io_executor& io)
    : strand(asio::make_strand(io)), err(strand), keep(strand) {}

warm_process::~warm_process() = default;

std::string warm_process::identity() const {
  return boost::json::serialize(boost::json::object{{"pid", pid}, {"started_ms", started_ms}});
}

warm_registry::warm_registry(const agent_options& o, std::size_t max_processes, std::chrono::milliseconds keep_alive)
    : o_(o), max_(max_processes == 0 ? 1 : max_processes), keep_alive_(keep_alive) {}

std::size_t warm_registry::size() {
  std::lock_guard lock(mu_);
  return procs_.size();
}

process_ptr warm_registry::take(const session_id& s, std::int64_t generation) {
  std::lock_guard lock(mu_);
  const auto it = procs_.find(s);
  if (it == procs_.end()) return nullptr;
  auto p = it->second;
  // Another generation's (a reset), a dead one, or one a turn still unwinds
  // holds: it goes, and the turn gets a new one.
  if (p->generation != generation || p->dead || p->busy || exited(p->pid)) {
    procs_.erase(it);
    if (p->busy)
      p->retired = true;
    else
      close_locked(p);
    return nullptr;
  }
  p->busy = true;
  return p;
}

asio::awaitable<process_ptr> warm_registry::open(session_id s, std::int64_t generation, std::stop_token stop) {
  const auto ex = co_await asio::this_coro::executor;
  for (;;) {
    {
      // Processes still closing count: the bound is on processes alive.
      std::lock_guard lock(mu_);
      if (procs_.size() + closing_ < max_ || stopped_) co_return add_locked(s, generation);
      if (procs_.size() >= max_ || closing_ == 0) {
        process_ptr oldest;
        for (const auto& [id, p] : procs_)
          if (!p->busy && (!oldest || p->last_used < oldest->last_used)) oldest = p;
        if (oldest) {
          spdlog::debug("agent: closing the idle process of {} to make room ({} at most)", oldest->session.str(),
                        max_);
          procs_.erase(oldest->session);
          close_locked(oldest);
        }
      }
    }
    if (stop.stop_requested()) co_return nullptr;
    asio::steady_timer t(ex);
    t.expires_after(room_poll);
    co_await t.async_wait(use_tuple);
  }
}

process_ptr warm_registry::add_locked(const session_id& s, std::int64_t generation) {
  auto p = std::make_shared<warm_process>(o_.io);
  p->session = s;
  p->generation = generation;
  p->busy = true;
  if (stopped_) {
    p->retired = true;
    return p;
  }
  if (auto it = procs_.find(s); it != procs_.end()) {
    if (it->second->busy)
      it->second->retired = true;
    else
      close_locked(it->second);
  }
  procs_[s] = p;
  auto self = shared_from_this();
  asio::post(p->strand, [self, p] {
    asio::co_spawn(
        p->strand, [self, p]() -> asio::awaitable<void> { co_await self->keep_alive(p); }, asio::detached);
  });
  return p;
}

void warm_registry::release(const process_ptr& p) {
  std::lock_guard lock(mu_);
  p->busy = false;
  p->last_used = ++clock_;
  p->idle_since = std::chrono::steady_clock::now();
  const auto it = procs_.find(p->session);
  const bool current = it != procs_.end() && it->second == p;
  if (!current || p->retired || p->dead) {
    if (current) procs_.erase(it);
    close_locked(p);
    return;
  }
  asio::post(p->strand, [p] { p->keep.cancel(); });  // the keep-alive starts over
}

void warm_registry::retire(const process_ptr& p) {
  std::lock_guard lock(mu_);
  if (auto it = procs_.find(p->session); it != procs_.end() && it->second == p) procs_.erase(it);
  // The turn that held it lets go: it closes now (left busy, nothing would
  // ever close it, and its keep-alive would wait on it forever).
  p->busy = false;
  p->retired = true;
  close_locked(p);
}

void warm_registry::forget(const session_id& s) {
  std::lock_guard lock(mu_);
  const auto it = procs_.find(s);
  if (it == procs_.end()) return;
  auto p = it->second;
  procs_.erase(it);
  if (p->busy)
    p->retired = true;
  else
    close_locked(p);
}

void warm_registry::close_locked(const process_ptr& p) {
  if (p->close_queued) return;
  p->close_queued = true;
  ++closing_;
  // Posted: co_spawn may start the coroutine inline, and mu_ is held here.
  auto self = shared_from_this();
  asio::post(p->strand, [self, p] {
    asio::co_spawn(
        p->strand, [self, p]() -> asio::awaitable<void> { co_await self->close(p); }, asio::detached);
  });
}

asio::awaitable<void> warm_registry::close(process_ptr p) {
  p->closing = true;
  p->keep.cancel();
  if (p->conn) co_await p->conn->close();
  if (p->proc) {
    (void)co_await p->proc->stop();
    forget_agent(o_, p->proc->pid());
    if (p->reading_stderr) co_await p->err.drain(*p->proc, stderr_patience);
  }
  p->ticket.close();
  p->turn.reset();
  p->conn.reset();
  p->proc.reset();
  spdlog::debug("agent: the process of {} (pid {}) is closed", p->session.str(), p->pid);
  std::lock_guard lock(mu_);
  --closing_;
}

asio::awaitable<void> warm_registry::keep_alive(process_ptr p) {
  for (;;) {
    auto deadline = std::chrono::steady_clock::time_point::max();
    {
      std::lock_guard lock(mu_);
      if (p->close_queued) co_return;
      if (!p->busy) deadline = p->idle_since + keep_alive_;
      if (!p->busy && std::chrono::steady_clock::now() >= deadline) {
        spdlog::debug("agent: the process of {} was idle for {} ms: closing it", p->session.str(),
                      keep_alive_.count());
        if (auto it = procs_.find(p->session); it != procs_.end() && it->second == p) procs_.erase(it);
        close_locked(p);
        co_return;
      }
    }
    p->keep.expires_at(deadline);
    co_await p->keep.async_wait(use_tuple);
    if (p->closing) co_return;
  }
}

void warm_registry::watch_stderr(const process_ptr& p) {
  p->reading_stderr = true;
  auto self = shared_from_this();
  asio::co_spawn(
      p->strand,
      [self, p]() -> asio::awaitable<void> {
        co_await p->err.read(*p->proc);
        if (p->closing) co_return;
        p->dead = true;  // its stderr ended: it exited (or is about to)
        std::lock_guard lock(self->mu_);
        if (p->busy) co_return;  // its turn sees it
        if (auto it = self->procs_.find(p->session); it != self->procs_.end() && it->second == p)
          self->procs_.erase(it);
        self->close_locked(p);
      },
      asio::detached);
}

asio::awaitable<void> warm_registry::stop() {
  {
    std::lock_guard lock(mu_);
    stopped_ = true;
    auto all = std::move(procs_);
    procs_.clear();
    for (auto& [s, p] : all) {
      if (p->busy)
        p->retired = true;
      else
        close_locked(p);
    }
  }
  const auto ex = co_await asio::this_coro::executor;
  asio::steady_timer t(ex);
  for (;;) {
    {
      std::lock_guard lock(mu_);
      if (closing_ == 0) co_return;
    }
    t.expires_after(stop_poll);
    co_await t.async_wait(use_tuple);
  }
}

}  // namespace tether::runtime::agent
