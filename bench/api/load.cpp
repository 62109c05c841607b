#include "api/load.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <thread>
#include <unordered_map>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/connect.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>
#include <boost/json.hpp>

#include "http/sse_parser.h"

namespace tether::bench::api {

namespace beast = boost::beast;
namespace http = beast::http;
namespace json = boost::json;
using tcp = asio::ip::tcp;
using namespace std::chrono_literals;

namespace {

constexpr auto use_tuple = asio::as_tuple(asio::use_awaitable);

struct session_state {
  std::string id;
  std::unique_ptr<tcp::socket> sock;
  beast::flat_buffer buf;
  std::vector<std::pair<steady::time_point, std::string>> finished;  // execution.finished seen
  asio::steady_timer* waiter = nullptr;
};

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

  void on_event(const ::tether::http::sse_event& ev, steady::time_point at) {
    const std::string_view type = ev.event;
    const std::string_view data = ev.data;
    if (type.empty()) return;  // not one of the API's typed events
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
    std::string pending;  // the response head until it is complete
    ::tether::http::sse_parser sse;
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
      // The body is the event stream itself (Connection: close, no chunking).
      for (const auto& ev : sse.feed(std::string_view(pending).substr(pos))) self->on_event(ev, at);
      pending.clear();
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

server_proc fresh_server(environment& env) {
  const int n = env.servers++;
  return start_server(env.dir / ("data-" + std::to_string(n)), env.config,
                      env.dir / ("serve-" + std::to_string(n) + ".log"));
}

}  // namespace

run_result run_scenario(environment& env, const std::string& name, std::size_t sessions, int turns, idle_rss idle) {
  run_result out;
  out.name = name;
  out.sessions = sessions;
  out.turns_per_session = turns;
  out.load_before = load_average();
  auto srv = fresh_server(env);
  const pid_t pid = srv.proc->pid();
  if (idle == idle_rss::measure) {
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

    std::vector<std::string> ids;
    for (const auto& s : sc.sessions()) ids.push_back(s.id);
    out.model_requests = match_model_requests(env.mock_port, &env.mock_mark, sc.turns(), ids);
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

}  // namespace tether::bench::api
