// tether_agent_bench: what Tether adds to a turn of an agent program.
//
// For each agent runtime whose CLI is installed (codex-exec, claude-print,
// opencode-run), against a real `tether serve` and `tether mock-llm`:
//   - admission → first model request: from the POST of an input to the
//     moment the scripted model received the agent's first request of that
//     turn (the agent's start-up is most of it);
//   - turn: from the POST to the execution's finish (wall clock, ms);
//   - the agent alone: the same CLI with the same configuration and prompt
//     run directly (no Tether), spawn to exit;
//   - overhead: turn − the agent alone, per turn at the median.
// And the model relay (model_relay.h) alone: the same streamed request to
// the scripted model, directly and through the relay, alternately, over
// keep-alive connections: time to the first byte of the body and to its
// end; what the relay adds is the difference of the medians.
// Every turn is "Reply with exactly: …" in one session, so turns after the
// first resume the agent's session. Medians and maxima over --turns turns.
// And the agent's own session state (runtime/agent/portable/keeper.h): the
// bytes each turn's agent.state.saved held and stored (deflated, new chunks
// only), then, on the home those turns left, the time to save it into a
// fresh SQLite store (cold: every chunk new; warm: one line appended to its
// newest file) and to restore it into an empty home (another node).
//
//   tether_agent_bench [--turns 5] [--relay-requests 400] [--out FILE.json]   (--turns 0: the relay alone)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include <boost/json.hpp>

#include "bench_util.h"
#include "http/client.h"
#include "mock/server.h"
#include "process/run_to_end.h"
#include "runtime/agent/agent_env.h"
#include "runtime/agent/agent_runtime.h"
#include "runtime/agent/dialect.h"
#include "runtime/agent/programs.h"
#include "runtime/agent/portable/files.h"
#include "runtime/agent/portable/keeper.h"
#include "runtime/agent/relay/model_relay.h"
#include "server/harness.h"
#include "store/sqlite/sqlite_store.h"

