// The crash test (docs/architecture.md §10, "Crash tests"): run crash_child
// against one SQLite database, SIGKILL it after a random 20–200 ms, reopen
// the database and check that
//   - every operation the child acknowledged (one stdout line each) is in
//     the log, across all rounds so far;
//   - each session's seqs are 1..last with no gaps, event ids are unique;
//   - the projections agree with a replay of the log: sessions (last_seq,
//     generation, open execution), inputs, executions, tool calls, messages;
//   - recovery (session_service::start) leaves no execution half-started and
//     no tool call unsettled.
// The same database is reused so the log grows round after round.
//
// TETHER_CRASH_ROUNDS (default 50) and TETHER_CRASH_SEED reproduce a run.
#include "store/sqlite/sqlite_store.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <future>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <sqlite3.h>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>

#include "process/spawn.h"
#include "session/service.h"

namespace tether {
namespace {

namespace asio = boost::asio;
namespace fs = std::filesystem;
using steady = std::chrono::steady_clock;

constexpr std::size_t child_sessions = 6;
constexpr std::size_t child_workers = 24;

// ---- running the child ----

struct child_run {
  std::string out;  // everything it printed before it died
  process::exit_status status;
};

child_run run_child_and_kill(const std::string& db, std::chrono::milliseconds after, std::uint64_t seed) {
  process::spawn_options o;
  o.argv = {TETHER_CRASH_CHILD, db, std::to_string(child_sessions), std::to_string(child_workers),
            std::to_string(seed)};
  o.env = process::inherited_environment();
  o.stderr_mode = process::output::log_file;  // what it said before it died, for a failing round
  o.log = db + ".child.log";
  auto spawned = process::system_spawner().spawn(o);
  if (!spawned) throw std::runtime_error(spawned.error().message);
  const int out = spawned->stdout_fd.get();

  child_run run;
  char buf[65536];
  const auto deadline = steady::now() + after;
  bool killed = false;
  for (;;) {
    int timeout = -1;
    if (!killed) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - steady::now()).count();
      if (left <= 0) {
        ::kill(spawned->pid, SIGKILL);
        killed = true;
      } else {
        timeout = static_cast<int>(left);
      }
    }
    pollfd p{out, POLLIN, 0};
    const int ready = ::poll(&p, 1, timeout);
    if (ready < 0 && errno != EINTR) break;
    if (ready <= 0) continue;
    const ssize_t n = ::read(out, buf, sizeof buf);
    if (n > 0) {
      run.out.append(buf, static_cast<std::size_t>(n));
      continue;
    }
    // n == 0: the child is gone (killed, or it died on its own).
    if (n == 0 || errno != EINTR) break;
  }
  if (!killed) ::kill(spawned->pid, SIGKILL);
  run.status = process::reap(spawned->release());
  return run;
}

// ---- what the child acknowledged (accumulated over rounds) ----

struct acknowledged {
  std::set<std::string> sessions;
  std::map<std::string, std::pair<std::string, std::int64_t>> inputs;  // input -> (session, seq)
  std::map<std::pair<std::string, std::int64_t>, std::string> events;  // (session, seq) -> event id or "-"
  std::map<std::string, std::size_t> resets;                           // session -> count
  std::map<std::string, std::pair<std::string, std::string>> runs;     // execution -> (session, status)
  std::size_t lines = 0;

  // Complete lines only: a line cut by the kill was never fully written.
  void parse(const std::string& out) {
    std::size_t start = 0;
    for (std::size_t nl = out.find('\n'); nl != std::string::npos; nl = out.find('\n', start)) {
      std::istringstream line(out.substr(start, nl - start));
      start = nl + 1;
      std::string kind, ses, a, b;
      line >> kind >> ses >> a >> b;
      ++lines;
      if (kind == "session") {
        sessions.insert(ses);
      } else if (kind == "admit") {
        inputs[a] = {ses, std::stoll(b)};
        events[{ses, std::stoll(b)}] = "-";
      } else if (kind == "event") {
        auto& slot = events[{ses, std::stoll(a)}];
        if (slot.empty() || slot == "-") slot = b;
      } else if (kind == "reset") {
        ++resets[ses];
      } else if (kind == "run") {
        if (a != "-") runs[a] = {ses, b};
      } else {
        ADD_FAILURE() << "unexpected line from the child: " << out.substr(start, nl - start);
      }
    }
  }
};

