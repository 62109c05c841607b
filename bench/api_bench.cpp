// tether_api_bench: `tether serve` measured as a black box over HTTP, against
// a separate `tether mock-llm` (the scripted model), both the real binary.
//
//   startup   fork → the "listening on" line, and fork → the first 200 from
//             GET /v1/health, each on a fresh data directory; median and max.
//   idle      VmRSS of a fresh server one second after it is ready.
//   latency   one session, turns one after the other ("Reply with exactly:
//             …"): POST …/inputs → that session's execution.finished on the
//             global event stream. The model's own time per turn (its
//             recorded completed_us − received_us) is subtracted per turn to
//             give Tether's overhead.
//   load      N sessions at once, each running its turns one after the other
//             (N = 20 and --sessions-large), a fresh server each: turns/s,
//             turn latency, the server's peak RSS (VmHWM), and the scheduler
//             latency: the 202 of the admission → the model receiving that
//             turn's request. Turns are matched to the model's requests by
//             the session id and turn number in the prompt.
//
// The client is one thread running one io_context: a keep-alive connection
// per session and ONE `GET /v1/events` SSE stream that reports every
// completion (no polling). Times on both sides are CLOCK_MONOTONIC
// (steady_clock) microseconds, comparable across processes. Processes are
// started with the end-to-end harness (tests/e2e/harness.h); mock-llm once,
// serve once per scenario. The table goes to stdout; --out writes JSON.
#include <sys/resource.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/connect.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read_until.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>
#include <boost/json.hpp>

#include "bench_util.h"
#include "e2e/harness.h"

namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace json = boost::json;
namespace fs = std::filesystem;
namespace e2e = tether::e2e;
using tcp = asio::ip::tcp;
using tether::bench::micros;
using tether::bench::now_iso8601;
using tether::bench::steady;
using tether::bench::whole;
using namespace std::chrono_literals;

constexpr auto use_tuple = asio::as_tuple(asio::use_awaitable);

// ---- options ----

struct options {
  int startup_runs = 5;
  int latency_turns = 50;
  std::size_t sessions_small = 20;
  std::size_t sessions_large = 1000;
  int turns = 3;
  bool quick = false;
  bool keep = false;
  std::string out;
  std::string dir;
};

void usage() {
  std::puts(
      "usage: tether_api_bench [--sessions-large N] [--turns N] [--quick] [--out FILE.json] [--dir DIR] [--keep]\n"
      "  --sessions-large  sessions at once in the large load scenario (default 1000)\n"
      "  --turns           turns per session in the load scenarios (default 3)\n"
      "  --quick           a smoke run: 3 start-ups, 10 single-session turns, 100 large sessions\n"
      "  --out             write results as JSON to this file\n"
      "  --dir             where to put data directories and logs (default: the system temp dir)\n"
      "  --keep            keep the data directories and server logs");
}

bool parse_args(int argc, char** argv, options& o) {
  bool large_set = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&]() -> const char* { return i + 1 < argc ? argv[++i] : nullptr; };
    if (a == "--help" || a == "-h") {
      usage();
      std::exit(0);
    } else if (a == "--quick") {
      o.quick = true;
    } else if (a == "--keep") {
      o.keep = true;
    } else if (a == "--sessions-large" || a == "--turns" || a == "--out" || a == "--dir") {
      const char* v = next();
      if (v == nullptr) return false;
      if (a == "--sessions-large") {
        o.sessions_large = std::strtoull(v, nullptr, 10);
        large_set = true;
      } else if (a == "--turns") {
        o.turns = std::atoi(v);
      } else if (a == "--out") {
        o.out = v;
      } else {
        o.dir = v;
      }
    } else {
      std::fprintf(stderr, "unknown argument: %s\n", a.c_str());
      return false;
    }
  }
  if (o.quick) {
    o.startup_runs = 3;
    o.latency_turns = 10;
    if (!large_set) o.sessions_large = 100;
  }
  return o.sessions_large > 0 && o.turns > 0;
}

// ---- statistics (microseconds; may be negative for cross-process deltas) ----

struct stats {
  std::size_t count = 0;
  double p50 = 0, p95 = 0, p99 = 0, max = 0, mean = 0;
};

stats summarize(std::vector<double> v) {
  const std::size_t count = v.size();
  const auto l = tether::bench::summarize(std::move(v));
  return stats{count, l.p50_us, l.p95_us, l.p99_us, l.max_us, l.mean_us};
}

json::object to_json(const stats& s) {
  return {{"count", s.count},       {"p50_us", whole(s.p50)}, {"p95_us", whole(s.p95)},
          {"p99_us", whole(s.p99)}, {"max_us", whole(s.max)}, {"mean_us", whole(s.mean)}};
}

double ms(double us) { return us / 1000.0; }

std::int64_t mono_us(steady::time_point t) {
  return std::chrono::duration_cast<std::chrono::microseconds>(t.time_since_epoch()).count();
}

// ---- /proc ----

std::optional<double> status_mb(pid_t pid, std::string_view key) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line))
    if (line.starts_with(key)) return std::strtod(line.c_str() + key.size(), nullptr) / 1024.0;
  return std::nullopt;
}

// A /proc/…/stat line: the name and utime + stime in seconds.
std::optional<std::pair<std::string, double>> read_stat(const fs::path& path) {
  std::ifstream in(path);
  std::string s;
  if (!std::getline(in, s)) return std::nullopt;
  const auto open = s.find('(');
  const auto close = s.rfind(')');
  if (open == std::string::npos || close == std::string::npos || close + 2 > s.size()) return std::nullopt;
  std::istringstream rest(s.substr(close + 2));
  std::string field;
  for (int i = 3; i <= 13; ++i) rest >> field;  // state … cmajflt
  long utime = 0;
  long stime = 0;
  rest >> utime >> stime;
  static const double ticks = static_cast<double>(::sysconf(_SC_CLK_TCK));
  return std::make_pair(s.substr(open + 1, close - open - 1), static_cast<double>(utime + stime) / ticks);
}

double process_cpu_s(pid_t pid) {
  auto r = read_stat("/proc/" + std::to_string(pid) + "/stat");
  return r ? r->second : 0;
}

struct thread_cpu {
  int tid = 0;
  std::string name;
  double seconds = 0;
};

