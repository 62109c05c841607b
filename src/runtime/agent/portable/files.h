// portable/files — which files of an agent's home are its own session
// state, read into chunks and written back (the kinds' session-state.md
// say what each program keeps). Blocking file work: call from a thread
// that may block (keeper.h runs it on its pool).
//
//   auto got = read_state(home, family_of(kind), &cache);  // the files, chunked
//   ... put got->fresh chunks, record agent.state.saved{got->files} ...
//   write_state(home, saved, raw_chunks, workspace);       // on another node
//
// What is read, by family (the kind's program):
//   claude    .claude/projects/**          (the conversation, JSON lines)
//   codex     .codex/sessions/**           (the rollouts)
//   opencode  .local/share/opencode/opencode.db, storage/**  (SQLite)
//   any       the whole home but tmp/, .cache/, .npm/ and the databases'
//             -wal/-shm files (an ACP agent Tether does not know)
// Never, whatever the family: what holds a credential (auth.json,
// .credentials.json, *.pem, *.key, .netrc, anything named credential*) and
// what Tether writes from the profile each turn (mcp.json, opencode.json,
// .codex/config.toml, .claude/.claude.json, .claude/settings.json): a
// restored home gets those from the profile again. Symbolic links and
// special files are skipped.
//
// A SQLite database (a file starting with SQLite's header) is copied with
// its write-ahead log into a private directory, opened there (SQLite applies
// the log) and checkpointed, so the saved file is one consistent database
// holding what only the log held; the -wal and -shm files are never saved.
// Restoring removes them before the database is written. OpenCode's
// database names each session's directory: restored for another workspace
// (a fork, another node's path), its sessions are moved to that workspace
// in a private copy first, or OpenCode would run the session in the old one.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "model/events.h"
#include "util/result.h"

namespace tether::runtime::agent::portable {

enum class family { claude, codex, opencode, any };
family family_of(std::string_view kind);

// Whether `rel` (a path under the home) is part of `f`'s saved state.
bool is_state_path(family f, std::string_view rel);

// A chunk's raw bytes by SHA-256 (hex).
using chunk_bytes = std::map<std::string, std::string>;

// What read_state() remembers between saves of one home: a file whose size
// and modification time did not change is not read again.
struct read_cache {
  struct seen {
    std::int64_t size = 0;
    std::int64_t mtime_ns = 0;
    model::state_file file;
  };
  std::map<std::string, seen> files;
};

struct read_result {
  std::vector<model::state_file> files;  // sorted by path
  std::int64_t bytes = 0;                // their total size
  chunk_bytes read;                      // the chunks of the files read now (not those the cache answered)
};

// What read_state() reads at most: the agent writes its home, so a flood of
// files or bytes there is refused (agent_errc::io, naming the limit) rather
// than read into memory.
struct read_limits {
  std::size_t max_files = 10'000;
  std::int64_t max_bytes = 256LL << 20;  // all files together
};

// Reads `f`'s state files from `home`, each cut into chunks of
// model::state_file::chunk_bytes. `cache` may be null.
result<read_result> read_state(const std::filesystem::path& home, family f, read_cache* cache,
                               read_limits limits = {});

// The claude projects directory's name for a working directory: each
// character outside [A-Za-z0-9-] becomes '-'.
std::string claude_project_name(std::string_view workspace);

// Where a saved file goes in a home whose agent runs in `workspace`:
// claude's files of the saved workspace's project move to this one's.
std::string restored_path(family f, const model::agent_state_saved& saved, std::string_view workspace,
                          std::string_view path);

// Writes the saved state into `home`: first removes `f`'s state files there
// (a database's -wal and -shm too), then writes each file (0600 or its saved
// mode's owner bits, directories 0700) beneath the home, never through a
// link. `chunks` must hold every chunk of the manifest, verified. An error
// names the file.
result<void> write_state(const std::filesystem::path& home, family f, const model::agent_state_saved& saved,
                         const chunk_bytes& chunks, std::string_view workspace);

}  // namespace tether::runtime::agent::portable