// ---- an io_context on two threads, driven from the test thread ----

class pool {
 public:
  pool() : guard_(asio::make_work_guard(ioc_)) {
    for (int i = 0; i < 2; ++i) threads_.emplace_back([this] { ioc_.run(); });
  }
  ~pool() {
    guard_.reset();
    for (auto& t : threads_) t.join();
  }
  asio::any_io_executor executor() { return ioc_.get_executor(); }

  template <class T>
  T run(asio::awaitable<T> aw) {
    std::promise<T> p;
    auto f = p.get_future();
    asio::co_spawn(ioc_, deliver(std::move(aw), &p), [&p](const std::exception_ptr& e) {
      if (e) p.set_exception(e);
    });
    return f.get();
  }
  void run(asio::awaitable<void> aw) {
    std::promise<void> p;
    auto f = p.get_future();
    asio::co_spawn(ioc_, deliver_void(std::move(aw), &p), [&p](const std::exception_ptr& e) {
      if (e) p.set_exception(e);
    });
    f.get();
  }

 private:
  template <class T>
  static asio::awaitable<void> deliver(asio::awaitable<T> aw, std::promise<T>* p) {
    p->set_value(co_await std::move(aw));
  }
  static asio::awaitable<void> deliver_void(asio::awaitable<void> aw, std::promise<void>* p) {
    co_await std::move(aw);
    p->set_value();
  }

  asio::io_context ioc_;
  asio::executor_work_guard<asio::io_context::executor_type> guard_;
  std::vector<std::thread> threads_;
};

// ---- the log replayed: what every projection must say ----

struct input_state {
  std::string session, prompt, delivery, status = "pending", execution;
  std::int64_t admitted_seq = 0;
};
struct execution_state {
  bool finished = false;
  std::string outcome;
  std::int64_t started_seq = 0;
};
struct message_state {
  std::string session;
  std::int64_t seq = 0, generation = 0;
  std::string role, id, text;
  bool is_error = false;
  bool operator==(const message_state&) const = default;
};
std::ostream& operator<<(std::ostream& o, const message_state& m) {
  return o << m.session << "#" << m.seq << " g" << m.generation << " " << m.role << " " << m.id << " '" << m.text << "'"
           << (m.is_error ? " error" : "");
}

struct session_replay {
  std::vector<model::event> log;
  std::int64_t generation = 0;
  std::optional<std::string> open_execution;
  std::map<std::string, execution_state> executions;
  std::map<std::string, std::string> calls;  // call -> running/succeeded/failed
  std::size_t resets = 0;
};

struct replay {
  std::map<std::string, session_replay> sessions;
  std::map<std::string, input_state> inputs;
  std::vector<message_state> messages;  // all sessions, all generations
  std::set<std::string> event_ids;
  std::size_t events = 0;

