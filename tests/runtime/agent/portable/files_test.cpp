// portable/files: which files of an agent's home are its session state,
// read into chunks (SQLite databases as one consistent copy) and written
// back into another home.
#include "runtime/agent/portable/files.h"

#include <sqlite3.h>

#include <fstream>
#include <set>

#include <gtest/gtest.h>

#include "../agent_test_support.h"
#include "util/sha256.h"

namespace tether::runtime::agent::portable {
namespace {

using test::temp_dir;
namespace fs = std::filesystem;

void put(const fs::path& home, const std::string& rel, const std::string& text) {
  fs::create_directories((home / rel).parent_path());
  std::ofstream(home / rel) << text;
}

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::set<std::string> paths(const read_result& r) {
  std::set<std::string> out;
  for (const auto& f : r.files) out.insert(f.path);
  return out;
}

// Every chunk of `r` by hash, as a restore would get them.
chunk_bytes all_chunks(const read_result& r) { return r.read; }

model::agent_state_saved saved_of(const read_result& r, std::string kind, std::string workspace) {
  return {std::move(kind), "agent-1", 0, std::move(workspace), r.files, r.bytes, 0};
}

// The same home for every family: state, configuration Tether writes, and credentials.
void fill(const fs::path& home) {
  put(home, ".claude/projects/-srv-w/agent-1.jsonl", "{\"type\":\"user\"}\n");
  put(home, ".claude/.credentials.json", "{\"token\":\"sk-secret\"}");
  put(home, ".claude/.claude.json", "{}");
  put(home, ".claude/sessions/123.json", "{}");
  put(home, ".codex/sessions/2026/12/07/rollout-1-th.jsonl", "{\"type\":\"session_meta\"}\n");
  put(home, ".codex/auth.json", "{\"OPENAI_API_KEY\":\"sk-secret\"}");
  put(home, ".codex/config.toml", "model = \"m\"");
  put(home, ".local/share/opencode/auth.json", "{\"anthropic\":\"sk-secret\"}");
  put(home, "mcp.json", "{\"TETHER_RUN_TOKEN\":\"t\"}");
  put(home, "opencode.json", "{}");
  put(home, "tmp/scratch", "x");
  put(home, ".cache/c", "x");
  put(home, "keys/id.pem", "-----BEGIN");
  put(home, ".netrc", "machine x password y");
  put(home, "notes/my-credentials.txt", "y");
  put(home, "agent/state.json", "{\"id\":1}");
}

TEST(portable_files, each_program_carries_its_session_files_and_never_a_credential_or_tethers_configuration) {
  temp_dir dir;
  fill(dir.path());
  auto claude = read_state(dir.path(), family::claude, nullptr);
  ASSERT_TRUE(claude) << claude.error().describe();
  EXPECT_EQ(paths(*claude), (std::set<std::string>{".claude/projects/-srv-w/agent-1.jsonl"}));
  auto codex = read_state(dir.path(), family::codex, nullptr);
  ASSERT_TRUE(codex);
  EXPECT_EQ(paths(*codex), (std::set<std::string>{".codex/sessions/2026/12/07/rollout-1-th.jsonl"}));
  auto any = read_state(dir.path(), family::any, nullptr);
  ASSERT_TRUE(any);
  const auto all = paths(*any);
  for (const std::string withheld :
       {".claude/.credentials.json", ".codex/auth.json", ".local/share/opencode/auth.json", "mcp.json",
        "opencode.json", ".codex/config.toml", ".claude/.claude.json", "keys/id.pem", ".netrc",
        "notes/my-credentials.txt", "tmp/scratch", ".cache/c"})
    EXPECT_FALSE(all.contains(withheld)) << withheld;
  EXPECT_TRUE(all.contains("agent/state.json"));
  EXPECT_TRUE(all.contains(".claude/projects/-srv-w/agent-1.jsonl"));
  for (const auto& [sha, bytes] : any->read) EXPECT_EQ(bytes.find("sk-secret"), std::string::npos);
}

TEST(portable_files, a_link_out_of_the_home_is_not_followed) {
  temp_dir dir;
  const auto home = dir.path() / "home";
  put(dir.path(), "outside/secret.jsonl", "the node's file");
  fs::create_directories(home / ".claude/projects");
  fs::create_directory_symlink(dir.path() / "outside", home / ".claude/projects/-srv-w");
  fs::create_symlink(dir.path() / "outside/secret.jsonl", home / ".claude/projects/link.jsonl");
  auto r = read_state(home, family::claude, nullptr);
  ASSERT_TRUE(r) << r.error().describe();
  EXPECT_TRUE(r->files.empty());
}

TEST(portable_files, a_flood_of_files_or_bytes_in_the_home_is_refused_not_read) {
  temp_dir dir;
  for (int i = 0; i < 5; ++i) put(dir.path(), ".codex/sessions/r" + std::to_string(i) + ".jsonl", std::string(100, 'x'));
  EXPECT_TRUE(read_state(dir.path(), family::codex, nullptr, read_limits{5, 500}));
  auto files = read_state(dir.path(), family::codex, nullptr, read_limits{4, 500});
  ASSERT_FALSE(files);
  EXPECT_NE(files.error().message.find("more than 4"), std::string::npos) << files.error().message;
  auto bytes = read_state(dir.path(), family::codex, nullptr, read_limits{5, 499});
  ASSERT_FALSE(bytes);
  EXPECT_NE(bytes.error().message.find("larger than 499"), std::string::npos) << bytes.error().message;
}

TEST(portable_files, a_file_is_cut_into_chunks_of_one_mib_and_an_unchanged_one_is_not_read_again) {
  temp_dir dir;
  const std::string big((1U << 20U) + 10, 'z');
  put(dir.path(), ".codex/sessions/r.jsonl", big);
  read_cache cache;
  auto first = read_state(dir.path(), family::codex, &cache);
  ASSERT_TRUE(first);
  ASSERT_EQ(first->files.size(), 1U);
  EXPECT_EQ(first->files[0].size, static_cast<std::int64_t>(big.size()));
  ASSERT_EQ(first->files[0].chunks.size(), 2U);
  EXPECT_EQ(first->files[0].chunks[1], sha256_hex(std::string(10, 'z')));
  auto again = read_state(dir.path(), family::codex, &cache);
  ASSERT_TRUE(again);
  EXPECT_EQ(again->files, first->files);
  EXPECT_TRUE(again->read.empty()) << "the cache answered for the unchanged file";
  std::ofstream(dir.path() / ".codex/sessions/r.jsonl", std::ios::app) << "more";
  auto changed = read_state(dir.path(), family::codex, &cache);
  ASSERT_TRUE(changed);
  EXPECT_EQ(changed->files[0].chunks[0], first->files[0].chunks[0]) << "the first MiB is the same chunk";
  EXPECT_NE(changed->files[0].chunks[1], first->files[0].chunks[1]);
}

TEST(portable_files, claudes_project_directory_follows_the_workspace_on_restore) {
  EXPECT_EQ(claude_project_name("/srv/data/workspaces/ses_01M.x"), "-srv-data-workspaces-ses-01M-x");
  temp_dir a;
  temp_dir b;
  const std::string from = claude_project_name("/node-a/ws/ses_1");
  put(a.path(), ".claude/projects/" + from + "/agent-1.jsonl", "line 1\nline 2\n");
  auto got = read_state(a.path(), family::claude, nullptr);
  ASSERT_TRUE(got);
  auto w = write_state(b.path(), family::claude, saved_of(*got, "claude-print", "/node-a/ws/ses_1"),
                       all_chunks(*got), "/node-b/data/ws/ses_1");
  ASSERT_TRUE(w) << w.error().describe();
  EXPECT_EQ(slurp(b.path() / ".claude/projects" / claude_project_name("/node-b/data/ws/ses_1") / "agent-1.jsonl"),
            "line 1\nline 2\n");
  EXPECT_FALSE(fs::exists(b.path() / ".claude/projects" / from));
}

TEST(portable_files, a_restore_without_every_chunk_or_with_a_path_of_another_program_writes_nothing_of_it) {
  temp_dir a;
  temp_dir b;
  put(a.path(), ".codex/sessions/r.jsonl", "rollout");
  auto got = read_state(a.path(), family::codex, nullptr);
  ASSERT_TRUE(got);
  auto missing = write_state(b.path(), family::codex, saved_of(*got, "codex", "/w"), {}, "/w");
  ASSERT_FALSE(missing);
  EXPECT_FALSE(fs::exists(b.path() / ".codex/sessions/r.jsonl"));
  auto foreign = saved_of(*got, "codex", "/w");
  foreign.manifest[0].path = ".bashrc";
  ASSERT_TRUE(write_state(b.path(), family::codex, foreign, all_chunks(*got), "/w"));
  EXPECT_FALSE(fs::exists(b.path() / ".bashrc")) << "not a codex state path: never written";
}

// A database in write-ahead-log mode whose newest rows are only in the log.
class wal_database {
 public:
  explicit wal_database(const fs::path& path) {
    fs::create_directories(path.parent_path());
    EXPECT_EQ(sqlite3_open(path.c_str(), &db_), SQLITE_OK);
    exec("PRAGMA journal_mode=WAL; PRAGMA wal_autocheckpoint=0; CREATE TABLE m(t TEXT);");
  }
  ~wal_database() { sqlite3_close(db_); }
  void exec(const std::string& sql) { EXPECT_EQ(sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, nullptr), SQLITE_OK); }

