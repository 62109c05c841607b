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
#include "runtime/agent/relay/model_relay.h"
#include "server/harness.h"

namespace {

namespace fs = std::filesystem;
namespace json = boost::json;
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