  // Applies one event; returns what is wrong with it, if anything (the store
  // should have rejected such an event).
  std::string apply(const std::string& ses, const model::event& e) {
    auto& s = sessions[ses];
    auto message = [&](std::string role, std::string id, std::string text, bool is_error = false) {
      messages.push_back({ses, e.seq.value, s.generation, std::move(role), std::move(id), std::move(text), is_error});
    };
    if (!event_ids.insert(e.id.str()).second) return "duplicate event id " + e.id.str();
    if (const auto* p = e.as<model::input_admitted>()) {
      if (inputs.contains(p->input.str())) return "input admitted twice: " + p->input.str();
      inputs[p->input.str()] = {ses, p->prompt, std::string(model::to_string(p->delivery)), "pending", "", e.seq.value};
    } else if (const auto* p = e.as<model::input_promoted>()) {
      auto it = inputs.find(p->input.str());
      if (it == inputs.end() || it->second.session != ses || it->second.status != "pending")
        return "promotion of an input that is not pending here: " + p->input.str();
      it->second.status = "promoted";
      it->second.execution = p->execution.str();
      message("user", p->input.str(), it->second.prompt);
    } else if (const auto* p = e.as<model::input_cancelled>()) {
      auto it = inputs.find(p->input.str());
      if (it == inputs.end() || it->second.status != "pending") return "cancel of a non-pending input";
      it->second.status = "cancelled";
    } else if (const auto* p = e.as<model::input_returned>()) {
      auto it = inputs.find(p->input.str());
      if (it == inputs.end() || it->second.status != "promoted" || it->second.execution != p->execution.str())
        return "return of an input not promoted into " + p->execution.str() + ": " + p->input.str();
      if (s.open_execution != p->execution.str()) return "return from an execution that is not open";
      it->second.status = "pending";
      it->second.execution.clear();
      std::erase_if(messages, [&](const message_state& m) { return m.role == "user" && m.id == p->input.str(); });
    } else if (const auto* p = e.as<model::execution_started>()) {
      if (s.open_execution) return "execution started while " + *s.open_execution + " is open";
      s.open_execution = p->execution.str();
      s.executions[p->execution.str()] = {false, "", e.seq.value};
    } else if (const auto* p = e.as<model::execution_recovered>()) {
      if (s.open_execution != p->execution.str()) return "recovery of an execution that is not open";
    } else if (const auto* p = e.as<model::execution_finished>()) {
      if (s.open_execution != p->execution.str()) return "finish of an execution that is not open";
      s.executions[p->execution.str()].finished = true;
      s.executions[p->execution.str()].outcome = std::string(model::to_string(p->outcome));
      s.open_execution.reset();
    } else if (const auto* p = e.as<model::tool_called>()) {
      if (s.calls.contains(p->call.str())) return "tool called twice";
      s.calls[p->call.str()] = "running";
      message("tool_call", p->call.str(), "");
    } else if (const auto* p = e.as<model::tool_succeeded>()) {
      if (s.calls[p->call.str()] != "running") return "settling a call that is not running";
      s.calls[p->call.str()] = "succeeded";
      message("tool_result", p->call.str(), p->content);
    } else if (const auto* p = e.as<model::tool_failed>()) {
      if (s.calls[p->call.str()] != "running") return "settling a call that is not running";
      s.calls[p->call.str()] = "failed";
      message("tool_result", p->call.str(), p->error, true);
    } else if (const auto* p = e.as<model::text_ended>()) {
      message("assistant", p->message.str(), p->text);
    } else if (const auto* p = e.as<model::synthetic>()) {
      message("notice", e.id.str(), p->text);
    } else if (const auto* p = e.as<model::session_reset>()) {
      ++s.generation;
      ++s.resets;
      if (p->generation != s.generation) return "session.reset carries generation " + std::to_string(p->generation);
    }
    return {};
  }
};

// ---- reading the database ----

class sql_reader {
 public:
  explicit sql_reader(const std::string& path) {
    if (sqlite3_open_v2(path.c_str(), &db_, SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK)
      throw std::runtime_error("sqlite3_open_v2: " + std::string(sqlite3_errmsg(db_)));
  }
  ~sql_reader() { sqlite3_close(db_); }
  sql_reader(const sql_reader&) = delete;
  sql_reader& operator=(const sql_reader&) = delete;

  // Every row as text columns.
  std::vector<std::vector<std::string>> rows(const char* sql) {
    sqlite3_stmt* st = nullptr;
    if (sqlite3_prepare_v2(db_, sql, -1, &st, nullptr) != SQLITE_OK)
      throw std::runtime_error(std::string(sql) + ": " + sqlite3_errmsg(db_));
    std::vector<std::vector<std::string>> out;
    int rc = 0;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
      std::vector<std::string> row;
      for (int i = 0; i < sqlite3_column_count(st); ++i) {
        const auto* t = sqlite3_column_text(st, i);
        row.emplace_back(t == nullptr ? "" : reinterpret_cast<const char*>(t));
      }
      out.push_back(std::move(row));
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE) throw std::runtime_error(std::string(sql) + ": " + sqlite3_errmsg(db_));
    return out;
  }