std::map<int, thread_cpu> threads_of(pid_t pid) {
  std::map<int, thread_cpu> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator("/proc/" + std::to_string(pid) + "/task", ec)) {
    const int tid = std::atoi(e.path().filename().c_str());
    if (auto r = read_stat(e.path() / "stat")) out[tid] = thread_cpu{tid, r->first, r->second};
  }
  return out;
}

// CPU per server thread between two samples, busiest first.
std::vector<thread_cpu> busiest(const std::map<int, thread_cpu>& before, const std::map<int, thread_cpu>& after) {
  std::vector<thread_cpu> out;
  for (const auto& [tid, t] : after) {
    auto d = t;
    if (auto it = before.find(tid); it != before.end()) d.seconds -= it->second.seconds;
    out.push_back(d);
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.seconds > b.seconds; });
  return out;
}

double self_cpu_s() {
  rusage ru{};
  ::getrusage(RUSAGE_SELF, &ru);
  auto s = [](const timeval& t) { return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) / 1e6; };
  return s(ru.ru_utime) + s(ru.ru_stime);
}

std::string load_average() {
  std::ifstream in("/proc/loadavg");
  std::string a, b, c;
  in >> a >> b >> c;
  return a + " " + b + " " + c;
}

// ---- processes ----

// serve logs to stdout after its "listening on" line; nobody else reads the
// pipe, so a thread keeps it drained (a full pipe would block the server)
// and keeps the lines for scan_log.
class stdout_drain {
 public:
  explicit stdout_drain(e2e::child* proc) : proc_(proc), thread_([this] { run(); }) {}
  ~stdout_drain() { stop(); }
  stdout_drain(const stdout_drain&) = delete;
  stdout_drain& operator=(const stdout_drain&) = delete;
  // Joins the thread; the child must not be touched by others before.
  void stop() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
  }
  // After the child exited: what it wrote last.
  void finish() {
    stop();
    for (;;) {
      try {
        lines_.push_back(proc_->wait_line("", 20ms));
      } catch (const std::exception&) {
        break;
      }
    }
  }
  const std::vector<std::string>& lines() const { return lines_; }

 private:
  void run() {
    while (!stop_) {
      try {
        lines_.push_back(proc_->wait_line("", 50ms));
      } catch (const std::exception& e) {
        if (std::string_view(e.what()).find("closed stdout") != std::string_view::npos) break;
      }
    }
  }
  e2e::child* proc_;
  std::vector<std::string> lines_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

struct server_proc {
  std::unique_ptr<e2e::child> proc;
  std::unique_ptr<stdout_drain> drain;
  fs::path data;
  fs::path log;
  unsigned short port = 0;
  std::string token;
  double to_listening_us = 0;
  double to_health_us = 0;
};

server_proc start_server(const fs::path& data, const fs::path& config, const fs::path& log) {
  server_proc s;
  s.data = data;
  s.log = log;
  const std::vector<std::string> argv{e2e::tether_binary(), "serve",         "--data",   data.string(),
                                      "--config",           config.string(), "--listen", "127.0.0.1:0"};
  const std::map<std::string, std::string> env{{"NO_PROXY", "127.0.0.1"}, {"no_proxy", "127.0.0.1"}};
  const auto t0 = steady::now();
  s.proc = std::make_unique<e2e::child>(argv, log, env);
  const auto line = s.proc->wait_line("listening on ", 30s);
  const auto t1 = steady::now();
  s.port = static_cast<unsigned short>(std::stoi(line.substr(line.rfind(':') + 1)));
  for (;;) {
    try {
      if (e2e::request(s.port, "GET", "/v1/health").status == 200) break;
    } catch (const std::exception&) {
    }
    if (steady::now() - t1 > 10s) throw std::runtime_error("GET /v1/health never answered 200");
    std::this_thread::sleep_for(200us);
  }
  const auto t2 = steady::now();
  s.drain = std::make_unique<stdout_drain>(s.proc.get());
  s.to_listening_us = micros(t1 - t0);
  s.to_health_us = micros(t2 - t0);
  std::ifstream in(data / "token");
  std::getline(in, s.token);
  return s;
}

struct stop_result {
  int status = 0;  // exit status; 128+signal; -1 when it had to be killed
  double us = 0;   // SIGTERM → exit
};

stop_result stop_server(server_proc& s) {
  s.drain->stop();
  const auto t0 = steady::now();
  s.proc->signal(SIGTERM);
  stop_result r;
  r.status = s.proc->wait(30s);
  r.us = micros(steady::now() - t0);
  s.drain->finish();
  return r;
}

// Warning and error lines of a server's output, stdout and stderr
// (util/log: "TIME LEVEL message"), the first few kept verbatim.
struct log_findings {
  std::size_t lines = 0;
  std::size_t warnings = 0;
  std::size_t errors = 0;
  std::vector<std::string> samples;
};

log_findings scan_log(const server_proc& srv) {
  log_findings f;
  std::vector<std::string> all = srv.drain->lines();
  std::ifstream in(srv.log);
  for (std::string line; std::getline(in, line);) all.push_back(line);
  f.lines = all.size();
  for (const auto& line : all) {
    const auto sp = line.find(' ');
    const auto level = sp == std::string::npos ? std::string() : line.substr(sp + 1, line.find(' ', sp + 1) - sp - 1);
    const bool err = level == "error" || level == "critical";
    const bool warn = level == "warning";
    if (!err && !warn) continue;
    (err ? f.errors : f.warnings)++;
    if (f.samples.size() < 5) f.samples.push_back(line.substr(0, 300));
  }
  return f;
}

// ---- the client: one io_context, a connection per session, one SSE stream ----

struct turn {
  std::size_t session = 0;
  int number = 0;  // 1-based
  steady::time_point sent, admitted, finished;
  unsigned status = 0;  // of the POST
  std::string outcome;  // of execution.finished
  bool done = false;
  // From the model's recorded requests that carry this turn's prompt.
  int model_requests = 0;
  std::int64_t model_received_us = 0;   // the first one
  std::int64_t model_us = 0;            // Σ completed_us − received_us
  std::int64_t model_completed_us = 0;  // the last one
};

