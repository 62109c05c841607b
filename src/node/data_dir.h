// data_dir: the one directory a Tether process keeps its state in (database,
// WAL, token, workspaces, spilled tool outputs), made private and held
// exclusively for the life of the process.
//
//   auto dir = node::claim_data_dir("tether-data", warn);   // create, tighten, lock
//   if (!dir) fail(dir.error());   // node_errc::data_dir_locked: another process has it
//   ... dir->path() ...            // canonical; the lock is held until `dir` is destroyed
//
// Exclusive: an advisory flock(LOCK_EX) on DIR/lock, taken without waiting.
// A second `tether serve` (or `tether run`) on the same directory gets
// node_errc::data_dir_locked, whose message names the directory and the pid
// that holds it; it has written nothing. The descriptor is close-on-exec, so
// no child process (a tool, an agent CLI) keeps the lock after the server
// dies: the kernel releases it with the last descriptor, however the process
// ends (SIGKILL included), so a stale lock file never blocks a restart.
//
// Private: the directory's mode becomes 0700 and the files and directories
// directly in it 0600/0700; each looser mode is reported through `warn`
// (one line per path) before it is tightened. Files created later are
// private through the process's umask (077), which serve and run set first.
#pragma once

#include <filesystem>
#include <functional>
#include <string>

#include "node/errors.h"
#include "util/result.h"

namespace tether::node {

class data_dir {
 public:
  data_dir(std::filesystem::path path, int lock_fd) : path_(std::move(path)), lock_fd_(lock_fd) {}
  ~data_dir();
  data_dir(data_dir&& o) noexcept;
  data_dir& operator=(data_dir&& o) noexcept;
  data_dir(const data_dir&) = delete;
  data_dir& operator=(const data_dir&) = delete;

  [[nodiscard]] const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
  int lock_fd_ = -1;
};

// Creates `wanted` (0700) if missing, tightens its modes, and locks it.
result<data_dir> claim_data_dir(const std::string& wanted, const std::function<void(const std::string&)>& warn);

}  // namespace tether::node