namespace {

namespace fs = std::filesystem;
namespace json = boost::json;
namespace asio = boost::asio;
namespace agent = tether::runtime::agent;
using namespace std::chrono_literals;
using clock_type = std::chrono::steady_clock;

struct runtime_case {
  std::string kind;
  std::string program;
  std::string base;  // under the mock's root
  std::unique_ptr<agent::dialect> (*make)();
};

double ms_since(clock_type::time_point t0, clock_type::time_point t1) {
  return std::chrono::duration<double, std::milli>(t1 - t0).count();
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}
double maximum(const std::vector<double>& v) { return v.empty() ? 0 : *std::max_element(v.begin(), v.end()); }

std::int64_t now_us() {
  return std::chrono::duration_cast<std::chrono::microseconds>(clock_type::now().time_since_epoch()).count();
}

struct measured {
  std::vector<double> first_request_ms;
  std::vector<double> turn_ms;
  std::vector<double> alone_ms;
};

// One turn through Tether: POST → first model request, POST → execution finished.
void through_tether(tether::e2e::cluster& c, const std::string& s, int i, measured& m) {
  const auto before = c.model_requests().size();
  const auto t0 = clock_type::now();
  const auto t0_us = now_us();
  c.send(s, "Reply with exactly: turn " + std::to_string(i));
  c.wait_for(
      "/v1/sessions/" + s + "/executions",
      [&](const json::value& v) {
        const auto& xs = v.at("executions").as_array();
        return xs.size() >= static_cast<std::size_t>(i) && xs.back().at("status").as_string() == "finished";
      },
      300s);
  const auto t1 = clock_type::now();
  const auto reqs = c.model_requests();
  if (reqs.size() > before) {
    const auto at = reqs[before].at("received_us").to_number<std::int64_t>();
    m.first_request_ms.push_back(static_cast<double>(at - t0_us) / 1000.0);
  }
  m.turn_ms.push_back(ms_since(t0, t1));
}

// The same CLI and configuration, without Tether: spawn to exit. The prompt
// comes on stdin from a file (a shell's redirection, then exec).
void alone(const runtime_case& rc, const fs::path& program, const std::string& root, const fs::path& dir,
           std::optional<std::string>& resume, int i, measured& m) {
  const auto d = rc.make();
  agent::agent_options ao;
  ao.endpoint = {root + rc.base, "scripted", std::string(d->key_variable())};
  // The runtime's own layout, one session for every turn (its home keeps the agent's sessions).
  static const auto session = tether::session_id::generate();
  auto made = agent::prepare_dirs(dir, session, (dir / "workspace").string());
  if (!made) {
    std::fprintf(stderr, "%s: %s\n", rc.kind.c_str(), made.error().message.c_str());
    return;
  }
  const auto& dirs = *made;
  agent::launch_input in;
  in.program = program;
  in.home = dirs.home;
  in.workspace = dirs.workspace;
  in.prompt = "Reply with exactly: alone " + std::to_string(i);
  in.resume = resume;
  in.endpoint = ao.endpoint;
  in.settings = &ao.settings;
  auto l = d->prepare(in);
  if (!l) {
    std::fprintf(stderr, "%s: %s\n", rc.kind.c_str(), l.error().message.c_str());
    return;
  }
  const auto prompt_file = dir / "prompt.txt";
  std::ofstream(prompt_file) << in.prompt;
  tether::process::spawn_options o;
  o.argv = {"/bin/sh", "-c", "exec \"$@\" < \"$PROMPT_FILE\"", "sh"};
  o.argv.insert(o.argv.end(), l->argv.begin(), l->argv.end());
  o.env = agent::agent_environment(ao, dirs, l->env, ao.api_key);
  o.env.push_back("PROMPT_FILE=" + prompt_file.string());
  o.cwd = dirs.workspace;
  const auto t0 = clock_type::now();
  auto done = tether::process::run_to_end(o, {.limit = 300s, .max_output = 8U << 20U});
  const auto t1 = clock_type::now();
  if (!done || done->timed_out || !done->status.success()) {
    std::fprintf(stderr, "%s alone: failed (%s)\n", rc.kind.c_str(),
                 done ? done->output.substr(0, 400).c_str() : done.error().message.c_str());
    return;
  }
  m.alone_ms.push_back(ms_since(t0, t1));
  auto mapper = d->mapper();
  std::size_t from = 0;
  while (from < done->output.size()) {
    auto to = done->output.find('\n', from);
    if (to == std::string::npos) to = done->output.size();
    if (auto evs = mapper->feed(std::string_view(done->output).substr(from, to - from)))
      for (const auto& e : *evs)
        if (const auto* sid = std::get_if<agent::agent_session>(&e)) resume = sid->id;
    from = to + 1;
  }
}

// A turn host whose record() appends to a store, as the runner's does.
class appending_host final : public tether::session::turn_host {
 public:
  appending_host(tether::store::event_store& s, tether::session_id id) : store_(s), session_(std::move(id)) {}
  tether::session::task<tether::result<std::vector<tether::store::message_row>>> boundary() override {
    co_return std::vector<tether::store::message_row>{};
  }
  tether::session::task<tether::result<tether::session::boundary_result>> boundary_after(
      std::vector<tether::model::payload>) override {
    co_return tether::session::boundary_result{};
  }
  tether::session::task<tether::result<std::vector<tether::model::event>>> record(
      std::vector<tether::model::payload> events) override {
    tether::store::append_request req{session_, std::move(events), {}, 0};
    auto r = co_await store_.append(std::move(req));
    if (!r) co_return r.error();
    co_return r->events;
  }
  void record_soon(std::vector<tether::model::payload>) override {}
  void publish(tether::model::payload) override {}
  void wake() override {}
  [[nodiscard]] std::stop_token stop_token() const override { return {}; }

