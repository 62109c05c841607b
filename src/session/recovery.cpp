#include "session/recovery.h"

#include <set>

#include <spdlog/spdlog.h>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/experimental/concurrent_channel.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "model/errors.h"

namespace tether::session {

namespace asio = boost::asio;

namespace {

enum class verdict { claimed, skipped, quarantined, failed };
struct checked {
  verdict v = verdict::failed;
  error err;
};

// `store` outlives every scan (recovery.h).

// Reads the whole log once; any row that does not decode is reported.
asio::awaitable<result<void>> check_decodable(store::event_store* store, session_id s) {
  event_seq after{0};
  for (;;) {
    auto page = co_await store->read(s, after, 512);
    if (!page) co_return page.error();
    if (!page->events.empty()) after = page->events.back().seq;
    if (!page->more) co_return ok();
  }
}

asio::awaitable<checked> recover_one(store::event_store* store, node_identity node, session_options options,
                                     session_id s, std::function<void(session_id)> wake) {
  if (auto r = co_await check_decodable(store, s); !r) {
    const auto& err = r.error();
    if (err.code != make_error_code(model::model_errc::undecodable) &&
        err.code != make_error_code(store::store_errc::corrupt))
      co_return checked{verdict::failed, err};
    spdlog::error("recovery: session {} quarantined: {}", s.str(), err.describe());
    if (auto q = co_await store->quarantine(s, err.describe()); !q) co_return checked{verdict::failed, q.error()};
    co_return checked{verdict::quarantined, {}};
  }
  auto lease = co_await store->claim_lease(s, node.owner(), options.lease_ttl_ms);
  if (!lease) {
    if (lease.error() == store::store_errc::lease_held) co_return checked{verdict::skipped, {}};
    co_return checked{verdict::failed, lease.error()};
  }
  wake(s);
  co_return checked{verdict::claimed, {}};
}

}  // namespace

asio::awaitable<result<recovery_report>> recovery_scan(store::event_store* store, node_identity node,
                                                       session_options options, std::function<void(session_id)> wake,
                                                       std::function<void(session_id)> wake_stranded,
                                                       std::optional<time_ms> written_before) {
  recovery_report report;
  std::set<session_id> seen;  // each abandoned execution once per scan
  std::optional<session_id> after;
  const auto ex = co_await asio::this_coro::executor;
  const std::size_t width = std::max<std::size_t>(1, options.recovery_concurrency);
  for (;;) {
    auto page = co_await store->list_abandoned(node.name, node.owner(), after, options.recovery_batch);
    if (!page) co_return page.error();
    if (page->empty()) break;
    after = page->back().session;
    std::vector<session_id> todo;
    for (const auto& a : page.value())
      if (seen.insert(a.session).second) todo.push_back(a.session);
    report.examined += todo.size();

    // Check up to `width` sessions at once; each result comes back on the channel.
    using done_channel = asio::experimental::concurrent_channel<void(boost::system::error_code, checked)>;
    done_channel done(ex, todo.size());
    std::size_t next = 0;
    std::size_t running = 0;
    std::optional<error> failure;
    while (next < todo.size() || running > 0) {
      while (running < width && next < todo.size()) {
        asio::co_spawn(ex, recover_one(store, node, options, todo[next++], wake),
                       [&done](const std::exception_ptr& ep, checked c) {
                         if (ep) c = {verdict::failed, make_error(store::store_errc::corrupt, "recovery threw")};
                         done.try_send(boost::system::error_code{}, std::move(c));
                       });
        ++running;
      }
      auto [ec, v] = co_await done.async_receive(asio::as_tuple(asio::use_awaitable));
      --running;
      if (ec) {
        if (!failure) failure = error(ec, "recovery channel");
        continue;
      }
      switch (v.v) {
        case verdict::claimed:
          ++report.claimed;
          break;
        case verdict::skipped:
          ++report.skipped;
          break;
        case verdict::quarantined:
          ++report.quarantined;
          break;
        case verdict::failed:
          if (!failure) failure = v.err;
          break;
      }
    }
    if (failure) co_return *failure;
    if (page->size() < options.recovery_batch) break;
  }

  // Inputs acknowledged but never run. Waking is cheap (the coordinator
  // queues the drain), so a batch is handed over at once.
  std::optional<session_id> stranded_after;
  for (;;) {
    auto page = co_await store->list_stranded(stranded_after, options.recovery_batch);
    if (!page) co_return page.error();
    for (const auto& s : page.value()) {
      if (written_before) {
        auto row = co_await store->get_session(s);
        if (!row) co_return row.error();
        if (row->updated_at > *written_before) {  // its writer may be starting it now
          ++report.left;
          continue;
        }
      }
      wake_stranded(s);
      ++report.woken;
    }
    if (page->size() < options.recovery_batch) break;
    stranded_after = page->back();
  }
  co_return report;
}

}  // namespace tether::session
