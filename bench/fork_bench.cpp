// tether_fork_bench: what forking a session costs in its workspace
// (node/snapshots.h), for a git workspace of about 100 MB (the files of one
// commit, 100 MB in the work tree, and its .git): the first snapshot after
// a turn (everything hashed), a snapshot with nothing changed, one with a
// file changed, and the fork itself (a new workspace checked out from the
// snapshot of a turn), p50 over --rounds, each after a sync (not timed);
// beside it `cp -a` of the same workspace, what writing it costs on this disk.
// The target is a fork under 500 ms.
//
//   tether_fork_bench [--mb 100] [--rounds 10] [--dir /tmp] [--out FILE.json]
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "bench_util.h"
#include "node/snapshots.h"

namespace {

namespace fs = std::filesystem;
namespace json = boost::json;
using tether::bench::micros;
using tether::bench::steady;

// Text-like content (words of a small vocabulary): compresses as source code does.
void fill(const fs::path& file, std::size_t bytes, std::mt19937_64& rng) {
  static const std::vector<std::string> words{"int", "return", "const", "auto", "session", "turn", "fork", "{",
                                              "}", "(", ")", ";", "if", "else", "for", "std::string", "value",
                                              "=", "+", "workspace", "agent", "\n", "  ", "0", "1", "42"};
  std::string text;
  text.reserve(bytes + 16);
  while (text.size() < bytes) {
    text += words[rng() % words.size()];
    text += ' ';
  }
  text.resize(bytes);
  std::ofstream(file, std::ios::binary) << text;
}

double seconds_of(const std::vector<double>& us) { return tether::bench::summarize(us).p50_us / 1000.0; }

}  // namespace

int main(int argc, char** argv) {
  std::size_t mb = 100;
  int rounds = 10;
  std::string out_path;
  std::string under = "/tmp";  // --dir: where the workspace and the data directory go
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i];
    if (a == "--mb") mb = std::stoul(argv[i + 1]);
    if (a == "--rounds") rounds = std::stoi(argv[i + 1]);
    if (a == "--out") out_path = argv[i + 1];
    if (a == "--dir") under = argv[i + 1];
  }
  std::string tmpl = under + "/tether-fork-bench-XXXXXX";
  if (::mkdtemp(tmpl.data()) == nullptr) return 1;
  const fs::path root = tmpl;
  const fs::path data = root / "data";
  const auto source = tether::session_id::generate();
  const fs::path ws = data / "workspaces" / source.str();

  // 100 KiB files in 10 directories, committed.
  std::mt19937_64 rng(7);
  const std::size_t files = mb * 10;
  for (std::size_t i = 0; i < files; ++i) {
    const fs::path dir = ws / ("dir" + std::to_string(i % 10));
    fs::create_directories(dir);
    fill(dir / ("file" + std::to_string(i) + ".txt"), 100 * 1024, rng);
  }
  const std::string git = "cd '" + ws.string() +
                          "' && GIT_CONFIG_NOSYSTEM=1 HOME=/nonexistent git -c user.name=b -c user.email=b@b ";
  if (std::system((git + "init -q . && " + git + "add -A && " + git + "commit -qm base").c_str()) != 0) {
    std::fprintf(stderr, "bench: git init/commit failed\n");
    return 1;
  }
  std::uintmax_t tree_bytes = 0;
  std::uintmax_t git_bytes = 0;
  for (const auto& e : fs::recursive_directory_iterator(ws)) {
    if (!e.is_regular_file()) continue;
    const bool in_git = e.path().string().find("/.git/") != std::string::npos;
    (in_git ? git_bytes : tree_bytes) += e.file_size();
  }

  tether::node::git_snapshots snaps(data);
  auto timed = [](auto&& fn) {
    const auto t0 = steady::now();
    fn();
    return micros(steady::now() - t0);
  };
  const auto first = tether::execution_id::generate();
  const double cold = timed([&] {
    if (auto r = snaps.take(source, first, ws); !r) tether::bench::die("take", r.error());
  });
  std::vector<double> unchanged, one_changed, fork;
  for (int i = 0; i < rounds; ++i) {
    unchanged.push_back(timed([&] {
      if (auto r = snaps.take(source, tether::execution_id::generate(), ws); !r) tether::bench::die("take", r.error());
    }));
    fill(ws / "dir0" / "file0.txt", 100 * 1024, rng);
    one_changed.push_back(timed([&] {
      if (auto r = snaps.take(source, tether::execution_id::generate(), ws); !r) tether::bench::die("take", r.error());
    }));
  }
  for (int i = 0; i < rounds; ++i) {
    const auto f = tether::session_id::generate();
    // Each fork starts with nothing waiting to be written back: on a small
    // disk the last fork's 130 MB would otherwise throttle this one's writes.
    ::sync();
    fork.push_back(timed([&] {
      if (auto r = snaps.restore_now(source, first, f); !r) tether::bench::die("fork", r.error());
    }));
    snaps.discard_now(f);
  }
  // The floor on this disk: the same workspace, .git and all, copied by cp.
  std::vector<double> copy;
  for (int i = 0; i < rounds; ++i) {
    const fs::path to = root / "copy";
    ::sync();
    copy.push_back(timed([&] {
      if (std::system(("cp -a '" + ws.string() + "' '" + to.string() + "'").c_str()) != 0) std::exit(1);
    }));
    fs::remove_all(to);
  }
  std::uintmax_t snapshot_bytes = 0;
  for (const auto& e : fs::recursive_directory_iterator(snaps.repository(source)))
    if (e.is_regular_file()) snapshot_bytes += e.file_size();

  json::object doc{{"benchmark", "fork"},
                   {"time", tether::bench::now_iso8601()},
                   {"workspace_bytes", tree_bytes},
                   {"workspace_git_bytes", git_bytes},
                   {"files", files},
                   {"rounds", rounds},
                   {"snapshot_repository_bytes", snapshot_bytes},
                   {"take_first_us", tether::bench::whole(cold)},
                   {"take_unchanged", tether::bench::to_json(tether::bench::summarize(unchanged))},
                   {"take_one_file_changed", tether::bench::to_json(tether::bench::summarize(one_changed))},
                   {"fork", tether::bench::to_json(tether::bench::summarize(fork))},
                   {"cp_a", tether::bench::to_json(tether::bench::summarize(copy))}};
  std::printf("workspace %.1f MB (+ .git %.1f MB), %zu files; snapshot repository %.1f MB\n", tree_bytes / 1e6,
              git_bytes / 1e6, files, snapshot_bytes / 1e6);
  std::printf("snapshot: first %.0f ms, unchanged p50 %.1f ms, one file changed p50 %.1f ms\n", cold / 1000.0,
              seconds_of(unchanged), seconds_of(one_changed));
  std::printf("fork (checkout of the snapshot): p50 %.0f ms, max %.0f ms over %d\n", seconds_of(fork),
              tether::bench::summarize(fork).max_us / 1000.0, rounds);
  std::printf("cp -a of the same workspace (the disk's floor): p50 %.0f ms\n", seconds_of(copy));
  if (!out_path.empty()) std::ofstream(out_path) << json::serialize(doc) << "\n";
  fs::remove_all(root);
  return 0;
}