struct session_state {
  std::string id;
  std::unique_ptr<tcp::socket> sock;
  beast::flat_buffer buf;
  std::vector<std::pair<steady::time_point, std::string>> finished;  // execution.finished seen
  asio::steady_timer* waiter = nullptr;
};

std::string prompt(const std::string& session, int k) {
  return "Reply with exactly: " + session + " turn " + std::to_string(k);
}

class scenario {
 public:
  scenario(asio::io_context& ioc, unsigned short port, std::string token, std::size_t sessions, int turns)
      : ioc_(ioc),
        endpoint_(asio::ip::make_address_v4("127.0.0.1"), port),
        bearer_("Bearer " + std::move(token)),
        sessions_(sessions),
        turns_per_session_(turns),
        turns_(sessions * static_cast<std::size_t>(turns)) {}
  ~scenario() {
    if (!closing_) close();
  }
  scenario(const scenario&) = delete;
  scenario& operator=(const scenario&) = delete;

  // The global event stream, open before any session exists.
  bool open_events(std::chrono::seconds timeout) {
    asio::co_spawn(ioc_, watch_events(this), asio::detached);
    return run_until([this] { return events_ready_ || events_failed_; }, steady::now() + timeout) && events_ready_;
  }

  bool create_sessions(std::chrono::seconds timeout) {
    for (std::size_t i = 0; i < sessions_.size(); ++i) asio::co_spawn(ioc_, create(this, i), asio::detached);
    const bool ok =
        run_until([this] { return created_ + failed_creates_ == sessions_.size(); }, steady::now() + timeout);
    return ok && failed_creates_ == 0;
  }

  // Every session runs its turns, all at once. Returns false on the deadline.
  bool run_turns(std::chrono::seconds timeout) {
    deadline_ = steady::now() + timeout;
    active_ = sessions_.size();
    started_ = steady::now();
    for (std::size_t i = 0; i < sessions_.size(); ++i) asio::co_spawn(ioc_, drive(this, i), asio::detached);
    return run_until([this] { return active_ == 0; }, deadline_ + 5s);
  }

  // Closes every socket and lets the coroutines end.
  void close() {
    closing_ = true;
    for (auto& s : sessions_) {
      if (s.waiter != nullptr) s.waiter->cancel();
      if (s.sock) s.sock->close();
    }
    if (events_) events_->close();
    const auto until = steady::now() + 5s;
    while (live_ > 0 && steady::now() < until) {
      if (ioc_.stopped()) ioc_.restart();
      ioc_.run_one_for(50ms);
    }
    for (auto& s : sessions_) s.sock.reset();
    events_.reset();
  }

  std::vector<turn>& turns() { return turns_; }
  const std::vector<session_state>& sessions() const { return sessions_; }
  steady::time_point started() const { return started_; }
  const std::map<std::string, std::size_t>& event_counts() const { return event_counts_; }
  const std::vector<std::string>& errors() const { return errors_; }
  std::size_t error_count() const { return error_count_; }
  const std::map<unsigned, std::size_t>& statuses() const { return statuses_; }
  std::uint64_t event_bytes() const { return event_bytes_; }

 private:
  template <class Pred>
  bool run_until(Pred done, steady::time_point deadline) {
    while (!done()) {
      if (steady::now() >= deadline) return false;
      if (ioc_.stopped()) ioc_.restart();
      ioc_.run_one_for(50ms);
    }
    return true;
  }

  void note(std::string what) {
    ++error_count_;
    if (errors_.size() < 10) errors_.push_back(std::move(what));
  }

  // One request on the session's keep-alive connection (opened on demand).
  static asio::awaitable<std::optional<http::response<http::string_body>>> call(scenario* self, std::size_t si,
                                                                                http::verb verb, std::string target,
                                                                                std::string body) {
    auto& s = self->sessions_[si];
    if (!s.sock || !s.sock->is_open()) {
      s.sock = std::make_unique<tcp::socket>(self->ioc_);
      s.buf.clear();
      auto [ec] = co_await s.sock->async_connect(self->endpoint_, use_tuple);
      if (ec) {
        self->note("connect: " + ec.message());
        co_return std::nullopt;
      }
      s.sock->set_option(tcp::no_delay(true));
    }
    http::request<http::string_body> req(verb, target, 11);
    req.set(http::field::host, "127.0.0.1");
    req.set(http::field::authorization, self->bearer_);
    req.set(http::field::content_type, "application/json");
    req.keep_alive(true);
    req.body() = std::move(body);
    req.prepare_payload();
    auto [wec, wn] = co_await http::async_write(*s.sock, req, use_tuple);
    if (wec) {
      if (!self->closing_) self->note(std::string(req.method_string()) + " " + target + ": write: " + wec.message());
      s.sock->close();
      co_return std::nullopt;
    }
    http::response<http::string_body> res;
    auto [rec, rn] = co_await http::async_read(*s.sock, s.buf, res, use_tuple);
    if (rec) {
      if (!self->closing_) self->note(std::string(req.method_string()) + " " + target + ": read: " + rec.message());
      s.sock->close();
      co_return std::nullopt;
    }
    self->statuses_[res.result_int()]++;
    if (!res.keep_alive()) s.sock->close();
    co_return res;
  }

  static asio::awaitable<void> create(scenario* self, std::size_t si) {
    ++self->live_;
    auto res = co_await call(self, si, http::verb::post, "/v1/sessions", "{}");
    bool ok = false;
    if (res && res->result_int() == 201) {
      boost::system::error_code ec;
      const auto v = json::parse(res->body(), ec);
      const auto* session = !ec && v.is_object() ? v.as_object().if_contains("session") : nullptr;
      if (session != nullptr && session->is_object()) {
        if (const auto* id = session->as_object().if_contains("id"); id && id->is_string()) {
          self->sessions_[si].id = std::string(id->as_string());
          self->index_[self->sessions_[si].id] = si;
          ok = true;
        }
      }
    } else if (res) {
      self->note("POST /v1/sessions: " + std::to_string(res->result_int()) + " " + res->body().substr(0, 200));
    }
    (ok ? self->created_ : self->failed_creates_)++;
    --self->live_;
  }

