// tether_stream_bench: how fast the native runtime relays a model's stream,
// and what the runtime itself adds around each model request (docs/architecture.md §10).
//
//   relay      the scripted model answers one long text (--chars, in 24-char
//              deltas); a live tail of the session counts the text.delta
//              events it receives between the first delta and text.ended:
//              tokens/s (4 characters per token, the scripted model's own
//              count) and deltas/s as a subscriber sees them.
//   overhead   a turn of --steps steps, each a `list` tool call, then a final
//              answer. The scripted model stamps when each request arrived
//              and when it wrote the last byte of its answer (steady clock,
//              same process), so:
//                admission -> first request: admit() called to the first
//                  request's arrival (scheduler latency);
//                last byte -> next request: per step, the end of one answer
//                  to the arrival of the next request (recording the step,
//                  running the list tool, building the next request).
//                time to first byte, steps 2..N: per model request after
//                  the first of the turn, from the provider starting the
//                  request (before it connects, or borrows a kept
//                  connection) to the response head (seen by an http_tap).
//
// --no-pool opens a new connection per model request (the provider's
// connection pool bounded to zero), to compare with reused connections.
// --tls serves the scripted model over HTTPS with a self-signed certificate
// that the provider trusts (its ca_file), as a real provider is reached.
//
// Everything runs in one process over loopback HTTP with a SQLite store in a
// temporary directory, once per wire format. The table goes to stdout; --out
// writes the same numbers as JSON.
#include <filesystem>
#include <fstream>
#include <latch>
#include <mutex>
#include <random>
#include <string>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>

#include "bench_util.h"
#include "http/client.h"
#include "http/server_tls.h"
#include "mock/server.h"
#include "runtime/native/native_runtime.h"
#include "session/service.h"
#include "store/sqlite/sqlite_store.h"
#include "util/log.h"

namespace {

namespace fs = std::filesystem;
using namespace tether;
using namespace tether::bench;
using runtime::native::wire_api;

enum class connections { pooled, one_per_request };
enum class transport { plain, tls };

struct options {
  std::size_t chars = 200'000;  // about 50k tokens of relayed text (prompts are capped at 256 KiB)
  int steps = 20;
  bool quick = false;
  connections reuse = connections::pooled;
  transport wire = transport::plain;
  std::string out;
};

bool parse_args(int argc, char** argv, options& o) {
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--quick") {
      o.quick = true;
      o.chars = 40'000;
      o.steps = 5;
    } else if (a == "--no-pool") {
      o.reuse = connections::one_per_request;
    } else if (a == "--tls") {
      o.wire = transport::tls;
    } else if ((a == "--chars" || a == "--steps" || a == "--out") && i + 1 < argc) {
      const std::string v = argv[++i];
      if (a == "--chars") o.chars = std::stoul(v);
      if (a == "--steps") o.steps = std::stoi(v);
      if (a == "--out") o.out = v;
    } else {
      std::fprintf(
          stderr,
          "usage: tether_stream_bench [--chars N] [--steps N] [--no-pool] [--tls] [--quick] [--out FILE.json]\n");
      return false;
    }
  }
  return o.chars > 0 && o.steps > 0;
}

std::int64_t now_us() {
  return std::chrono::duration_cast<std::chrono::microseconds>(steady::now().time_since_epoch()).count();
}

// When each model request started and when its response head arrived.
class ttfb_tap final : public http::http_tap {
 public:
  void on_request(const http::http_request& /*request*/) override {
    const std::lock_guard lock(mu_);
    started_.push_back(steady::now());
  }
  void on_head(const http::http_response_head& /*head*/) override {
    const std::lock_guard lock(mu_);
    if (heads_.size() < started_.size()) heads_.push_back(steady::now());
  }
  void on_body(std::string_view /*bytes*/) override {}
  // Microseconds to the head of every request since the last take(), in order.
  std::vector<double> take() {
    const std::lock_guard lock(mu_);
    std::vector<double> out;
    for (std::size_t i = 0; i < heads_.size(); ++i) out.push_back(micros(heads_[i] - started_[i]));
    started_.clear();
    heads_.clear();
    return out;
  }

 private:
  std::mutex mu_;
  std::vector<steady::time_point> started_;
  std::vector<steady::time_point> heads_;
};

