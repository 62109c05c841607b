// tether_open_bench: how long opening a SQLite store of a realistic size
// takes, and how much of it is the PRAGMA quick_check that open() runs to
// refuse a damaged database (README, Storage failures).
//
// It builds a database of --events durable events (default 100,000) shaped
// like running agents (steps, text, bash calls with a few hundred bytes of
// output), in sessions of 1,000 events, checkpoints it, then times, three
// times each: open_sqlite_store() (quick_check, migrations, connections),
// PRAGMA quick_check alone and PRAGMA integrity_check alone (the check
// open() does not run: it also compares every index with its table). The
// table goes to stdout; --out writes the same numbers as JSON.
#include <sqlite3.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <boost/json.hpp>

#include "bench_util.h"
#include "store/sqlite/sqlite_store.h"

namespace {

namespace fs = std::filesystem;
namespace json = boost::json;
using namespace tether;
using namespace tether::bench;

model::payload agent_event(const execution_id& exe, std::size_t i, std::optional<call_id>& call) {
  switch (i % 5) {
    case 0:
      return model::step_started{exe, static_cast<std::int64_t>(i / 5 + 1)};
    case 1:
      return model::text_ended{message_id::generate(), "I will look at the build output and fix the failing test."};
    case 2: {
      call = call_id::generate();
      json::object input;
      input["command"] = "make test 2>&1 | tail -20";
      return model::tool_called{*call, "bash", std::move(input), model::tool_kind::local};
    }
    case 3:
      return model::tool_succeeded{*call, std::string(400, 'o') + "\n" + std::to_string(i), ""};
    default: {
      model::step_ended ev;
      ev.finish = "tool_calls";
      ev.usage.input_tokens = 1200;
      ev.usage.output_tokens = 40;
      return ev;
    }
  }
}

void build(const fs::path& db, std::size_t events) {
  store::sqlite_options o;
  o.path = db.string();
  auto st = store::open_sqlite_store(o);
  if (!st) die("open", st.error());
  pool p(2);
  constexpr std::size_t per_session = 1'000;
  constexpr std::size_t per_request = 50;
  for (std::size_t done = 0; done < events;) {
    const auto s = session_id::generate();
    const auto exe = execution_id::generate();
    std::vector<model::payload> setup;
    setup.emplace_back(model::session_created{"bench", "", ""});
    setup.emplace_back(model::execution_started{exe, "bench"});
    if (auto r = p.run((*st)->append(store::append_request{s, std::move(setup), std::nullopt, 0})); !r)
      die("create", r.error());
    done += 2;
    std::optional<call_id> call;
    for (std::size_t i = 0; i < per_session && done < events; i += per_request) {
      store::append_request req;
      req.session = s;
      for (std::size_t k = i; k < i + per_request && done < events; ++k, ++done)
        req.events.push_back(agent_event(exe, k, call));
      if (auto r = p.run((*st)->append(std::move(req))); !r) die("append", r.error());
    }
  }
  (*st)->stop();
}

double pragma_ms(const fs::path& db, const char* sql) {
  sqlite3* h = nullptr;
  sqlite3_open_v2(db.c_str(), &h, SQLITE_OPEN_READONLY, nullptr);
  const auto t0 = steady::now();
  char* err = nullptr;
  if (sqlite3_exec(h, sql, nullptr, nullptr, &err) != SQLITE_OK) {
    std::fprintf(stderr, "%s: %s\n", sql, err != nullptr ? err : "?");
    std::exit(1);
  }
  const double ms = std::chrono::duration<double, std::milli>(steady::now() - t0).count();
  sqlite3_close(h);
  return ms;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  std::size_t events = 100'000;
  std::string out;
  fs::path dir = fs::temp_directory_path();
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if ((a == "--events" || a == "--out" || a == "--dir") && i + 1 < argc) {
      const std::string v = argv[++i];
      if (a == "--events") events = std::stoul(v);
      if (a == "--out") out = v;
      if (a == "--dir") dir = v;
    } else {
      std::fprintf(stderr, "usage: tether_open_bench [--events N] [--out FILE.json] [--dir DIR]\n");
      return 2;
    }
  }
  const auto work = dir / ("tether-open-bench-" + std::to_string(::getpid()));
  fs::create_directories(work);
  const auto db = work / "tether.db";
  build(db, events);
  const double mib = static_cast<double>(fs::file_size(db)) / (1024.0 * 1024.0);

  std::vector<double> open_ms, quick_ms, full_ms;
  for (int round = 0; round < 3; ++round) {
    store::sqlite_options o;
    o.path = db.string();
    const auto t0 = steady::now();
    auto st = store::open_sqlite_store(o);
    open_ms.push_back(std::chrono::duration<double, std::milli>(steady::now() - t0).count());
    if (!st) die("open", st.error());
    (*st)->stop();
    quick_ms.push_back(pragma_ms(db, "PRAGMA quick_check"));
    full_ms.push_back(pragma_ms(db, "PRAGMA integrity_check"));
  }
  std::printf("%-10s %9s %12s %15s %19s\n", "events", "MiB", "open ms", "quick_check ms", "integrity_check ms");
  std::printf("%-10zu %9.1f %12.1f %15.1f %19.1f\n", events, mib, median(open_ms), median(quick_ms), median(full_ms));
  if (!out.empty()) {
    json::object j{{"events", events},
                   {"mib", mib},
                   {"open_ms", median(open_ms)},
                   {"quick_check_ms", median(quick_ms)},
                   {"integrity_check_ms", median(full_ms)},
                   {"at", now_iso8601()}};
    std::ofstream(out) << json::serialize(j) << "\n";
  }
  fs::remove_all(work);
  return 0;
}