  static asio::awaitable<void> drive(scenario* self, std::size_t si) {
    ++self->live_;
    asio::steady_timer timer(self->ioc_);
    const std::string target = "/v1/sessions/" + self->sessions_[si].id + "/inputs";
    for (int k = 1; k <= self->turns_per_session_ && !self->closing_; ++k) {
      auto& t = self->turns_[si * static_cast<std::size_t>(self->turns_per_session_) + static_cast<std::size_t>(k - 1)];
      t.session = si;
      t.number = k;
      json::object body;
      body["text"] = prompt(self->sessions_[si].id, k);
      t.sent = steady::now();
      auto res = co_await call(self, si, http::verb::post, target, json::serialize(body));
      t.admitted = steady::now();
      if (!res) break;
      t.status = res->result_int();
      if (t.status != 202) {
        self->note("POST " + target + ": " + std::to_string(t.status) + " " + res->body().substr(0, 200));
        break;
      }
      auto& s = self->sessions_[si];
      while (s.finished.size() < static_cast<std::size_t>(k) && !self->closing_ && !self->events_closed_ &&
             steady::now() < self->deadline_) {
        timer.expires_at(self->deadline_);
        s.waiter = &timer;
        co_await timer.async_wait(use_tuple);
        s.waiter = nullptr;
      }
      if (s.finished.size() < static_cast<std::size_t>(k)) {
        if (!self->closing_) self->note("session " + s.id + " turn " + std::to_string(k) + ": no execution.finished");
        break;
      }
      t.finished = s.finished[static_cast<std::size_t>(k - 1)].first;
      t.outcome = s.finished[static_cast<std::size_t>(k - 1)].second;
      t.done = true;
      if (t.outcome != "succeeded") self->note("session " + s.id + " turn " + std::to_string(k) + ": " + t.outcome);
    }
    --self->active_;
    --self->live_;
  }

  void wake_all() {
    for (auto& s : sessions_)
      if (s.waiter != nullptr) s.waiter->cancel();
  }

  void on_frame(std::string_view frame, steady::time_point at) {
    std::string_view type;
    std::string_view data;
    while (!frame.empty()) {
      const auto nl = frame.find('\n');
      const auto line = frame.substr(0, nl);
      frame = nl == std::string_view::npos ? std::string_view() : frame.substr(nl + 1);
      if (line.starts_with("event: "))
        type = line.substr(7);
      else if (line.starts_with("data: "))
        data = line.substr(6);
    }
    if (type.empty()) return;  // a heartbeat
    event_counts_[std::string(type)]++;
    if (type == "error") {
      note("event stream error: " + std::string(data));
      return;
    }
    if (type != "execution.finished") return;
    boost::system::error_code ec;
    const auto v = json::parse(data, ec);
    if (ec || !v.is_object()) {
      note("unparsable execution.finished: " + std::string(data.substr(0, 200)));
      return;
    }
    const auto* sid = v.as_object().if_contains("session_id");
    if (sid == nullptr || !sid->is_string()) return;
    auto it = index_.find(std::string(sid->as_string()));
    if (it == index_.end()) return;
    std::string outcome = "?";
    if (const auto* d = v.as_object().if_contains("data"); d && d->is_object())
      if (const auto* o = d->as_object().if_contains("outcome"); o && o->is_string()) outcome = o->as_string();
    auto& s = sessions_[it->second];
    s.finished.emplace_back(at, std::move(outcome));
    if (s.waiter != nullptr) s.waiter->cancel();
  }

  static asio::awaitable<void> watch_events(scenario* self) {
    ++self->live_;
    self->events_ = std::make_unique<tcp::socket>(self->ioc_);
    auto& sock = *self->events_;
    std::string pending;
    bool head_done = false;
    if (auto [ec] = co_await sock.async_connect(self->endpoint_, use_tuple); ec) {
      self->note("events: connect: " + ec.message());
      self->events_failed_ = true;
      --self->live_;
      co_return;
    }
    const std::string req =
        "GET /v1/events HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\nAuthorization: " + self->bearer_ +
        "\r\n\r\n";
    if (auto [ec, n] = co_await asio::async_write(sock, asio::buffer(req), use_tuple); ec) {
      self->note("events: write: " + ec.message());
      self->events_failed_ = true;
      --self->live_;
      co_return;
    }
    std::vector<char> buf(1 << 16);
    for (;;) {
      auto [ec, n] = co_await sock.async_read_some(asio::buffer(buf), use_tuple);
      const auto at = steady::now();
      if (ec) {
        if (!self->closing_) self->note("events stream ended: " + ec.message());
        self->events_closed_ = true;
        self->events_failed_ = !head_done;
        self->wake_all();
        break;
      }
      self->event_bytes_ += n;
      pending.append(buf.data(), n);
      std::size_t pos = 0;
      if (!head_done) {
        const auto end = pending.find("\r\n\r\n");
        if (end == std::string::npos) continue;
        if (!pending.starts_with("HTTP/1.1 200")) {
          self->note("events: " + pending.substr(0, pending.find("\r\n")));
          self->events_failed_ = true;
          break;
        }
        head_done = true;
        self->events_ready_ = true;
        pos = end + 4;
      }
      for (;;) {
        const auto end = pending.find("\n\n", pos);
        if (end == std::string::npos) break;
        self->on_frame(std::string_view(pending).substr(pos, end - pos), at);
        pos = end + 2;
      }
      pending.erase(0, pos);
    }
    --self->live_;
  }

  asio::io_context& ioc_;
  tcp::endpoint endpoint_;
  std::string bearer_;
  std::vector<session_state> sessions_;
  int turns_per_session_;
  std::vector<turn> turns_;
  std::unordered_map<std::string, std::size_t> index_;
  std::unique_ptr<tcp::socket> events_;
  bool events_ready_ = false;
  bool events_failed_ = false;
  bool events_closed_ = false;
  bool closing_ = false;
  std::size_t created_ = 0;
  std::size_t failed_creates_ = 0;
  std::size_t active_ = 0;
  std::size_t live_ = 0;
  steady::time_point deadline_, started_;
  std::map<std::string, std::size_t> event_counts_;
  std::map<unsigned, std::size_t> statuses_;
  std::uint64_t event_bytes_ = 0;
  std::vector<std::string> errors_;
  std::size_t error_count_ = 0;
};

// ---- the model's side: recorded requests matched to turns ----

