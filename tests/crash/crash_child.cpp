// crash_child: the process the crash test kills with SIGKILL.
//
//   crash_child DB [SESSIONS] [WORKERS] [SEED]
//
// Opens the SQLite store at DB, creates SESSIONS sessions (ses_crash_0 …,
// reused when they exist), then runs WORKERS coroutines on two threads that,
// as fast as they can, admit inputs (session_service::admit, record_only),
// append other events straight to the store, reset sessions, and run
// executions (session_service::resume) whose turns record steps, tool calls
// and text with short pauses in between, so a kill often lands mid-turn.
//
// After each acknowledged operation it writes one line to stdout with a
// single write(2) (no buffering, so a line on the pipe means the operation was
// durable before the kill):
//
//   session <ses>                       session exists (created or reused)
//   admit <ses> <msg> <seq>             input admitted at seq
//   event <ses> <seq> <evt>             event appended (directly or by a turn)
//   reset <ses>                         session.reset appended
//   run <ses> <exe|-> <drain status>    a resume finished
//
// It never exits by itself; any unexpected error is printed to stderr and
// ends the process with status 3, which the test reports.
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <future>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/json.hpp>

#include "session/errors.h"
#include "session/service.h"
#include "store/sqlite/sqlite_store.h"
#include "util/log.h"

namespace {

namespace asio = boost::asio;
using namespace tether;

void ack(std::string line) {
  line += '\n';
  const char* p = line.data();
  std::size_t left = line.size();
  while (left > 0) {
    const ssize_t n = ::write(STDOUT_FILENO, p, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      std::_Exit(4);  // the test closed the pipe
    }
    p += n;
    left -= static_cast<std::size_t>(n);
  }
}

[[noreturn]] void fatal(const std::string& what, const error& e) {
  std::fprintf(stderr, "crash_child: %s: %s\n", what.c_str(), e.describe().c_str());
  std::fflush(stderr);
  std::_Exit(3);
}

std::uint64_t seed_from(int argc, char** argv, int index) {
  if (argc > index) return std::strtoull(argv[index], nullptr, 10);
  return std::random_device{}();
}

// A runtime whose turns look like a small agent step: step.started, a tool
// call, a pause, the tool result, a boundary (promoting steers that arrived),
// the answer text and step.ended. Each durable event is acknowledged.
class crash_runtime final : public session::runtime {
 public:
  [[nodiscard]] std::string name(std::string_view) const override { return "crash"; }
  session::task<session::turn_result> run_turn(session::turn_context ctx,
                                               std::shared_ptr<session::turn_host> host) override {
    const auto interrupted = session::turn_result{session::turn_status::interrupted, {}, {}};
    thread_local std::minstd_rand rng(std::random_device{}());
    asio::steady_timer pause(co_await asio::this_coro::executor);

    std::vector<model::payload> first;
    first.emplace_back(model::step_started{ctx.execution, 1});
    const auto call = call_id::generate();
    model::tool_called called;
    called.call = call;
    called.tool = "echo";
    called.input = boost::json::object{{"text", "hi"}};
    first.emplace_back(std::move(called));
    if (!co_await record(ctx.session, host, std::move(first))) co_return interrupted;

    pause.expires_after(std::chrono::microseconds(rng() % 3000));
    co_await pause.async_wait(asio::as_tuple(asio::use_awaitable));
    if (host->stop_token().stop_requested()) co_return interrupted;

    std::vector<model::payload> result;
    result.emplace_back(model::tool_succeeded{call, "hi", {}});
    if (!co_await record(ctx.session, host, std::move(result))) co_return interrupted;

    auto steers = co_await host->boundary();
    if (!steers) co_return interrupted;
    for (const auto& m : steers.value()) ack("event " + ctx.session.str() + " " + std::to_string(m.seq.value) + " -");

    std::vector<model::payload> last;
    last.emplace_back(model::text_ended{message_id::generate(), "done"});
    model::step_ended ended;
    ended.finish = "stop";
    ended.usage = model::usage{100, 10, 50};
    last.emplace_back(std::move(ended));
    if (!co_await record(ctx.session, host, std::move(last))) co_return interrupted;

    session::turn_result done;
    done.usage = model::usage{100, 10, 50};
    co_return done;
  }