// One wire format's test bed: scripted model, store, native runtime, service.
class bed {
 public:
  bed(const fs::path& dir, wire_api api, const options& opt) : dir_(dir), mock_(model_options(opt)), io_(2) {
    fs::create_directories(dir_);
    if (auto r = mock_.start(); !r) die("start the scripted model", r.error());
    if (mock_options_.tls) {
      std::ofstream(dir_ / "model-cert.pem") << mock_options_.tls->certificate_pem;
    }
    store::sqlite_options so;
    so.path = (dir_ / "tether.db").string();
    auto st = store::open_sqlite_store(so);
    if (!st) die("open the store", st.error());
    store_ = std::move(st).value();
    runtime::native::native_options o;
    o.provider.api = api;
    o.provider.base_url = mock_.base_url() + "/v1";
    o.provider.model = "scripted";
    o.provider.http_proxy = o.provider.https_proxy = o.provider.no_proxy = std::string();
    o.provider.tap = tap_;
    if (opt.reuse == connections::one_per_request) o.provider.pool.max_idle_total = 0;
    if (mock_options_.tls) o.provider.ca_file = (dir_ / "model-cert.pem").string();
    o.data_dir = dir_;
    o.max_steps = 1'000;
    runtime_ = runtime::native::make_native_runtime(o);
    session::session_options so2;
    so2.recovery_interval_ms = 0;
    service_ = std::make_unique<session::session_service>(io_.executor(), *store_, *runtime_, clock_,
                                                          session::make_node_identity("bench"), so2);
    if (auto r = io_.run(service_->start()); !r) die("start the service", r.error());
  }
  ~bed() {
    io_.run(service_->stop());
    store_->stop();
    mock_.stop();
  }

  session_id new_session() {
    auto r = io_.run(service_->create_session({}));
    if (!r) die("create a session", r.error());
    return r->id;
  }
  void admit(const session_id& s, std::string prompt) {
    session::input_request req;
    req.prompt = std::move(prompt);
    auto r = io_.run(service_->admit(s, std::move(req)));
    if (!r) die("admit", r.error());
  }
  void idle(const session_id& s) { io_.run(service_->idle(s)); }

  pool& io() { return io_; }
  store::event_store& store() { return *store_; }
  mock::server& model() { return mock_; }
  ttfb_tap& tap() { return *tap_; }

 private:
  mock::server_options model_options(const options& opt) {
    if (opt.wire == transport::tls) {
      auto id = http::make_self_signed_identity();
      if (!id) die("make a certificate", id.error());
      mock_options_.tls = std::move(*id);
    }
    return mock_options_;
  }

  fs::path dir_;
  mock::server_options mock_options_;
  mock::server mock_;
  std::shared_ptr<ttfb_tap> tap_ = std::make_shared<ttfb_tap>();
  system_clock clock_;
  pool io_;
  std::unique_ptr<store::event_store> store_;
  std::unique_ptr<runtime::native::native_runtime> runtime_;
  std::unique_ptr<session::session_service> service_;
};

struct relay_result {
  std::size_t chars = 0;  // received as text.delta
  std::size_t deltas = 0;
  double seconds = 0;  // first delta -> text.ended at the subscriber
  [[nodiscard]] double tokens_per_s() const { return seconds > 0 ? static_cast<double>(chars) / 4.0 / seconds : 0; }
};

asio::awaitable<relay_result> subscribe(std::unique_ptr<store::event_tail> tail) {
  relay_result r;
  steady::time_point first{};
  for (;;) {
    auto items = co_await tail->next();
    if (!items) co_return r;
    for (const auto& it : *items) {
      if (const auto* d = it.event.as<model::text_delta>()) {
        if (r.deltas == 0) first = steady::now();
        ++r.deltas;
        r.chars += d->text.size();
      } else if (it.event.as<model::text_ended>() != nullptr) {
        r.seconds = std::chrono::duration<double>(steady::now() - first).count();
        co_return r;
      }
    }
  }
}

relay_result run_relay(bed& b, std::size_t chars) {
  const auto s = b.new_session();
  std::string text;
  text.reserve(chars);
  std::mt19937 rng(7);
  while (text.size() < chars) text += "word" + std::to_string(rng() % 1000) + " ";
  text.resize(chars);
  std::promise<relay_result> done;
  auto fut = done.get_future();
  asio::co_spawn(b.io().executor(), subscribe(b.store().tail(s, event_seq{0})),
                 [&done](const std::exception_ptr& e, relay_result r) {
                   if (e) std::rethrow_exception(e);
                   done.set_value(r);
                 });
  b.admit(s, "Reply with exactly: " + text);
  auto r = fut.get();
  b.idle(s);
  return r;
}