struct model_match {
  std::size_t requests = 0;    // recorded in this scenario
  std::size_t unmatched = 0;   // carrying no prompt of ours
  std::size_t incomplete = 0;  // no completed_us
};

// The text of the last user message that holds a "Reply with exactly:" line.
std::string marker_of(const json::value& body) {
  const auto* msgs = body.is_object() ? body.as_object().if_contains("messages") : nullptr;
  if (msgs == nullptr || !msgs->is_array()) return "";
  const auto& arr = msgs->as_array();
  for (auto it = arr.rbegin(); it != arr.rend(); ++it) {
    if (!it->is_object()) continue;
    const auto& m = it->as_object();
    const auto* role = m.if_contains("role");
    if (role == nullptr || !role->is_string() || role->as_string() != "user") continue;
    std::string text;
    if (const auto* c = m.if_contains("content")) {
      if (c->is_string()) {
        text = c->as_string();
      } else if (c->is_array()) {
        for (const auto& part : c->as_array())
          if (part.is_object())
            if (const auto* t = part.as_object().if_contains("text"); t && t->is_string()) text += t->as_string();
      }
    }
    constexpr std::string_view key = "Reply with exactly: ";
    const auto at = text.rfind(key);
    if (at == std::string::npos) continue;
    auto line = text.substr(at + key.size());
    return line.substr(0, line.find('\n'));
  }
  return "";
}

// Fetches the model's requests recorded after `*mark` and fills the turns'
// model fields; `*mark` moves to the last seq seen.
model_match match_model_requests(unsigned short mock_port, std::size_t* mark, scenario& sc) {
  model_match m;
  std::unordered_map<std::string, std::size_t> by_marker;
  auto& turns = sc.turns();
  for (std::size_t i = 0; i < turns.size(); ++i)
    if (turns[i].number > 0)
      by_marker[sc.sessions()[turns[i].session].id + " turn " + std::to_string(turns[i].number)] = i;
  auto r = e2e::request(mock_port, "GET", "/_mock/requests?after=" + std::to_string(*mark));
  if (r.status != 200 || !r.json.is_object()) throw std::runtime_error("GET /_mock/requests: " + r.body.substr(0, 200));
  for (const auto& rec : r.json.at("requests").as_array()) {
    const auto& o = rec.as_object();
    ++m.requests;
    *mark = std::max<std::size_t>(*mark, static_cast<std::size_t>(o.at("seq").to_number<std::int64_t>()));
    const auto it = by_marker.find(marker_of(o.at("body")));
    if (it == by_marker.end()) {
      ++m.unmatched;
      continue;
    }
    auto& t = turns[it->second];
    const auto received = o.at("received_us").to_number<std::int64_t>();
    const auto* completed = o.if_contains("completed_us");
    if (completed == nullptr) {
      ++m.incomplete;
      continue;
    }
    if (t.model_requests == 0 || received < t.model_received_us) t.model_received_us = received;
    t.model_us += completed->to_number<std::int64_t>() - received;
    t.model_completed_us = std::max(t.model_completed_us, completed->to_number<std::int64_t>());
    ++t.model_requests;
  }
  return m;
}

// ---- the server's own counters (GET /metrics) ----

// Every sample of the Prometheus text but histogram buckets, by its full
// name with labels.
std::map<std::string, double> server_metrics(unsigned short port, const std::string& token) {
  std::map<std::string, double> out;
  try {
    auto r = e2e::request(port, "GET", "/metrics", "", {{"Authorization", "Bearer " + token}});
    if (r.status != 200) return out;
    std::istringstream in(r.body);
    for (std::string line; std::getline(in, line);) {
      if (line.empty() || line[0] == '#' || line.find("_bucket") != std::string::npos) continue;
      const auto sp = line.rfind(' ');
      if (sp == std::string::npos) continue;
      out[line.substr(0, sp)] = std::strtod(line.c_str() + sp + 1, nullptr);
    }
  } catch (const std::exception&) {
  }
  return out;
}

double metric(const std::map<std::string, double>& m, const std::string& name) {
  auto it = m.find(name);
  return it == m.end() ? 0 : it->second;
}

// ---- scenarios ----

struct run_result {
  std::string name;
  std::size_t sessions = 0;
  int turns_per_session = 0;
  std::size_t turns = 0;
  std::size_t turns_ok = 0;  // execution.finished with outcome succeeded
  double seconds = 0;        // first POST → last execution.finished
  double turns_per_s = 0;
  stats latency;    // POST sent → execution.finished received
  stats admission;  // POST sent → 202 received
  stats scheduler;  // 202 received → the model received the turn's request
  stats dispatch;   // POST sent → the model received the turn's request
  stats model;      // the model's own time for the turn
  stats overhead;   // latency − model
  stats finish;     // the model's response complete → execution.finished received
  double idle_rss_mb = 0;
  double rss_end_mb = 0;
  double peak_rss_mb = 0;
  double server_cpu_s = 0;
  double mock_cpu_s = 0;
  double client_cpu_s = 0;
  std::vector<thread_cpu> threads;
  model_match model_requests;
  std::size_t turns_without_model_request = 0;
  std::size_t turns_with_retries = 0;
  std::map<std::string, std::size_t> event_counts;
  std::map<unsigned, std::size_t> statuses;
  std::map<std::string, double> metrics;  // the server's, after the turns
  std::uint64_t event_bytes = 0;
  std::size_t error_count = 0;
  std::vector<std::string> errors;
  stop_result stop;
  log_findings log;
  bool completed = false;
  std::string load_before;
};

struct environment {
  fs::path dir;
  fs::path config;
  unsigned short mock_port = 0;
  pid_t mock_pid = 0;
  std::size_t mock_mark = 0;
  int servers = 0;
  asio::io_context ioc{1};
};

server_proc fresh_server(environment& env) {
  const int n = env.servers++;
  return start_server(env.dir / ("data-" + std::to_string(n)), env.config,
                      env.dir / ("serve-" + std::to_string(n) + ".log"));
}