 private:
  static session::task<bool> record(session_id s, std::shared_ptr<session::turn_host> host,
                                    std::vector<model::payload> events) {
    auto r = co_await host->record(std::move(events));
    if (!r) co_return false;  // lease lost or stopping: the turn ends
    for (const auto& e : r.value()) ack("event " + s.str() + " " + std::to_string(e.seq.value) + " " + e.id.str());
    co_return true;
  }
};

struct world {
  store::event_store* store = nullptr;
  session::session_service* service = nullptr;
  std::vector<session_id> sessions;
};

asio::awaitable<void> admit_one(world* w, session_id s, model::delivery d) {
  session::input_request req;
  thread_local std::uint64_t counter = 0;
  req.prompt = "crash input " + std::to_string(++counter);
  req.delivery = d;
  req.start = session::start_mode::record_only;
  auto r = co_await w->service->admit(s, std::move(req));
  if (!r) fatal("admit", r.error());
  ack("admit " + s.str() + " " + r->input.id.str() + " " + std::to_string(r->input.admitted_seq.value));
}

asio::awaitable<void> append_one(world* w, session_id s, bool notice) {
  store::append_request req;
  req.session = s;
  if (notice)
    req.events.emplace_back(model::synthetic{"crash test notice", "test"});
  else
    req.events.emplace_back(model::session_updated{"crash session " + std::to_string(s.str().size())});
  auto r = co_await w->store->append(std::move(req));
  if (!r) fatal("append", r.error());
  for (const auto& e : r->events) ack("event " + s.str() + " " + std::to_string(e.seq.value) + " " + e.id.str());
}

asio::awaitable<void> reset_one(world* w, session_id s) {
  auto r = co_await w->service->reset(s);
  if (!r) fatal("reset", r.error());
  ack("reset " + s.str());
}

asio::awaitable<void> resume_one(world* w, session_id s) {
  auto r = co_await w->service->resume(s);
  if (!r) fatal("resume", r.error());
  if (r->status == session::drain_status::error)
    fatal("drain", make_error(session::session_errc::storage_failed, r->detail));
  ack("run " + s.str() + " " + (r->execution ? r->execution->str() : std::string("-")) + " " +
      std::string(session::to_string(r->status)));
}

asio::awaitable<void> worker(world* w, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  for (;;) {
    const auto& s = w->sessions[rng() % w->sessions.size()];
    const auto op = rng() % 1000;
    if (op < 600)
      co_await admit_one(w, s, model::delivery::steer);
    else if (op < 700)
      co_await admit_one(w, s, model::delivery::queue);
    else if (op < 890)
      co_await append_one(w, s, op % 2 == 0);
    else if (op < 995)
      co_await resume_one(w, s);
    else
      co_await reset_one(w, s);
  }
}

template <class T>
T run_sync(asio::io_context& ioc, asio::awaitable<T> aw) {
  std::promise<T> p;
  auto f = p.get_future();
  asio::co_spawn(
      ioc,
      [](asio::awaitable<T> a, std::promise<T>* out) -> asio::awaitable<void> {
        out->set_value(co_await std::move(a));
      }(std::move(aw), &p),
      asio::detached);
  return f.get();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: crash_child DB [SESSIONS] [WORKERS] [SEED]\n");
    return 2;
  }
  setup_logging("error");
  const std::size_t n_sessions = argc > 2 ? std::strtoul(argv[2], nullptr, 10) : 6;
  const std::size_t n_workers = argc > 3 ? std::strtoul(argv[3], nullptr, 10) : 24;
  const std::uint64_t seed = seed_from(argc, argv, 4);

  store::sqlite_options so;
  so.path = argv[1];
  auto st = store::open_sqlite_store(std::move(so));
  if (!st) fatal("open", st.error());

  asio::io_context ioc;
  auto guard = asio::make_work_guard(ioc);
  std::vector<std::thread> threads;
  threads.reserve(2);
  for (int i = 0; i < 2; ++i) threads.emplace_back([&ioc] { ioc.run(); });

  crash_runtime rt;
  session::session_options opts;
  opts.recovery_interval_ms = 0;
  session::session_service svc(ioc.get_executor(), **st, rt, real_clock(), session::make_node_identity("crash"), opts);
  if (auto r = run_sync(ioc, svc.start()); !r) fatal("start", r.error());

  world w{st->get(), &svc, {}};
  for (std::size_t i = 0; i < n_sessions; ++i) {
    const std::string id = "ses_crash_" + std::to_string(i);
    auto r = run_sync(ioc, svc.create_session(session::create_request{id, "crash", "", ""}));
    if (!r && r.error() != store::store_errc::session_exists) fatal("create " + id, r.error());
    w.sessions.push_back(session_id::trusted(id));
    ack("session " + id);
  }

  std::mt19937_64 seeds(seed);
  for (std::size_t i = 0; i < n_workers; ++i) asio::co_spawn(ioc, worker(&w, seeds()), asio::detached);
  for (auto& t : threads) t.join();  // never: the test kills us
  return 0;
}