 private:
  sqlite3* db_ = nullptr;
};

// The first column of each row `sql` selects from the database at `path`.
std::vector<std::string> rows_of(const fs::path& path, const char* sql = "SELECT t FROM m ORDER BY rowid") {
  sqlite3* db = nullptr;
  std::vector<std::string> out;
  if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK)
    sqlite3_exec(
        db, sql,
        [](void* o, int, char** v, char**) {
          static_cast<std::vector<std::string>*>(o)->emplace_back(v[0]);
          return 0;
        },
        &out, nullptr);
  sqlite3_close(db);
  return out;
}

TEST(portable_files, a_database_is_carried_whole_with_what_only_its_log_held_and_an_old_log_there_is_removed) {
  temp_dir a;
  temp_dir b;
  const std::string rel = ".local/share/opencode/opencode.db";
  wal_database db(a.path() / rel);  // stays open: nothing is checkpointed
  db.exec("INSERT INTO m VALUES('said in turn 1'), ('said in turn 2')");
  ASSERT_TRUE(fs::exists(a.path() / (rel + "-wal")));
  auto got = read_state(a.path(), family::opencode, nullptr);
  ASSERT_TRUE(got) << got.error().describe();
  EXPECT_EQ(paths(*got), (std::set<std::string>{rel})) << "the log is not a file of the state";
  {
    wal_database stale(b.path() / rel);
    stale.exec("INSERT INTO m VALUES('an older turn on this node')");
  }
  put(b.path(), rel + "-wal", "garbage that must not be applied");
  auto w = write_state(b.path(), family::opencode, saved_of(*got, "opencode", "/w"), all_chunks(*got), "/w");
  ASSERT_TRUE(w) << w.error().describe();
  EXPECT_FALSE(fs::exists(b.path() / (rel + "-wal")));
  EXPECT_EQ(rows_of(b.path() / rel), (std::vector<std::string>{"said in turn 1", "said in turn 2"}));
}