run_result run_scenario(environment& env, const std::string& name, std::size_t sessions, int turns, bool measure_idle) {
  run_result out;
  out.name = name;
  out.sessions = sessions;
  out.turns_per_session = turns;
  out.load_before = load_average();
  auto srv = fresh_server(env);
  const pid_t pid = srv.proc->pid();
  if (measure_idle) {
    std::this_thread::sleep_for(1s);
    out.idle_rss_mb = status_mb(pid, "VmRSS:").value_or(0);
  }
  {
    scenario sc(env.ioc, srv.port, srv.token, sessions, turns);
    if (!sc.open_events(10s)) throw std::runtime_error(name + ": GET /v1/events did not open");
    if (!sc.create_sessions(60s)) {
      for (const auto& e : sc.errors()) std::fprintf(stderr, "  %s\n", e.c_str());
      throw std::runtime_error(name + ": creating sessions failed");
    }
    const double total_turns = static_cast<double>(sessions) * turns;
    const auto timeout = std::chrono::seconds(60 + static_cast<int>(total_turns * 0.05));
    const auto threads_before = threads_of(pid);
    const double server_cpu0 = process_cpu_s(pid);
    const double mock_cpu0 = process_cpu_s(env.mock_pid);
    const double client_cpu0 = self_cpu_s();
    const auto metrics_before = server_metrics(srv.port, srv.token);
    out.completed = sc.run_turns(timeout);
    out.server_cpu_s = process_cpu_s(pid) - server_cpu0;
    out.mock_cpu_s = process_cpu_s(env.mock_pid) - mock_cpu0;
    out.client_cpu_s = self_cpu_s() - client_cpu0;
    out.threads = busiest(threads_before, threads_of(pid));
    out.rss_end_mb = status_mb(pid, "VmRSS:").value_or(0);
    out.peak_rss_mb = status_mb(pid, "VmHWM:").value_or(0);
    out.metrics = server_metrics(srv.port, srv.token);
    for (auto& [k, v] : out.metrics)  // counters over the turns only
      if (k.ends_with("_count") || k.ends_with("_sum") || k.find("_total") != std::string::npos)
        v -= metric(metrics_before, k);
    sc.close();

    out.model_requests = match_model_requests(env.mock_port, &env.mock_mark, sc);
    std::vector<double> lat, adm, sched, disp, model, over, fin;
    steady::time_point last_finish = sc.started();
    for (const auto& t : sc.turns()) {
      if (t.number == 0) continue;
      ++out.turns;
      if (t.status == 202) {
        adm.push_back(micros(t.admitted - t.sent));
        if (t.model_requests > 0) {
          sched.push_back(static_cast<double>(t.model_received_us - mono_us(t.admitted)));
          disp.push_back(static_cast<double>(t.model_received_us - mono_us(t.sent)));
        }
      }
      if (t.model_requests == 0) ++out.turns_without_model_request;
      if (t.model_requests > 1) ++out.turns_with_retries;
      if (!t.done) continue;
      if (t.outcome == "succeeded") ++out.turns_ok;
      last_finish = std::max(last_finish, t.finished);
      const double l = micros(t.finished - t.sent);
      lat.push_back(l);
      if (t.model_requests > 0) {
        model.push_back(static_cast<double>(t.model_us));
        over.push_back(l - static_cast<double>(t.model_us));
        fin.push_back(static_cast<double>(mono_us(t.finished) - t.model_completed_us));
      }
    }
    out.seconds = std::chrono::duration<double>(last_finish - sc.started()).count();
    out.turns_per_s = out.seconds > 0 ? static_cast<double>(out.turns_ok) / out.seconds : 0;
    out.latency = summarize(std::move(lat));
    out.admission = summarize(std::move(adm));
    out.scheduler = summarize(std::move(sched));
    out.dispatch = summarize(std::move(disp));
    out.model = summarize(std::move(model));
    out.overhead = summarize(std::move(over));
    out.finish = summarize(std::move(fin));
    out.event_counts = sc.event_counts();
    out.statuses = sc.statuses();
    out.event_bytes = sc.event_bytes();
    out.error_count = sc.error_count();
    out.errors = sc.errors();
  }
  out.stop = stop_server(srv);
  out.log = scan_log(srv);
  return out;
}

struct startup_result {
  std::vector<double> listening_us, health_us, stop_us;
  std::vector<int> exit_status;
};

startup_result run_startups(environment& env, int runs) {
  startup_result r;
  for (int i = 0; i < runs; ++i) {
    auto srv = fresh_server(env);
    r.listening_us.push_back(srv.to_listening_us);
    r.health_us.push_back(srv.to_health_us);
    const auto st = stop_server(srv);
    r.stop_us.push_back(st.us);
    r.exit_status.push_back(st.status);
  }
  return r;
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[(v.size() - 1) / 2];
}
double maximum(const std::vector<double>& v) { return v.empty() ? 0 : *std::max_element(v.begin(), v.end()); }

// ---- output ----

json::object to_json(const run_result& r) {
  json::array threads;
  for (std::size_t i = 0; i < std::min<std::size_t>(r.threads.size(), 12); ++i)
    threads.push_back({{"tid", r.threads[i].tid}, {"name", r.threads[i].name}, {"cpu_s", r.threads[i].seconds}});
  json::object events;
  for (const auto& [k, v] : r.event_counts) events[k] = v;
  json::object statuses;
  for (const auto& [k, v] : r.statuses) statuses[std::to_string(k)] = v;
  json::array errors;
  for (const auto& e : r.errors) errors.push_back(json::string(e));
  json::array log_samples;
  for (const auto& e : r.log.samples) log_samples.push_back(json::string(e));
  json::object metrics;
  for (const auto& [k, v] : r.metrics) metrics[k] = v;
  json::object o{{"name", r.name},
                 {"sessions", r.sessions},
                 {"turns_per_session", r.turns_per_session},
                 {"turns", r.turns},
                 {"turns_succeeded", r.turns_ok},
                 {"completed_in_time", r.completed},
                 {"seconds", r.seconds},
                 {"turns_per_s", r.turns_per_s},
                 {"turn_latency", to_json(r.latency)},
                 {"admission_latency", to_json(r.admission)},
                 {"scheduler_latency", to_json(r.scheduler)},
                 {"dispatch_latency", to_json(r.dispatch)},
                 {"model_time", to_json(r.model)},
                 {"overhead", to_json(r.overhead)},
                 {"finish_latency", to_json(r.finish)},
                 {"server_rss_end_mb", r.rss_end_mb},
                 {"server_peak_rss_mb", r.peak_rss_mb},
                 {"server_cpu_s", r.server_cpu_s},
                 {"mock_cpu_s", r.mock_cpu_s},
                 {"client_cpu_s", r.client_cpu_s},
                 {"server_threads_busiest", std::move(threads)},
                 {"model_requests",
                  {{"recorded", r.model_requests.requests},
                   {"unmatched", r.model_requests.unmatched},
                   {"incomplete", r.model_requests.incomplete},
                   {"turns_without_request", r.turns_without_model_request},
                   {"turns_with_several", r.turns_with_retries}}},
                 {"events_seen", std::move(events)},
                 {"event_stream_bytes", r.event_bytes},
                 {"http_statuses", std::move(statuses)},
                 {"server_metrics_during_turns", std::move(metrics)},
                 {"client_errors", r.error_count},
                 {"client_error_samples", std::move(errors)},
                 {"server_log",
                  {{"lines", r.log.lines},
                   {"warnings", r.log.warnings},
                   {"errors", r.log.errors},
                   {"samples", std::move(log_samples)}}},
                 {"shutdown", {{"exit_status", r.stop.status}, {"us", whole(r.stop.us)}}},
                 {"load_average_before", r.load_before}};
  if (r.idle_rss_mb > 0) o["idle_rss_mb"] = r.idle_rss_mb;
  return o;
}