 private:
  tether::store::event_store& store_;
  tether::session_id session_;
};

// Save (cold, then warm after one appended line) and restore of the state in `home`.
json::object time_state(const std::string& kind, const fs::path& home, const std::string& agent_session,
                        const fs::path& dir) {
  namespace portable = agent::portable;
  fs::create_directories(dir);
  tether::store::sqlite_options so;
  so.path = (dir / "state-bench.db").string();
  auto st = tether::store::open_sqlite_store(so);
  if (!st) tether::bench::die("the state store", st.error());
  auto& store = **st;
  tether::bench::pool io(1);
  const auto s = tether::session_id::generate();
  tether::store::append_request created{s, {tether::model::session_created{"bench", "/w", "bench"}}, {}, 0};
  if (auto r = io.run(store.append(std::move(created))); !r) tether::bench::die("a session", r.error());
  auto host = std::make_shared<appending_host>(store, s);
  portable::state_keeper keeper(store, tether::real_clock());
  const auto workspace = (dir / "workspace").string();
  auto timed_save = [&] {
    const auto t0 = clock_type::now();
    io.run([&]() -> asio::awaitable<int> {
      co_await keeper.save(s, kind, agent_session, 0, home, workspace, host);
      co_return 0;
    }());
    return ms_since(t0, clock_type::now());
  };
  const double cold = timed_save();
  // The newest state file gets one more line, as a turn appends to a conversation.
  auto files = portable::read_state(home, portable::family_of(kind), nullptr);
  double warm = 0;
  if (files && !files->files.empty()) {
    std::ofstream(home / files->files.back().path, std::ios::app) << "{\"bench\":\"one more line\"}\n";
    warm = timed_save();
  }
  const auto other = dir / "other-node" / "home";
  fs::create_directories(other);
  tether::store::runtime_binding b{kind, agent_session, 0, tether::event_seq{}, ""};
  const auto t0 = clock_type::now();
  const bool restored = io.run([&]() -> asio::awaitable<bool> {
    co_return co_await keeper.prepare(s, kind, b, other, dir / "other-node" / "workspace", host);
  }());
  const double restore = ms_since(t0, clock_type::now());
  store.stop();
  return json::object{{"bytes", files ? files->bytes : 0}, {"files", files ? files->files.size() : 0},
                      {"save_cold_ms", cold}, {"save_warm_ms", warm}, {"restore_ms", restore},
                      {"restored", restored}};
}

json::object run_case(const runtime_case& rc, int turns) {
  json::object out{{"runtime", rc.kind}};
  auto found = agent::find(rc.program);
  if (!found) {
    std::printf("%-14s not installed: %s\n", rc.kind.c_str(), found.error().message.c_str());
    out["skipped"] = found.error().message;
    return out;
  }
  const std::string config =
      "\n[profiles.bench]\nruntime = \"" + rc.kind + "\"\nbase_url = \"{mock}" + rc.base + "\"\nmodel = \"scripted\"\n";
  tether::e2e::cluster c({}, config);
  auto created = c.call("POST", "/v1/sessions", json::object{{"profile", "bench"}});
  const std::string s(created.json.at("session").at("id").as_string());
  measured m;
  for (int i = 1; i <= turns; ++i) through_tether(c, s, i, m);
  // What each turn saved of the agent's own state.
  json::array saved;
  std::string agent_session;
  const auto events = c.call("GET", "/v1/sessions/" + s + "/events?limit=10000");
  for (const auto& e : events.json.at("events").as_array())
    if (e.at("type").as_string() == "agent.state.saved") {
      const auto& d = e.at("data").as_object();
      saved.push_back(json::object{{"bytes", d.at("bytes")}, {"stored", d.at("stored")}});
      agent_session = std::string(d.at("agent_session").as_string());
    }
  json::object state{{"saved_per_turn", saved}};
  if (!agent_session.empty()) {
    const auto timed = time_state(rc.kind, c.dir() / "data" / "agents" / s / "home", agent_session, c.dir() / "state");
    for (const auto& [k, v] : timed) state[k] = v;
  }
  const std::string root = "http://127.0.0.1:" + std::to_string(c.mock_port());
  const auto dir = c.dir() / "alone";
  std::optional<std::string> resume;
  for (int i = 1; i <= turns; ++i) alone(rc, found->path, root, dir, resume, i, m);

  const double turn = median(m.turn_ms);
  const double own = median(m.alone_ms);
  std::printf("%-14s %6.0f %6.0f   %7.0f %7.0f   %7.0f %7.0f   %7.0f\n", rc.kind.c_str(), median(m.first_request_ms),
              maximum(m.first_request_ms), turn, maximum(m.turn_ms), own, maximum(m.alone_ms), turn - own);
  std::fflush(stdout);
  out["turns"] = turns;
  out["first_request_ms_p50"] = median(m.first_request_ms);
  out["first_request_ms_max"] = maximum(m.first_request_ms);
  out["turn_ms_p50"] = turn;
  out["turn_ms_max"] = maximum(m.turn_ms);
  out["agent_alone_ms_p50"] = own;
  out["agent_alone_ms_max"] = maximum(m.alone_ms);
  out["overhead_ms_p50"] = turn - own;
  std::printf("%-14s state per turn (bytes, stored):", "");
  for (const auto& v : saved)
    std::printf(" %lld/%lld", static_cast<long long>(v.at("bytes").to_number<std::int64_t>()),
                static_cast<long long>(v.at("stored").to_number<std::int64_t>()));
  if (state.contains("save_cold_ms"))
    std::printf("; save cold %.1f ms, warm %.1f ms; restore %.1f ms", state.at("save_cold_ms").as_double(),
                state.at("save_warm_ms").as_double(), state.at("restore_ms").as_double());
  std::printf("\n");
  out["agent_state"] = std::move(state);
  return out;
}

}  // namespace