// OpenCode runs a resumed session in the directory its database names: a
// restore for another workspace (a fork, another node) moves its sessions
// there, and leaves other directories and the rest of the file alone.
TEST(portable_files, opencodes_sessions_follow_the_workspace_on_restore) {
  temp_dir a;
  temp_dir b;
  const std::string rel = ".local/share/opencode/opencode.db";
  {
    wal_database db(a.path() / rel);
    db.exec("CREATE TABLE session(id TEXT, directory TEXT, path TEXT);"
            "INSERT INTO session VALUES('s1', '/old/ws', 'old/ws'), ('s2', '/elsewhere', 'elsewhere');"
            "INSERT INTO m VALUES('kept');"
            // The agent's own trigger: never run by the move.
            "CREATE TRIGGER planted AFTER UPDATE ON session BEGIN INSERT INTO m VALUES('trigger ran'); END;");
  }
  auto got = read_state(a.path(), family::opencode, nullptr);
  ASSERT_TRUE(got) << got.error().describe();
  auto w = write_state(b.path(), family::opencode, saved_of(*got, "opencode-run", "/old/ws"), all_chunks(*got),
                       "/data/workspaces/ses_fork");
  ASSERT_TRUE(w) << w.error().describe();
  const auto rows = rows_of(b.path() / rel, "SELECT id || ' ' || directory || ' ' || path FROM session ORDER BY id");
  EXPECT_EQ(rows, (std::vector<std::string>{"s1 /data/workspaces/ses_fork data/workspaces/ses_fork",
                                            "s2 /elsewhere elsewhere"}));
  EXPECT_EQ(rows_of(b.path() / rel), (std::vector<std::string>{"kept"}));
  // The same workspace: the file as saved.
  temp_dir c;
  ASSERT_TRUE(write_state(c.path(), family::opencode, saved_of(*got, "opencode-run", "/old/ws"), all_chunks(*got),
                          "/old/ws"));
  EXPECT_EQ(rows_of(c.path() / rel), (std::vector<std::string>{"kept"}));
}

}  // namespace
}  // namespace tether::runtime::agent::portable
