#include "process/records.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>


namespace tether::process {

namespace fs = std::filesystem;

namespace {

tether::error os_error(std::string_view what, int err) {
  return {std::error_code(err, std::generic_category()), std::string(what) + ": " + std::strerror(err)};
}

}  // namespace

namespace {

constexpr std::string_view header = "tether-process 1";

std::string read_small(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string boot_id() {
  std::string id = read_small("/proc/sys/kernel/random/boot_id");
  while (!id.empty() && (id.back() == '\n' || id.back() == ' ')) id.pop_back();
  return id;
}

result<void> fsync_path(const fs::path& p, int flags) {
  const int fd = ::open(p.c_str(), flags | O_CLOEXEC);
  if (fd < 0) return os_error("cannot open " + p.string(), errno);
  const int rc = ::fsync(fd);
  const int err = errno;
  ::close(fd);
  if (rc != 0) return os_error("cannot sync " + p.string(), err);
  return ok();
}

struct record {
  process_identity process;
  process_identity owner;
};

std::optional<record> parse_record(const std::string& text) {
  std::istringstream in(text);
  std::string line;
  if (!std::getline(in, line) || line != header) return std::nullopt;
  process_identity p;
  process_identity owner;
  std::string key;
  bool has_owner = false;
  bool has_pid = false;
  bool has_pgid = false;
  bool has_start = false;
  while (in >> key) {
    if (key == "pid") {
      has_pid = static_cast<bool>(in >> p.pid);
    } else if (key == "pgid") {
      has_pgid = static_cast<bool>(in >> p.pgid);
    } else if (key == "start") {
      has_start = static_cast<bool>(in >> p.start);
    } else if (key == "boot") {
      in >> p.boot;
    } else if (key == "owner") {
      has_owner = static_cast<bool>(in >> owner.pid >> owner.start);
    } else {
      return std::nullopt;
    }
  }
  if (!has_pid || !has_pgid || !has_start || !has_owner || p.pid <= 1 || p.pgid <= 1 || p.boot.empty())
    return std::nullopt;
  return record{p, owner};
}

}  // namespace

std::optional<process_identity> identify_process(pid_t pid) {
  const std::string stat = read_small("/proc/" + std::to_string(pid) + "/stat");
  // "pid (comm) state ppid pgrp session …": comm may hold spaces and ')'.
  const auto close = stat.rfind(')');
  if (close == std::string::npos) return std::nullopt;
  std::istringstream fields(stat.substr(close + 1));
  std::string field;
  process_identity p;
  p.pid = pid;
  for (int n = 3; fields >> field; ++n) {
    if (n == 5) p.pgid = static_cast<pid_t>(std::stol(field));
    if (n == 22) {
      p.start = std::stoull(field);
      p.boot = boot_id();
      return p;
    }
  }
  return std::nullopt;
}

result<void> record_process(const fs::path& dir, const process_identity& p, const process_identity& owner) {
  std::error_code ec;
  if (!fs::is_directory(dir)) {
    fs::create_directories(dir, ec);
    if (ec) return os_error("cannot create " + dir.string(), ec.value());
    ::chmod(dir.c_str(), 0700);
    TETHER_TRY(fsync_path(dir.parent_path(), O_RDONLY | O_DIRECTORY));
    if (dir.parent_path().has_parent_path())
      TETHER_TRY(fsync_path(dir.parent_path().parent_path(), O_RDONLY | O_DIRECTORY));
  }
  std::ostringstream out;
  out << header << "\npid " << p.pid << "\npgid " << p.pgid << "\nstart " << p.start << "\nboot " << p.boot << "\nowner "
      << owner.pid << " " << owner.start << "\n";
  const std::string text = out.str();
  const fs::path final_path = dir / std::to_string(p.pid);
  const fs::path temp = dir / (std::to_string(p.pid) + ".tmp");
  const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return os_error("cannot create " + temp.string(), errno);
  const bool written = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  const int werr = errno;
  const bool synced = written && ::fsync(fd) == 0;
  const int serr = errno;
  ::close(fd);
  if (!written || !synced) {
    ::unlink(temp.c_str());
    return os_error("cannot write " + temp.string(), written ? serr : (werr != 0 ? werr : EIO));
  }
  if (::rename(temp.c_str(), final_path.c_str()) != 0) {
    const int err = errno;
    ::unlink(temp.c_str());
    return os_error("cannot rename " + temp.string(), err);
  }
  return fsync_path(dir, O_RDONLY | O_DIRECTORY);
}

void forget_process(const fs::path& dir, pid_t pid) {
  if (dir.empty()) return;
  ::unlink((dir / std::to_string(pid)).c_str());
}

cleanup_report kill_recorded_groups(const fs::path& dir) {
  cleanup_report report;
  std::error_code ec;
  fs::directory_iterator it(dir, ec);
  if (ec) return report;
  const std::string boot = boot_id();
  for (const auto& entry : it) {
    const fs::path path = entry.path();
    const auto record = parse_record(read_small(path));
    if (!record) {
      if (path.extension() != ".tmp") report.problems.push_back(path.string() + " is not a process record");
      fs::remove(path, ec);
      continue;
    }
    const auto& p = record->process;
    const auto now = identify_process(p.pid);
    const bool same_boot = p.boot == boot;
    if (now && same_boot && now->start == p.start && now->pgid == p.pgid) {
      const auto owner = identify_process(record->owner.pid);
      if (owner && owner->start == record->owner.start) {
        ++report.owned;  // a live server's own tool: not ours to kill, nor its record to remove
        continue;
      }
      ::kill(-p.pgid, SIGKILL);
      ++report.killed;
    } else {
      ++report.gone;
    }
    fs::remove(path, ec);
  }
  return report;
}

result<spawned> spawn_recorded(const spawn_options& o, const std::filesystem::path& dir) {
  auto spawned = system_spawner().spawn(o);
  if (!spawned) return spawned.error();
  if (!dir.empty()) {
    const auto id = identify_process(spawned->pid);
    const auto self = identify_process(::getpid());
    result<void> recorded = id && self ? record_process(dir, *id, *self)
                                       : result<void>(make_error(util_errc::invalid_argument, "no /proc entry"));
    if (!recorded) {
      spawned->gate.reset();  // the child sees EOF at its gate and exits without running anything
      (void)process::reap(spawned->release());
      return make_error(util_errc::invalid_argument,
                        "cannot record the process before it starts: " + recorded.error().message);
    }
  }
  const pid_t pid = spawned->pid;
  if (auto opened = spawned->open_gate(); !opened) {  // reaps the child on failure
    forget_process(dir, pid);
    return opened.error();
  }
  return std::move(spawned).value();
}

}  // namespace tether::process