// One streamed Responses request; microseconds to the first body byte and to the end.
struct timed {
  double first_us = 0;
  double whole_us = 0;
};

tether::bench::latency_summary stats(const std::vector<timed>& v, bool first) {
  std::vector<double> us;
  us.reserve(v.size());
  for (const auto& t : v) us.push_back(first ? t.first_us : t.whole_us);
  return tether::bench::summarize(std::move(us));
}

json::object measure_relay(int requests) {
  namespace http = tether::http;
  namespace bench = tether::bench;
  tether::mock::server model({.listen = "127.0.0.1:0"});
  if (auto r = model.start(); !r) bench::die("mock-llm", r.error());
  bench::pool io(2);
  const auto dir = fs::temp_directory_path() / ("tether-relay-bench-" + std::to_string(::getpid()));
  agent::model_relay relay(io.executor(), agent::relay_options{dir / "relay.sock"});
  if (auto r = relay.start(); !r) bench::die("relay", r.error());
  http::http_options ho;
  ho.proxies.no_proxy = "*";
  auto client = std::make_shared<http::http_client>(ho);
  auto grant = relay.open({model.base_url() + "/v1", "", client});
  const std::string body =
      R"({"model":"m","stream":true,"input":"Reply with exactly: the quick brown fox jumps over the lazy dog"})";
  auto one = [&](const std::string& base, const std::string& key) {
    http::http_request req;
    req.url = base + "/responses";
    req.headers = {{"Authorization", "Bearer " + key}, {"Content-Type", "application/json"}};
    req.body = body;
    auto t = std::make_shared<timed>();
    const auto t0 = clock_type::now();
    http::http_handler h;
    h.on_body = [t, t0](std::string_view) {
      if (t->first_us == 0) t->first_us = bench::micros(clock_type::now() - t0);
      return http::body_action::more;
    };
    auto r = io.run(client->send(std::move(req), std::move(h), {}));
    if (r.error) bench::die("a request", tether::error(r.error, r.message));
    t->whole_us = bench::micros(clock_type::now() - t0);
    return *t;
  };
  const std::string direct_base = model.base_url() + "/v1";
  const std::string relay_base = relay.local_url(direct_base);
  for (int i = 0; i < 20; ++i) {  // warm both paths' connections
    one(direct_base, "k");
    one(relay_base, grant.token());
  }
  std::vector<timed> direct, relayed;
  for (int i = 0; i < requests; ++i) {
    direct.push_back(one(direct_base, "k"));
    relayed.push_back(one(relay_base, grant.token()));
  }
  const auto d_first = stats(direct, true), r_first = stats(relayed, true);
  const auto d_whole = stats(direct, false), r_whole = stats(relayed, false);
  std::printf("\nmodel relay, %d streamed requests each way (us)   p50     p99\n", requests);
  std::printf("  first byte   direct %8.0f %7.0f   relayed %8.0f %7.0f   added p50 %6.0f\n", d_first.p50_us,
              d_first.p99_us, r_first.p50_us, r_first.p99_us, r_first.p50_us - d_first.p50_us);
  std::printf("  whole        direct %8.0f %7.0f   relayed %8.0f %7.0f   added p50 %6.0f\n", d_whole.p50_us,
              d_whole.p99_us, r_whole.p50_us, r_whole.p99_us, r_whole.p50_us - d_whole.p50_us);
  const auto usage = grant.take_usage();
  std::printf("  usage read from %zu of %d relayed responses\n", usage.responses, requests + 20);
  grant.close();
  io.run(relay.stop());
  model.stop();
  std::error_code ec;
  fs::remove_all(dir, ec);
  return json::object{
      {"requests", requests},
      {"first_byte", json::object{{"direct", bench::to_json(d_first)}, {"relayed", bench::to_json(r_first)}}},
      {"whole", json::object{{"direct", bench::to_json(d_whole)}, {"relayed", bench::to_json(r_whole)}}},
      {"added_p50_first_byte_us", r_first.p50_us - d_first.p50_us},
      {"added_p50_whole_us", r_whole.p50_us - d_whole.p50_us},
      {"responses_with_usage", usage.responses}};
}