 private:
  sqlite3* db_ = nullptr;
};

std::unique_ptr<store::event_store> open_store(const std::string& path) {
  store::sqlite_options so;
  so.path = path;
  auto st = store::open_sqlite_store(std::move(so));
  if (!st) throw std::runtime_error("open " + path + ": " + st.error().describe());
  return std::move(st).value();
}

asio::awaitable<result<std::vector<model::event>>> read_all(store::event_store* st, session_id s) {
  std::vector<model::event> out;
  event_seq after{0};
  for (;;) {
    auto page = co_await st->read(s, after, 2000);
    if (!page) co_return page.error();
    for (auto& e : page->events) out.push_back(std::move(e));
    if (!out.empty()) after = out.back().seq;
    if (!page->more || page->events.empty()) co_return out;
  }
}

// Replays every session's log and checks it against the acks and the
// projections. Returns the replay for the recovery checks.
replay check_log_and_projections(pool& p, store::event_store& st, const std::string& db, const acknowledged& acks,
                                 int round) {
  SCOPED_TRACE("round " + std::to_string(round));
  replay rp;
  auto listed = p.run(st.list_sessions(10'000));
  if (!listed) throw std::runtime_error("list_sessions: " + listed.error().describe());

  for (const auto& row : listed.value()) {
    const auto& ses = row.id.str();
    auto log = p.run(read_all(&st, row.id));
    if (!log) {
      ADD_FAILURE() << ses << ": the log does not read back: " << log.error().describe();
      continue;
    }
    auto& sr = rp.sessions[ses];
    for (std::size_t i = 0; i < log->size(); ++i) {
      const auto& e = (*log)[i];
      if (e.seq.value != static_cast<std::int64_t>(i + 1)) {
        ADD_FAILURE() << ses << ": seq gap: position " << i + 1 << " holds seq " << e.seq.value;
        break;
      }
      if (e.session != row.id) ADD_FAILURE() << ses << "#" << e.seq.value << " belongs to " << e.session.str();
      if (auto why = rp.apply(ses, e); !why.empty()) ADD_FAILURE() << ses << "#" << e.seq.value << ": " << why;
    }
    sr.log = std::move(log.value());
    rp.events += sr.log.size();

    // sessions projection
    EXPECT_EQ(row.last_seq.value, static_cast<std::int64_t>(sr.log.size())) << ses << ": last_seq vs log";
    EXPECT_EQ(row.generation, sr.generation) << ses << ": generation vs session.reset events";
    EXPECT_EQ(row.open_execution ? std::optional(row.open_execution->str()) : std::nullopt, sr.open_execution)
        << ses << ": open execution vs execution events";

    // pending inputs, in admission order
    auto pending = p.run(st.pending_inputs(row.id));
    if (!pending) {
      ADD_FAILURE() << ses << ": pending_inputs: " << pending.error().describe();
    } else {
      std::vector<std::pair<std::int64_t, std::string>> expected;
      for (const auto& [id, in] : rp.inputs)
        if (in.session == ses && in.status == "pending") expected.emplace_back(in.admitted_seq, id);
      std::sort(expected.begin(), expected.end());
      std::vector<std::pair<std::int64_t, std::string>> got;
      for (const auto& in : pending.value()) got.emplace_back(in.admitted_seq.value, in.id.str());
      EXPECT_EQ(got, expected) << ses << ": pending inputs vs log";
    }

    // executions
    auto exes = p.run(st.list_executions(row.id));
    if (!exes) {
      ADD_FAILURE() << ses << ": list_executions: " << exes.error().describe();
    } else {
      EXPECT_EQ(exes->size(), sr.executions.size()) << ses << ": executions vs execution.started events";
      for (const auto& x : exes.value()) {
        auto it = sr.executions.find(x.id.str());
        if (it == sr.executions.end()) {
          ADD_FAILURE() << ses << ": execution row without execution.started: " << x.id.str();
          continue;
        }
        EXPECT_EQ(x.status == store::execution_status::finished, it->second.finished) << x.id.str();
        EXPECT_EQ(x.outcome ? std::string(model::to_string(*x.outcome)) : "", it->second.outcome) << x.id.str();
        EXPECT_EQ(x.started_seq.value, it->second.started_seq) << x.id.str();
      }
    }

    // unsettled tool calls
    auto calls = p.run(st.unsettled_calls(row.id));
    if (!calls) {
      ADD_FAILURE() << ses << ": unsettled_calls: " << calls.error().describe();
    } else {
      std::set<std::string> got, expected;
      for (const auto& c : calls.value()) got.insert(c.id.str());
      for (const auto& [id, status] : sr.calls)
        if (status == "running") expected.insert(id);
      EXPECT_EQ(got, expected) << ses << ": unsettled calls vs tool events";
    }

    // the model-facing context: messages of the current generation
    auto ctx = p.run(st.context(row.id));
    if (!ctx) {
      ADD_FAILURE() << ses << ": context: " << ctx.error().describe();
    } else {
      std::vector<message_state> expected, got;
      for (const auto& m : rp.messages)
        if (m.session == ses && m.generation == sr.generation) expected.push_back(m);
      for (const auto& m : ctx.value())
        got.push_back(
            {ses, m.seq.value, m.generation, std::string(store::to_string(m.role)), m.id, m.text, m.is_error});
      EXPECT_EQ(got, expected) << ses << ": context vs log";
    }
  }

  // What the child acknowledged is all there.
  for (const auto& ses : acks.sessions) EXPECT_TRUE(rp.sessions.contains(ses)) << "acknowledged session lost: " << ses;
  for (const auto& [key, id] : acks.events) {
    const auto& [ses, seq] = key;
    auto it = rp.sessions.find(ses);
    if (it == rp.sessions.end() || seq < 1 || seq > static_cast<std::int64_t>(it->second.log.size())) {
      ADD_FAILURE() << "acknowledged event lost: " << ses << "#" << seq;
      continue;
    }
    if (id != "-") {
      EXPECT_EQ(it->second.log[static_cast<std::size_t>(seq - 1)].id.str(), id) << ses << "#" << seq;
    }
  }
  for (const auto& [input, where] : acks.inputs) {
    auto it = rp.inputs.find(input);
    if (it == rp.inputs.end()) {
      ADD_FAILURE() << "acknowledged input lost: " << input;
      continue;
    }
    EXPECT_EQ(it->second.session, where.first) << input;
    EXPECT_EQ(it->second.admitted_seq, where.second) << input;
  }
  for (const auto& [ses, n] : acks.resets) EXPECT_GE(rp.sessions[ses].resets, n) << ses << ": acknowledged resets lost";
  for (const auto& [exe, where] : acks.runs) {
    const auto& [ses, status] = where;
    const auto& xs = rp.sessions[ses].executions;
    auto it = xs.find(exe);
    if (it == xs.end()) {
      ADD_FAILURE() << "acknowledged execution lost: " << exe;
      continue;
    }
    if (status == "succeeded" || status == "failed" || status == "interrupted" || status == "waiting") {
      EXPECT_TRUE(it->second.finished) << exe;
      EXPECT_EQ(it->second.outcome, status) << exe;
    }
  }

  // Whole tables against the replay (no extra rows, nothing missing).
  sql_reader sql(db);
  {
    std::map<std::string, input_state> got;
    for (auto& r : sql.rows("SELECT id, session_id, prompt, delivery, status, admitted_seq, "
                            "coalesce(execution_id, '') FROM inputs"))
      got[r[0]] = {r[1], r[2], r[3], r[4], r[6], std::stoll(r[5])};
    EXPECT_EQ(got.size(), rp.inputs.size()) << "inputs table rows vs input.admitted events";
    for (const auto& [id, in] : rp.inputs) {
      auto it = got.find(id);
      if (it == got.end()) {
        ADD_FAILURE() << "no inputs row for " << id;
        continue;
      }
      const auto& g = it->second;
      EXPECT_TRUE(g.session == in.session && g.prompt == in.prompt && g.delivery == in.delivery &&
                  g.status == in.status && g.execution == in.execution && g.admitted_seq == in.admitted_seq)
          << "inputs row " << id << " (" << g.session << "," << g.status << "," << g.admitted_seq << ") vs log ("
          << in.session << "," << in.status << "," << in.admitted_seq << ")";
    }
  }
  {
    std::vector<message_state> got;
    for (auto& r : sql.rows("SELECT session_id, seq, generation, role, id, text, is_error FROM messages "
                            "ORDER BY session_id, seq"))
      got.push_back({r[0], std::stoll(r[1]), std::stoll(r[2]), r[3], r[4], r[5], r[6] == "1"});
    auto expected = rp.messages;
    std::sort(expected.begin(), expected.end(),
              [](const auto& a, const auto& b) { return std::tie(a.session, a.seq) < std::tie(b.session, b.seq); });
    EXPECT_EQ(got.size(), expected.size()) << "messages table rows vs message events";
    if (got != expected) {
      for (std::size_t i = 0; i < std::min(got.size(), expected.size()); ++i)
        if (!(got[i] == expected[i])) {
          ADD_FAILURE() << "first differing message: table " << got[i] << " vs log " << expected[i];
          break;
        }
    }
  }
  {
    // The child never compacts: the context starts at the last reset.
    for (auto& r : sql.rows("SELECT s.id, s.context_from_seq, (SELECT coalesce(max(seq), 0) FROM events e "
                            "WHERE e.session = s.key AND e.type = 'session.reset') FROM sessions s"))
      EXPECT_EQ(r[1], r[2]) << r[0] << ": sessions.context_from_seq vs the last session.reset";
  }
  return rp;
}

// The runtime recovery uses here: finish every turn at once with a short answer.
class finishing_runtime final : public session::runtime {
 public:
  [[nodiscard]] std::string name(std::string_view) const override { return "finishing"; }
  session::task<session::turn_result> run_turn(session::turn_context,
                                               std::shared_ptr<session::turn_host> host) override {
    std::vector<model::payload> events;
    events.emplace_back(model::text_ended{message_id::generate(), "recovered"});
    auto r = co_await host->record(std::move(events));
    if (!r) co_return session::turn_result{session::turn_status::interrupted, r.error().describe(), {}};
    co_return session::turn_result{};
  }
};

asio::awaitable<void> idle_all(session::session_service* svc, std::vector<session_id> sessions) {
  for (auto& s : sessions) co_await svc->idle(s);
}

// Runs recovery as a restarted node would and checks nothing is left half-started.
void recover_and_check(pool& p, store::event_store& st, const replay& before, int round) {
  SCOPED_TRACE("round " + std::to_string(round) + " recovery");
  finishing_runtime rt;
  session::session_options opts;
  opts.recovery_interval_ms = 0;
  session::session_service svc(p.executor(), st, rt, real_clock(), session::make_node_identity("crash"), opts);
  auto report = p.run(svc.start());
  ASSERT_TRUE(report) << report.error().describe();

  std::size_t open_before = 0;
  std::vector<session_id> sessions;
  for (const auto& [ses, sr] : before.sessions) {
    sessions.push_back(session_id::trusted(ses));
    if (sr.open_execution) ++open_before;
  }
  EXPECT_EQ(report->claimed, open_before)
      << "examined " << report->examined << ", skipped " << report->skipped << ", quarantined " << report->quarantined;
  EXPECT_EQ(report->quarantined, 0U);
  p.run(idle_all(&svc, sessions));

  for (const auto& s : sessions) {
    auto row = p.run(st.get_session(s));
    ASSERT_TRUE(row) << row.error().describe();
    EXPECT_FALSE(row->open_execution) << s.str() << ": execution " << row->open_execution->str()
                                      << " is still open after recovery by " << svc.node().owner() << "; lease "
                                      << (row->lease
                                              ? row->lease->owner + " expiring in " +
                                                    std::to_string(row->lease->expires_at - real_clock().now()) + " ms"
                                              : std::string("none"));
    auto calls = p.run(st.unsettled_calls(s));
    ASSERT_TRUE(calls) << calls.error().describe();
    EXPECT_TRUE(calls->empty()) << s.str() << ": " << calls->size() << " tool calls unsettled after recovery";
    auto exes = p.run(st.list_executions(s));
    ASSERT_TRUE(exes) << exes.error().describe();
    for (const auto& x : exes.value())
      EXPECT_EQ(x.status, store::execution_status::finished) << s.str() << ": " << x.id.str() << " half-started";
    // A recovered execution failed its in-flight calls instead of replaying them.
    const auto& sr = before.sessions.at(s.str());
    if (sr.open_execution) {
      for (const auto& [call, status] : sr.calls) {
        if (status != "running") continue;
        auto log = p.run(read_all(&st, s));
        ASSERT_TRUE(log);
        std::size_t settled = 0;
        bool failed = false;
        for (const auto& e : log.value()) {
          if (const auto* f = e.as<model::tool_failed>(); f != nullptr && f->call.str() == call) {
            ++settled;
            failed = true;
          }
          if (const auto* done = e.as<model::tool_succeeded>(); done != nullptr && done->call.str() == call) ++settled;
        }
        EXPECT_EQ(settled, 1U) << call;
        EXPECT_TRUE(failed) << call << " was in flight at the kill and must be failed, not replayed";
      }
    }
  }
  p.run(svc.stop());
}

int env_int(const char* name, int fallback) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' ? std::atoi(v) : fallback;
}

TEST(crash, acknowledged_work_survives_sigkill_and_recovery_leaves_nothing_half_started) {
  const int rounds = env_int("TETHER_CRASH_ROUNDS", 50);
  const char* seed_env = std::getenv("TETHER_CRASH_SEED");
  const std::uint64_t seed =
      seed_env != nullptr && *seed_env != '\0' ? std::strtoull(seed_env, nullptr, 10) : std::random_device{}();
  RecordProperty("seed", std::to_string(seed));
  std::printf("crash test: %d rounds, TETHER_CRASH_SEED=%llu\n", rounds, static_cast<unsigned long long>(seed));
  std::fflush(stdout);
  std::mt19937_64 rng(seed);

  std::string dir_template = (fs::path(testing::TempDir()) / "tether-crash-XXXXXX").string();
  ASSERT_NE(::mkdtemp(dir_template.data()), nullptr);
  const fs::path dir = dir_template;
  const std::string db = (dir / "crash.db").string();

  acknowledged acks;
  std::size_t killed_mid_run = 0;
  const auto t0 = steady::now();
  replay last;
  for (int round = 1; round <= rounds; ++round) {
    const auto after = std::chrono::milliseconds(20 + rng() % 181);
    auto run = run_child_and_kill(db, after, rng());
    ASSERT_EQ(run.status.signal, SIGKILL)
        << "round " << round << ": the child did not die by our SIGKILL (" << run.status.describe() << ")";
    const auto before = acks.lines;
    acks.parse(run.out);
    if (acks.lines > before) ++killed_mid_run;

    pool p;
    auto st = open_store(db);
    last = check_log_and_projections(p, *st, db, acks, round);
    recover_and_check(p, *st, last, round);
    st->stop();
    if (HasFatalFailure() || HasNonfatalFailure()) {
      std::printf("crash test failed in round %d; database kept at %s\n", round, db.c_str());
      return;
    }
  }
  const double secs = std::chrono::duration<double>(steady::now() - t0).count();
  std::printf(
      "crash test: %d rounds in %.1f s; %zu acknowledged operations (%zu inputs), %zu events in %zu sessions;"
      " %zu rounds killed after the child acknowledged work\n",
      rounds, secs, acks.lines, acks.inputs.size(), last.events, last.sessions.size(), killed_mid_run);
  EXPECT_GE(killed_mid_run, static_cast<std::size_t>(rounds) / 2) << "the child rarely got to work before the kill";
  std::error_code ec;
  fs::remove_all(dir, ec);
}

}  // namespace
}  // namespace tether
