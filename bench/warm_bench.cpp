// tether_warm_bench: warm agent processes against one process per turn.
//
// For each agent program whose CLI is installed, the same session of
// "Reply with exactly: …" turns through a real `tether serve` and
// `tether mock-llm`, once with the per-turn runtime and once with the warm
// one(s) of that program:
//   - turn: POST of the input → the execution finished (p50, p95);
//   - admit→model: POST → the scripted model received the turn's first
//     request: Tether's scheduling plus what the agent does before it asks
//     the model (for a per-turn runtime, mostly the agent's start-up);
//   - RSS of the warm process (all the processes of the session's agent
//     home: bubblewrap's and the agent's), after the turns.
// Then Tether's own share: the same turns with tests/server/agents/
// fake_acp_agent.js as the `acp` agent, which answers at once: its turn
// time is Tether's scheduling, recording and the ACP round trip over a
// node process, an upper bound of what Tether adds to a warm turn.
// Then the kinds that run in an environment, on a warm lease of a real sshd
// on loopback (e2e/run/ssh_host.h; "@ssh"): admit->model there is Tether's
// scheduling, the lease taken from the warm pool and, for the per-turn
// kinds, the agent's start over ssh; the workspace's sync down after each
// turn is in the turn time.
//
//   tether_warm_bench [--turns 10] [--out FILE.json]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include <boost/json.hpp>

#include "e2e/run/ssh_host.h"
#include "runtime/agent/programs.h"
#include "server/harness.h"

namespace {

namespace fs = std::filesystem;
namespace json = boost::json;
namespace agent = tether::runtime::agent;
using namespace std::chrono_literals;
using clock_type = std::chrono::steady_clock;

struct bench_case {
  std::string kind;
  std::string program;  // programs.h's kind
  std::string base;     // under the mock's root
  std::string model = "scripted";
  std::string extra;  // more profile keys
};

double quantile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<std::size_t>(q * static_cast<double>(v.size())))];
}

std::int64_t now_us() {
  return std::chrono::duration_cast<std::chrono::microseconds>(clock_type::now().time_since_epoch()).count();
}

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {(std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>()};
}

// KiB of resident memory of every process whose HOME is under `agents`.
long agent_rss_kib(const fs::path& agents) {
  const std::string needle = "HOME=" + agents.string();
  long total = 0;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator("/proc", ec)) {
    const auto name = e.path().filename().string();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    if (read_file(e.path() / "environ").find(needle) == std::string::npos) continue;
    std::ifstream in(e.path() / "status");
    std::string line;
    while (std::getline(in, line))
      if (line.rfind("VmRSS:", 0) == 0) total += std::stol(line.substr(6));
  }
  return total;
}

// The profile's environment on `host` ("" for this machine).
std::string environment_config(const tether::e2e::ssh_host* host) {
  if (host == nullptr) return "";
  const auto bin = agent::default_prefix() / "node_modules" / ".bin";
  return "environment = \"box\"\n\n[environments.box]\nkind = \"ssh\"\nhost = \"" + host->address() +
         "\"\nport = " + std::to_string(host->port()) + "\nuser = \"agent\"\nidentity_file = \"" +
         host->identity_file().string() + "\"\nknown_hosts = \"" + host->known_hosts().string() +
         "\"\nremote_root = \"/home/agent/leases\"\ncontrol_dir = \"" + (host->dir() / "c").string() +
         "\"\nremote_path = \"/opt/tether/bin:" + bin.string() + ":/usr/bin:/bin\"\nkeep_warm_ms = 600000\n";
}