int main(int argc, char** argv) {
  int turns = 5;
  int relay_requests = 400;
  std::string out;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--turns" && i + 1 < argc) {
      turns = std::max(0, std::stoi(argv[++i]));  // 0: the relay alone
    } else if (a == "--relay-requests" && i + 1 < argc) {
      relay_requests = std::max(1, std::stoi(argv[++i]));
    } else if (a == "--out" && i + 1 < argc) {
      out = argv[++i];
    } else {
      std::fprintf(stderr, "usage: tether_agent_bench [--turns 5] [--relay-requests 400] [--out FILE.json]\n");
      return 2;
    }
  }
  const std::vector<runtime_case> cases{
      {"codex-exec", "codex", "/v1", &agent::make_codex_exec},
      {"claude-print", "claude", "", &agent::make_claude_print},
      {"opencode-run", "opencode", "/v1", &agent::make_opencode_run},
  };
  std::printf("tether_agent_bench: %d turns per runtime, one session each, against tether mock-llm\n\n", turns);
  std::printf("%-14s %13s   %15s   %15s   %7s\n", "", "admit->model", "turn (Tether)", "agent alone", "ovh");
  std::printf("%-14s %6s %6s   %7s %7s   %7s %7s   %7s\n", "runtime (ms)", "p50", "max", "p50", "max", "p50", "max",
              "p50");
  json::array results;
  if (turns > 0)
    for (const auto& rc : cases) results.push_back(run_case(rc, turns));
  auto relay = measure_relay(relay_requests);
  if (!out.empty())
    std::ofstream(out) << json::serialize(json::object{{"agents", std::move(results)}, {"relay", std::move(relay)}})
                       << "\n";
  return 0;
}
