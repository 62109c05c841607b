#include "runtime/agent/file_work.h"

#include <atomic>
#include <mutex>
#include <optional>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/asio/use_awaitable.hpp>

namespace tether::runtime::agent::file_work {

namespace asio = boost::asio;
namespace json = boost::json;

namespace {

std::atomic<std::size_t> in_flight{0};

// Never destroyed: joining it at exit would wait for a stuck request.
asio::thread_pool& pool() {
  static auto* p = new asio::thread_pool(2);  // NOLINT(cppcoreguidelines-owning-memory)
  return *p;
}

// What the worker hands back: the answer, and the waiting coroutine's timer,
// made to expire at once (also when the wait has not begun yet).
struct slot {
  explicit slot(const asio::any_io_executor& ex) : done(ex) {}
  std::mutex m;
  std::optional<result<json::value>> answer;
  asio::steady_timer done;
};

}  // namespace

std::size_t pending() { return in_flight.load(); }

asio::awaitable<result<json::value>> run(std::function<result<json::value>()> work, limits l) {
  if (in_flight.fetch_add(1) >= l.max_pending) {
    in_flight.fetch_sub(1);
    co_return tether::error(std::make_error_code(std::errc::device_or_resource_busy),
                            "too many file requests at once; try again");
  }
  auto s = std::make_shared<slot>(co_await asio::this_coro::executor);
  s->done.expires_after(l.deadline);
  asio::post(pool(), [s, work = std::move(work)]() mutable {
    auto r = work();
    {
      const std::lock_guard lock(s->m);
      s->answer.emplace(std::move(r));
    }
    in_flight.fetch_sub(1);
    asio::post(s->done.get_executor(), [s] { s->done.expires_at(asio::steady_timer::time_point::min()); });
  });
  co_await s->done.async_wait(asio::as_tuple(asio::use_awaitable));
  const std::lock_guard lock(s->m);
  if (s->answer) co_return std::move(*s->answer);
  co_return tether::error(std::make_error_code(std::errc::timed_out),
                          "the file request took longer than " + std::to_string(l.deadline.count()) + " ms");
}

}  // namespace tether::runtime::agent::file_work
