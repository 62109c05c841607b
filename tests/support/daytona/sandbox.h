// The Daytona fake's sandboxes: each one a directory on this machine that
// is the root of its own filesystem (/home/daytona and /tmp writable, the
// host's /usr and /etc read-only), whose commands run under bubblewrap in
// their own PID namespace, so a stopped sandbox's processes are gone and
// its files stay.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "util/result.h"

namespace tether::test::daytona {

// A sandbox's namespaces, while it is started: bubblewrap's PID, mount, IPC
// and UTS namespaces around the root at `root`, held by a sleeping init.
// Every command enters them (nsenter), so the sandbox's commands see each
// other's processes, as in a container; stop() ends the init and with it
// every process of the sandbox.
class namespaces {
 public:
  ~namespaces() { stop(); }
  // `read_only`: more of this machine seen inside (path here, path inside).
  result<void> start(const std::filesystem::path& root,
                     const std::vector<std::pair<std::filesystem::path, std::string>>& read_only = {});
  void stop();
  [[nodiscard]] bool running() const { return inner_ > 0; }
  // The argv that runs `command` (`sh -c`) in them, with exactly HOME, PATH
  // and `envs`, from `cwd` (inside; default /home/daytona).
  [[nodiscard]] std::vector<std::string> argv(const std::map<std::string, std::string>& envs, const std::string& cwd,
                                              const std::string& command) const;

 private:
  pid_t outer_ = -1;  // bubblewrap, here
  pid_t inner_ = -1;  // the sleeper inside, whose namespaces commands enter
};

// A path inside the sandbox (absolute, or relative to /home/daytona) on this
// machine; nullopt for one outside /home/daytona and /tmp or with "..".
std::optional<std::filesystem::path> host_path(const std::filesystem::path& root, const std::string& inside);

// One session command: its output, as Daytona logs it (runs of stdout after
// 01 01 01, of stderr after 02 02 02), and its exit code once it ended.
class command {
 public:
  command(std::string id, std::string text) : id_(std::move(id)), text_(std::move(text)) {}
  ~command();
  command(const command&) = delete;
  command& operator=(const command&) = delete;

  // Spawns argv with stdin, stdout and stderr on pipes and reads them on a thread.
  result<void> start(const std::vector<std::string>& argv);

  [[nodiscard]] const std::string& id() const { return id_; }
  [[nodiscard]] const std::string& text() const { return text_; }
  [[nodiscard]] std::optional<int> exit_code() const;
  [[nodiscard]] std::string log() const;
  [[nodiscard]] std::string out() const;
  [[nodiscard]] std::string err() const;
  // The log from `offset` on (what is there now), and whether the command ended.
  [[nodiscard]] std::pair<std::string, bool> log_from(std::size_t offset) const;
  // Waits until it ended, up to `limit`; whether it did.
  bool wait(std::chrono::milliseconds limit) const;
  // Bytes for its stdin; false once it ended (or closed its stdin).
  bool input(const std::string& data);
  // SIGKILL to its process group (its PID namespace dies with bwrap).
  void kill();

 private:
  void read_all();

  std::string id_;
  std::string text_;
  mutable std::mutex mu_;
  mutable std::condition_variable changed_;
  pid_t pid_ = -1;
  int stdin_fd_ = -1;
  int stdout_fd_ = -1;
  int stderr_fd_ = -1;
  std::thread reader_;
  std::string log_, out_, err_;
  int last_stream_ = 0;
  std::optional<int> exit_code_;
};

}  // namespace tether::test::daytona
