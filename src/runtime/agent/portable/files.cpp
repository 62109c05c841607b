#include "runtime/agent/portable/files.h"

#include <fcntl.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <system_error>
#include <utility>

#include "runtime/agent/errors.h"
#include "util/beneath.h"
#include "util/sha256.h"

namespace tether::runtime::agent::portable {

namespace fs = std::filesystem;

namespace {

constexpr std::size_t max_file_bytes = 1U << 30U;  // a state file past 1 GiB is not carried
constexpr std::string_view sqlite_magic{"SQLite format 3\0", 16};
constexpr std::string_view opencode_database = ".local/share/opencode/opencode.db";

bool starts_with_part(std::string_view rel, std::string_view dir) {
  return rel.size() > dir.size() && rel.starts_with(dir) && rel[dir.size()] == '/';
}

std::string_view base_name(std::string_view rel) {
  const auto slash = rel.rfind('/');
  return slash == std::string_view::npos ? rel : rel.substr(slash + 1);
}

// Credentials and what Tether writes from the profile each turn.
bool is_withheld(std::string_view rel) {
  const auto name = base_name(rel);
  for (const std::string_view n : {"auth.json", ".credentials.json", ".netrc", "mcp.json", "opencode.json"})
    if (name == n) return true;
  for (const std::string_view r : {".codex/config.toml", ".claude/.claude.json", ".claude/settings.json"})
    if (rel == r) return true;
  if (name.ends_with(".pem") || name.ends_with(".key")) return true;
  std::string lower(name);
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  return lower.find("credential") != std::string::npos;
}

bool is_journal(std::string_view rel) {
  return rel.ends_with("-wal") || rel.ends_with("-shm") || rel.ends_with("-journal");
}

error file_error(const std::string& what, const std::error_code& ec) {
  return make_error(agent_errc::io, what + ": " + ec.message());
}

// The regular files under `home` that `keep` keeps, as relative paths,
// sorted (a link, a FIFO or a socket is skipped).
template <class Keep>
result<std::vector<std::string>> list_files(const fs::path& home, Keep keep) {
  std::vector<std::string> out;
  std::error_code ec;
  fs::recursive_directory_iterator it(home, fs::directory_options::skip_permission_denied, ec);
  if (ec) return file_error("listing " + home.string(), ec);
  for (const fs::recursive_directory_iterator end; it != end; it.increment(ec)) {
    if (ec) return file_error("listing " + home.string(), ec);
    const auto st = it->symlink_status(ec);
    if (ec) continue;  // gone meanwhile
    if (fs::is_directory(st)) continue;
    if (!fs::is_regular_file(st)) continue;
    auto rel = it->path().lexically_relative(home).generic_string();
    if (keep(rel)) out.push_back(std::move(rel));
  }
  std::sort(out.begin(), out.end());
  return out;
}

// A private directory for a copy of a database (0700, under /tmp), removed
// with it.
class private_dir {
 public:
  static result<private_dir> make(const std::string& what) {
    char dir_template[] = "/tmp/tether-state-XXXXXX";
    const char* dir = ::mkdtemp(dir_template);
    if (dir == nullptr) return file_error("a directory for a copy of " + what, {errno, std::generic_category()});
    return private_dir(dir);
  }
  private_dir(private_dir&& o) noexcept : path_(std::exchange(o.path_, {})) {}
  private_dir& operator=(private_dir&&) = delete;
  ~private_dir() {
    std::error_code ignored;
    if (!path_.empty()) fs::remove_all(path_, ignored);
  }
  [[nodiscard]] const fs::path& path() const { return path_; }

  result<void> write(const std::string& name, const std::string& bytes) const {
    auto fd = beneath::open_root(path_);
    if (!fd) return fd.error();
    return beneath::replace_file(fd->get(), name, bytes, 0600, (path_ / name).string());
  }
  result<std::string> read(const std::string& name, const std::string& what) const {
    auto fd = beneath::open_root(path_);
    if (!fd) return fd.error();
    auto file = beneath::open_regular(fd->get(), name);
    if (!file) return file.error();
    return beneath::read_all(file->get(), max_file_bytes, what);
  }