void print_row(const run_result& r) {
  std::printf("%-22s %6zu %6zu %8.2f %8.0f %8.1f %8.1f %8.1f %8.1f %8.2f %8.2f %8.2f %8.1f %8.1f %8.1f\n",
              r.name.c_str(), r.turns, r.turns_ok, r.seconds, r.turns_per_s, ms(r.latency.p50), ms(r.latency.p95),
              ms(r.latency.p99), ms(r.model.p50), ms(r.overhead.p50), ms(r.overhead.p95), ms(r.overhead.p99),
              ms(r.scheduler.p50), ms(r.scheduler.p99), r.peak_rss_mb);
  std::fflush(stdout);
}

void print_details(const run_result& r) {
  std::printf(
      "  %s: p50/p99 ms: POST → 202 %.2f/%.2f, 202 → model %.2f/%.2f, model %.2f/%.2f,"
      " model done → execution.finished %.2f/%.2f\n",
      r.name.c_str(), ms(r.admission.p50), ms(r.admission.p99), ms(r.scheduler.p50), ms(r.scheduler.p99),
      ms(r.model.p50), ms(r.model.p99), ms(r.finish.p50), ms(r.finish.p99));
  std::printf(
      "  %s: CPU s: server %.2f, mock %.2f, client %.2f; model requests %zu (unmatched %zu);"
      " shutdown %.0f ms, exit %d\n",
      r.name.c_str(), r.server_cpu_s, r.mock_cpu_s, r.client_cpu_s, r.model_requests.requests,
      r.model_requests.unmatched, ms(r.stop.us), r.stop.status);
  const double commits = metric(r.metrics, "tether_store_commit_seconds_count");
  if (commits > 0 && r.turns > 0)
    std::printf(
        "  %s: store group commits %.0f (%.1f per turn), mean commit %.2f ms; mean model step %.2f ms\n",
        r.name.c_str(), commits, commits / static_cast<double>(r.turns),
        1000 * metric(r.metrics, "tether_store_commit_seconds_sum") / commits,
        metric(r.metrics, "tether_step_seconds_count") > 0
            ? 1000 * metric(r.metrics, "tether_step_seconds_sum") / metric(r.metrics, "tether_step_seconds_count")
            : 0.0);
  std::string busy;
  for (std::size_t i = 0; i < std::min<std::size_t>(r.threads.size(), 6); ++i)
    if (r.threads[i].seconds > 0.005)
      busy += " " + r.threads[i].name + "/" + std::to_string(r.threads[i].tid) + "=" +
              std::to_string(static_cast<int>(r.threads[i].seconds * 1000)) + "ms";
  if (!busy.empty()) std::printf("  %s: busiest server threads (CPU):%s\n", r.name.c_str(), busy.c_str());
  if (r.error_count > 0 || r.log.errors > 0 || r.log.warnings > 0 || !r.completed)
    std::printf("  %s: %s%zu client errors, server log %zu errors / %zu warnings\n", r.name.c_str(),
                r.completed ? "" : "DID NOT FINISH IN TIME; ", r.error_count, r.log.errors, r.log.warnings);
  for (const auto& e : r.errors) std::printf("    client: %s\n", e.c_str());
  for (const auto& e : r.log.samples) std::printf("    server: %s\n", e.c_str());
}

}  // namespace