json::object run_case(const bench_case& bc, int turns, const tether::e2e::ssh_host* host = nullptr) {
  const std::string label = bc.kind + (host != nullptr ? " @ssh" : "");
  json::object out{{"runtime", bc.kind}, {"environment", host != nullptr ? "ssh" : "local"}};
  if (bc.program != "fake") {
    if (auto found = agent::find(bc.program); !found) {
      std::printf("%-18s not installed\n", label.c_str());
      out["skipped"] = found.error().message;
      return out;
    }
  }
  const std::string config = "\n[profiles.bench]\nruntime = \"" + bc.kind + "\"\nbase_url = \"{mock}" + bc.base +
                             "\"\nmodel = \"" + bc.model + "\"\n" + bc.extra + environment_config(host);
  tether::e2e::cluster c({}, config);
  auto created = c.call("POST", "/v1/sessions", json::object{{"profile", "bench"}});
  const std::string s(created.json.at("session").at("id").as_string());
  std::vector<double> turn_ms;
  std::vector<double> first_ms;
  for (int i = 1; i <= turns; ++i) {
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
    turn_ms.push_back(std::chrono::duration<double, std::milli>(clock_type::now() - t0).count());
    const auto reqs = c.model_requests();
    if (reqs.size() > before)
      first_ms.push_back(static_cast<double>(reqs[before].at("received_us").to_number<std::int64_t>() - t0_us) /
                         1000.0);
  }
  const long rss = agent_rss_kib(c.dir() / "data" / "agents");
  const auto xs = c.executions(s);
  std::set<std::int64_t> pids;
  int failed = 0;
  for (const auto& x : xs) {
    if (x.at("outcome") != "succeeded") ++failed;
    if (const auto* p = x.as_object().if_contains("agent_process"); p != nullptr && p->is_object())
      pids.insert(p->at("pid").as_int64());
  }
  std::printf("%-18s %7.1f %7.1f   %7.1f %7.1f   %8.1f   %4zu %5d\n", label.c_str(), quantile(turn_ms, 0.5),
              quantile(turn_ms, 0.95), quantile(first_ms, 0.5), quantile(first_ms, 0.95),
              static_cast<double>(rss) / 1024.0, pids.size(), failed);
  std::fflush(stdout);
  out["turns"] = turns;
  out["turn_ms_p50"] = quantile(turn_ms, 0.5);
  out["turn_ms_p95"] = quantile(turn_ms, 0.95);
  out["first_request_ms_p50"] = quantile(first_ms, 0.5);
  out["first_request_ms_p95"] = quantile(first_ms, 0.95);
  out["agent_rss_mib_after"] = static_cast<double>(rss) / 1024.0;
  out["agent_processes"] = pids.size();
  out["failed_turns"] = failed;
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  int turns = 10;
  std::string out;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--turns" && i + 1 < argc) {
      turns = std::max(2, std::stoi(argv[++i]));
    } else if (a == "--out" && i + 1 < argc) {
      out = argv[++i];
    } else {
      std::fprintf(stderr, "usage: tether_warm_bench [--turns 10] [--out FILE.json]\n");
      return 2;
    }
  }
  const auto fake = fs::path(TETHER_SOURCE_DIR) / "tests/server/agents/fake_acp_agent.js";
  const std::vector<bench_case> cases{
      {"acp", "fake", "/v1", "scripted", "command = \"" + fake.string() + "\"\n"},
      {"codex-exec", "codex", "/v1"},
      {"codex", "codex", "/v1"},
      {"acp-codex", "codex-acp", "/v1", "gpt-5.5"},
      {"claude-print", "claude", ""},
      {"claude", "claude", ""},
      {"acp-claude", "claude-agent-acp", ""},
      {"opencode-run", "opencode", "/v1"},
      {"opencode", "opencode", "/v1"},
      {"acp-opencode", "opencode", "/v1"},
  };
  std::printf("tether_warm_bench: %d turns per runtime, one session each, against tether mock-llm\n", turns);
  std::printf("(acp = the fake ACP agent, which answers at once: Tether's own share of a warm turn)\n\n");
  std::printf("%-18s %15s   %15s   %8s   %4s %5s\n", "", "turn", "admit->model", "agent", "", "");
  std::printf("%-18s %7s %7s   %7s %7s   %8s   %4s %5s\n", "runtime (ms)", "p50", "p95", "p50", "p95", "RSS MiB",
              "pids", "fails");
  json::array results;
  for (const auto& bc : cases) results.push_back(run_case(bc, turns));
  // In an environment: a real sshd here, the agent programs and tether seen inside.
  const auto modules = agent::default_prefix() / "node_modules";
  tether::e2e::ssh_host_options so;
  so.read_only = {{modules, modules.string()}, {tether::e2e::tether_binary(), "/opt/tether/bin/tether"}};
  auto host = tether::e2e::ssh_host::start(so);
  if (!host) {
    std::printf("(no sshd: %s)\n", host.error().message.c_str());
  } else {
    for (const auto& bc : cases)
      if (bc.kind != "acp" && bc.kind != "opencode") results.push_back(run_case(bc, turns, host->get()));
  }
  if (!out.empty()) std::ofstream(out) << json::serialize(json::object{{"warm", std::move(results)}}) << "\n";
  return 0;
}