 private:
  explicit private_dir(fs::path p) : path_(std::move(p)) {}
  fs::path path_;
};

// `sql` run on the database `db` of `dir`, each `?` bound to `params` in order.
result<void> run_sql(const private_dir& dir, const std::string& what, const char* sql,
                     const std::vector<std::string>& params = {}) {
  sqlite3* db = nullptr;
  const std::string file = (dir.path() / "db").string();
  int rc = sqlite3_open_v2(file.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOFOLLOW, nullptr);
  if (rc == SQLITE_OK) {
    // The agent wrote this database: none of its triggers or views run here,
    // its schema is not trusted, and no statement can corrupt the file.
    sqlite3_db_config(db, SQLITE_DBCONFIG_ENABLE_TRIGGER, 0, nullptr);
    sqlite3_db_config(db, SQLITE_DBCONFIG_ENABLE_VIEW, 0, nullptr);
    sqlite3_db_config(db, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, nullptr);
    sqlite3_db_config(db, SQLITE_DBCONFIG_DEFENSIVE, 1, nullptr);
  }
  sqlite3_stmt* st = nullptr;
  if (rc == SQLITE_OK && params.empty()) rc = sqlite3_exec(db, sql, nullptr, nullptr, nullptr);
  if (rc == SQLITE_OK && !params.empty()) {
    // Several statements: each prepared and stepped in turn, with its own parameters.
    const char* rest = sql;
    std::size_t next = 0;
    while (rc == SQLITE_OK && rest != nullptr && *rest != '\0') {
      rc = sqlite3_prepare_v2(db, rest, -1, &st, &rest);
      if (rc != SQLITE_OK || st == nullptr) break;
      for (int i = 1; i <= sqlite3_bind_parameter_count(st) && next < params.size(); ++i, ++next)
        sqlite3_bind_text(st, i, params[next].c_str(), static_cast<int>(params[next].size()), SQLITE_TRANSIENT);
      rc = sqlite3_step(st);
      rc = rc == SQLITE_DONE || rc == SQLITE_ROW ? SQLITE_OK : rc;
      sqlite3_finalize(st);
      st = nullptr;
    }
  }
  std::string why = rc == SQLITE_OK ? std::string() : std::string(db != nullptr ? sqlite3_errmsg(db) : "out of memory");
  sqlite3_close(db);
  if (rc != SQLITE_OK) return make_error(agent_errc::io, what + ": " + why);
  return ok();
}

// A database copied with its write-ahead log into a private directory,
// opened there (which applies the log) and checkpointed: one consistent file.
result<std::string> database_snapshot(int root, const std::string& rel, std::string main) {
  auto dir = private_dir::make(rel);
  if (!dir) return dir.error();
  TETHER_TRY(dir->write("db", main));
  if (auto wal = beneath::open_regular(root, rel + "-wal")) {
    auto bytes = beneath::read_all(wal->get(), max_file_bytes, rel + "-wal");
    if (!bytes) return bytes.error();
    TETHER_TRY(dir->write("db-wal", *bytes));
  }
  TETHER_TRY(run_sql(*dir, "copying the database " + rel, "PRAGMA wal_checkpoint(TRUNCATE); PRAGMA journal_mode=DELETE"));
  return dir->read("db", rel);
}

// OpenCode's database names each session's directory (and its path under
// the project's worktree, "/" for a workspace outside git): a session
// restored for another workspace would be run in the old one, so they are
// moved to `to` in a private copy before the file is written.
result<std::string> opencode_moved(const std::string& bytes, std::string_view from, std::string_view to,
                                   const std::string& rel) {
  auto dir = private_dir::make(rel);
  if (!dir) return dir.error();
  TETHER_TRY(dir->write("db", bytes));
  auto relative = [](std::string_view p) { return std::string(p.starts_with('/') ? p.substr(1) : p); };
  TETHER_TRY(run_sql(*dir, "moving the sessions of " + rel + " to the workspace",
                     "UPDATE session SET directory = ? WHERE directory = ?; "
                     "UPDATE session SET path = ? WHERE path = ?;",
                     {std::string(to), std::string(from), relative(to), relative(from)}));
  return dir->read("db", rel);
}

model::state_file chunked(std::string path, const std::string& bytes, std::int64_t mode, chunk_bytes& read) {
  model::state_file f{std::move(path), static_cast<std::int64_t>(bytes.size()), mode, {}};
  for (std::size_t at = 0; at < bytes.size(); at += model::state_file::chunk_bytes) {
    auto piece = bytes.substr(at, model::state_file::chunk_bytes);
    auto sha = sha256_hex(piece);
    f.chunks.push_back(sha);
    read.emplace(std::move(sha), std::move(piece));
  }
  return f;
}

}  // namespace

family family_of(std::string_view kind) {
  if (kind.find("claude") != std::string_view::npos) return family::claude;
  if (kind.find("codex") != std::string_view::npos) return family::codex;
  if (kind.find("opencode") != std::string_view::npos) return family::opencode;
  return family::any;
}

bool is_state_path(family f, std::string_view rel) {
  if (rel.empty() || is_withheld(rel)) return false;
  switch (f) {
    case family::claude:
      return starts_with_part(rel, ".claude/projects");
    case family::codex:
      return starts_with_part(rel, ".codex/sessions");
    case family::opencode:
      return rel == opencode_database || starts_with_part(rel, ".local/share/opencode/storage");
    case family::any:
      for (const std::string_view skip : {"tmp", ".cache", ".npm"})
        if (rel == skip || starts_with_part(rel, skip)) return false;
      return !is_journal(rel);
  }
  return false;
}

result<read_result> read_state(const fs::path& home, family f, read_cache* cache, read_limits limits) {
  auto root = beneath::open_root(home);
  if (!root) return root.error();
  auto paths = list_files(home, [f](const std::string& rel) { return is_state_path(f, rel); });
  if (!paths) return paths.error();
  if (paths->size() > limits.max_files)
    return make_error(agent_errc::io, "its state has " + std::to_string(paths->size()) + " files, more than " +
                                          std::to_string(limits.max_files));
  read_result out;
  read_cache next;
  for (auto& rel : *paths) {
    auto fd = beneath::open_regular(root->get(), rel);
    if (!fd) continue;  // gone, or replaced by a link, since it was listed
    struct stat st {};
    if (::fstat(fd->get(), &st) != 0) continue;
    if (out.bytes + st.st_size > limits.max_bytes)
      return make_error(agent_errc::io, "its state is larger than " + std::to_string(limits.max_bytes) + " bytes");
    const std::int64_t mtime = static_cast<std::int64_t>(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec;
    const std::int64_t mode = st.st_mode & 0777;
    if (cache != nullptr) {
      const auto it = cache->files.find(rel);
      if (it != cache->files.end() && it->second.size == st.st_size && it->second.mtime_ns == mtime) {
        out.bytes += it->second.file.size;
        out.files.push_back(it->second.file);
        next.files.emplace(rel, it->second);
        continue;
      }
    }
    auto bytes = beneath::read_all(fd->get(), max_file_bytes, rel);
    if (!bytes) return bytes.error();
    const bool database = bytes->size() >= sqlite_magic.size() && bytes->compare(0, 16, sqlite_magic) == 0;
    if (database) {
      auto snap = database_snapshot(root->get(), rel, std::move(*bytes));
      if (!snap) return snap.error();
      bytes = std::move(snap);
    }
    auto file = chunked(rel, *bytes, mode, out.read);
    out.bytes += file.size;
    // A database's file does not say whether its log changed: read again each time.
    if (!database) next.files.emplace(rel, read_cache::seen{st.st_size, mtime, file});
    out.files.push_back(std::move(file));
  }
  if (cache != nullptr) *cache = std::move(next);
  return out;
}

std::string claude_project_name(std::string_view workspace) {
  std::string out(workspace);
  for (auto& c : out)
    if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-')) c = '-';
  return out;
}

std::string restored_path(family f, const model::agent_state_saved& saved, std::string_view workspace,
                          std::string_view path) {
  if (f != family::claude || saved.workspace.empty()) return std::string(path);
  const std::string from = ".claude/projects/" + claude_project_name(saved.workspace) + "/";
  if (!path.starts_with(from)) return std::string(path);
  return ".claude/projects/" + claude_project_name(workspace) + "/" + std::string(path.substr(from.size()));
}

result<void> write_state(const fs::path& home, family f, const model::agent_state_saved& saved,
                         const chunk_bytes& chunks, std::string_view workspace) {
  auto root = beneath::open_root(home);
  if (!root) return root.error();
  // What the home holds of an older state goes first: a database's old log
  // would otherwise be applied to the restored file.
  auto old = list_files(home, [f](const std::string& rel) {
    return is_state_path(f, rel) || (is_journal(rel) && is_state_path(f, rel.substr(0, rel.rfind('-'))));
  });
  if (!old) return old.error();
  for (const auto& rel : *old) {
    std::error_code ec;
    fs::remove(home / rel, ec);
    if (ec && ec != std::errc::no_such_file_or_directory) return file_error("removing " + rel, ec);
  }
  for (const auto& file : saved.manifest) {
    std::string bytes;
    bytes.reserve(static_cast<std::size_t>(file.size));
    for (const auto& sha : file.chunks) {
      const auto it = chunks.find(sha);
      if (it == chunks.end()) return make_error(agent_errc::io, "no chunk " + sha + " of " + file.path);
      bytes += it->second;
    }
    if (static_cast<std::int64_t>(bytes.size()) != file.size)
      return make_error(agent_errc::io, file.path + ": its chunks hold " + std::to_string(bytes.size()) +
                                                      " bytes, not " + std::to_string(file.size));
    const auto rel = restored_path(f, saved, workspace, file.path);
    if (!is_state_path(f, rel)) continue;  // not this program's: never written into its home
    if (f == family::opencode && rel == opencode_database && !saved.workspace.empty() && saved.workspace != workspace &&
        !workspace.empty()) {
      auto moved = opencode_moved(bytes, saved.workspace, workspace, rel);
      if (!moved) return moved.error();
      bytes = std::move(*moved);
    }
    const auto mode = static_cast<mode_t>((file.mode & 0700) | 0600);
    TETHER_TRY(beneath::write_file(root->get(), rel, bytes, mode));
  }
  return ok();
}

}  // namespace tether::runtime::agent::portable