int main(int argc, char** argv) {
  options opt;
  if (!parse_args(argc, argv, opt)) {
    usage();
    return 2;
  }

  // 1,000+ sockets here, and as many in the server (it inherits the limit).
  rlimit nofile{};
  ::getrlimit(RLIMIT_NOFILE, &nofile);
  nofile.rlim_cur = nofile.rlim_max;
  ::setrlimit(RLIMIT_NOFILE, &nofile);
  ::getrlimit(RLIMIT_NOFILE, &nofile);
  if (nofile.rlim_cur < 2 * opt.sessions_large + 64)
    std::fprintf(stderr, "tether_api_bench: warning: RLIMIT_NOFILE is %llu, %zu sessions need about %zu\n",
                 static_cast<unsigned long long>(nofile.rlim_cur), opt.sessions_large, 2 * opt.sessions_large + 64);

  std::error_code ec;
  const fs::path base = opt.dir.empty() ? fs::temp_directory_path() : fs::path(opt.dir);
  fs::create_directories(base, ec);
  std::string tmpl = (base / "tether-api-bench-XXXXXX").string();
  if (::mkdtemp(tmpl.data()) == nullptr) {
    std::perror("mkdtemp");
    return 1;
  }
  environment env;
  env.dir = tmpl;
  const std::string load_start = load_average();

  int rc = 0;
  json::object doc;
  try {
    e2e::child mock({e2e::tether_binary(), "mock-llm", "--listen", "127.0.0.1:0"}, env.dir / "mock.log");
    const auto line = mock.wait_line("mock-llm listening on ", 20s);
    env.mock_port = static_cast<unsigned short>(std::stoi(line.substr(line.rfind(':') + 1)));
    env.mock_pid = mock.pid();
    env.config = env.dir / "tether.toml";
    {
      std::ofstream cfg(env.config);
      cfg << "[profiles.default]\nprovider = \"openai-chat\"\nbase_url = \"http://127.0.0.1:" << env.mock_port
          << "/v1\"\nmodel = \"scripted\"\n";
    }

    std::printf("tether_api_bench: %s vs mock-llm, %u CPUs, load average %s, RLIMIT_NOFILE %llu%s\n  in %s\n\n",
                e2e::tether_binary().c_str(), std::thread::hardware_concurrency(), load_start.c_str(),
                static_cast<unsigned long long>(nofile.rlim_cur), opt.quick ? " [quick]" : "", env.dir.c_str());

    // 1. start-up
    const auto st = run_startups(env, opt.startup_runs);
    std::printf("start-up, %d runs on fresh data dirs     median      max\n", opt.startup_runs);
    std::printf("  fork → \"listening on\"              %8.1f ms %6.1f ms\n", ms(median(st.listening_us)),
                ms(maximum(st.listening_us)));
    std::printf("  fork → first 200 GET /v1/health      %8.1f ms %6.1f ms\n", ms(median(st.health_us)),
                ms(maximum(st.health_us)));
    std::printf("  SIGTERM → exit (idle)                %8.1f ms %6.1f ms\n\n", ms(median(st.stop_us)),
                ms(maximum(st.stop_us)));
    std::fflush(stdout);

    // 2 + 3. idle RSS, then one session's turns on the same fresh server
    std::printf("%-22s %6s %6s %8s %8s %8s %8s %8s %8s %8s %8s %8s %8s %8s %8s\n", "scenario (ms)", "turns", "ok",
                "seconds", "turns/s", "lat p50", "lat p95", "lat p99", "model50", "ovh p50", "ovh p95", "ovh p99",
                "sch p50", "sch p99", "peakMB");
    std::printf("%s\n", std::string(157, '-').c_str());
    std::vector<run_result> runs;
    runs.push_back(run_scenario(env, "1 session x " + std::to_string(opt.latency_turns), 1, opt.latency_turns, true));
    print_row(runs.back());
    // 4. concurrent sessions, a fresh server each
    for (const auto n : {opt.sessions_small, opt.sessions_large}) {
      runs.push_back(
          run_scenario(env, std::to_string(n) + " sessions x " + std::to_string(opt.turns), n, opt.turns, false));
      print_row(runs.back());
    }
    std::printf("\nidle RSS one second after start: %.1f MB\n", runs.front().idle_rss_mb);
    for (const auto& r : runs) print_details(r);

    // Targets (issue 4).
    json::array targets;
    auto target = [&](const std::string& name, const std::string& what, double limit, double measured, bool below) {
      const bool met = below ? measured < limit : measured > limit;
      std::printf("target: %-52s %s %8.1f: %10.1f  %s\n", what.c_str(), below ? "<" : ">", limit, measured,
                  met ? "met" : "NOT met");
      targets.push_back({{"name", name}, {"target", limit}, {"measured", measured}, {"below", below}, {"met", met}});
    };
    std::printf("\n");
    const auto& one = runs[0];
    const auto& small = runs[1];
    const auto& large = runs[2];
    const std::string nl = std::to_string(large.sessions);
    target("single_session_overhead_p50_ms", "overhead per turn p50, 1 session (ms)", 5, ms(one.overhead.p50), true);
    target("single_session_overhead_p95_ms", "overhead per turn p95, 1 session (ms)", 5, ms(one.overhead.p95), true);
    target("turns_per_s_at_" + std::to_string(small.sessions),
           "turns/s at " + std::to_string(small.sessions) + " sessions", 500, small.turns_per_s, false);
    target("scheduler_p99_ms_at_" + nl, "scheduler latency p99 at " + nl + " sessions (ms)", 250,
           ms(large.scheduler.p99), true);
    target("turn_latency_p99_ms_at_" + nl, "turn latency p99 at " + nl + " sessions (ms)", 250, ms(large.latency.p99),
           true);
    target("peak_rss_mb_at_" + nl, "server peak RSS at " + nl + " sessions (MB)", 300, large.peak_rss_mb, true);

    json::array scenarios;
    for (const auto& r : runs) scenarios.push_back(to_json(r));
    json::array exits;
    for (int s : st.exit_status) exits.push_back(s);
    doc = {{"benchmark", "api"},
           {"time", now_iso8601()},
           {"quick", opt.quick},
           {"hardware_concurrency", std::thread::hardware_concurrency()},
           {"load_average_start", load_start},
           {"load_average_end", load_average()},
           {"rlimit_nofile", static_cast<std::uint64_t>(nofile.rlim_cur)},
           {"binary", e2e::tether_binary()},
           {"startup",
            {{"runs", opt.startup_runs},
             {"to_listening_median_us", whole(median(st.listening_us))},
             {"to_listening_max_us", whole(maximum(st.listening_us))},
             {"to_health_median_us", whole(median(st.health_us))},
             {"to_health_max_us", whole(maximum(st.health_us))},
             {"sigterm_to_exit_median_us", whole(median(st.stop_us))},
             {"exit_status", std::move(exits)}}},
           {"idle_rss_mb", one.idle_rss_mb},
           {"scenarios", std::move(scenarios)},
           {"targets", std::move(targets)}};
    mock.signal(SIGTERM);
    mock.wait(10s);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tether_api_bench: %s (logs kept in %s)\n", e.what(), env.dir.c_str());
    return 1;
  }

  if (!opt.out.empty()) {
    const fs::path out = opt.out;
    if (out.has_parent_path()) fs::create_directories(out.parent_path(), ec);
    std::ofstream f(out);
    f << json::serialize(doc) << "\n";
    if (!f) {
      std::fprintf(stderr, "tether_api_bench: cannot write %s\n", opt.out.c_str());
      rc = 1;
    } else {
      std::printf("\nwrote %s\n", opt.out.c_str());
    }
  }
  if (!opt.keep)
    fs::remove_all(env.dir, ec);
  else
    std::printf("kept %s\n", env.dir.c_str());
  return rc;
}