struct overhead_result {
  double admission_to_first_request_us = 0;
  latency_summary last_byte_to_next_request;
  latency_summary first_byte_after_first;  // steps 2..N
  std::size_t requests = 0;
};

overhead_result run_overhead(bed& b, int steps) {
  const auto s = b.new_session();
  std::string prompt;
  for (int i = 0; i < steps; ++i) prompt += "Tool: list {\"path\": \".\"}\n";
  prompt += "Reply with exactly: done";
  const auto before = b.model().requests().size();
  (void)b.tap().take();
  const auto t0 = now_us();
  b.admit(s, prompt);
  b.idle(s);
  const auto reqs = b.model().requests(before);
  overhead_result r;
  auto ttfb = b.tap().take();
  if (!ttfb.empty()) ttfb.erase(ttfb.begin());
  r.first_byte_after_first = summarize(std::move(ttfb));
  r.requests = reqs.size();
  if (reqs.empty()) return r;
  r.admission_to_first_request_us = static_cast<double>(reqs[0].at("received_us").to_number<std::int64_t>() - t0);
  std::vector<double> gaps;
  for (std::size_t i = 1; i < reqs.size(); ++i) {
    const auto end = reqs[i - 1].at("completed_us").to_number<std::int64_t>();
    const auto next = reqs[i].at("received_us").to_number<std::int64_t>();
    gaps.push_back(static_cast<double>(next - end));
  }
  r.last_byte_to_next_request = summarize(std::move(gaps));
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  options opt;
  if (!parse_args(argc, argv, opt)) return 2;
  setup_logging("warn");
  const auto root = fs::temp_directory_path() / ("tether-stream-bench-" + std::to_string(::getpid()));

  std::printf("model over %s, connections %s\n", opt.wire == transport::tls ? "HTTPS" : "HTTP",
              opt.reuse == connections::pooled ? "kept alive (pooled)" : "one per request");
  std::printf("%-18s %12s %10s %12s %12s %14s %14s %14s %14s %14s\n", "wire", "tokens", "deltas", "tokens/s",
              "deltas/s", "admit->req us", "step p50 us", "step p99 us", "ttfb2+ p50 us", "ttfb2+ p99 us");
  std::printf("%s\n", std::string(142, '-').c_str());
  json::array rows;
  for (const auto api : {wire_api::openai_chat, wire_api::openai_responses, wire_api::anthropic}) {
    const std::string name(runtime::native::to_string(api));
    relay_result relay;
    overhead_result over;
    {
      bed b(root / name, api, opt);
      relay = run_relay(b, opt.chars);
      over = run_overhead(b, opt.steps);
    }
    std::printf(
        "%-18s %12zu %10zu %12.0f %12.0f %14.0f %14.0f %14.0f %14.0f %14.0f\n", name.c_str(), relay.chars / 4,
        relay.deltas, relay.tokens_per_s(), relay.seconds > 0 ? static_cast<double>(relay.deltas) / relay.seconds : 0.0,
        over.admission_to_first_request_us, over.last_byte_to_next_request.p50_us,
        over.last_byte_to_next_request.p99_us, over.first_byte_after_first.p50_us, over.first_byte_after_first.p99_us);
    std::fflush(stdout);
    rows.push_back({{"wire", name},
                    {"relay",
                     {{"tokens", relay.chars / 4},
                      {"deltas", relay.deltas},
                      {"seconds", relay.seconds},
                      {"tokens_per_s", whole(relay.tokens_per_s())}}},
                    {"overhead",
                     {{"requests", over.requests},
                      {"admission_to_first_request_us", whole(over.admission_to_first_request_us)},
                      {"last_byte_to_next_request", to_json(over.last_byte_to_next_request)},
                      {"first_byte_steps_2_to_n", to_json(over.first_byte_after_first)}}}});
  }
  std::error_code ec;
  fs::remove_all(root, ec);
  if (!opt.out.empty()) {
    json::object doc{{"benchmark", "stream"},
                     {"time", now_iso8601()},
                     {"quick", opt.quick},
                     {"connections", opt.reuse == connections::pooled ? "pooled" : "one_per_request"},
                     {"tls", opt.wire == transport::tls},
                     {"wires", rows}};
    std::FILE* f = std::fopen(opt.out.c_str(), "w");
    if (f == nullptr) return 1;
    const auto text = json::serialize(doc);
    std::fwrite(text.data(), 1, text.size(), f);
    std::fclose(f);
  }
  return 0;
}
