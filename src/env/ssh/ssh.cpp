#include "env/ssh/ssh.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <mutex>
#include <optional>
#include <sstream>
#include <thread>
#include <utility>
#include <vector>

#include "env/ssh/command.h"
#include "env/tree.h"
#include "process/run_to_end.h"
#include "util/random.h"
#include "util/sha256.h"

namespace tether::env::ssh {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

namespace {

std::vector<std::string> local_environment() {
  const char* home = std::getenv("HOME");
  return {"PATH=/usr/bin:/bin", std::string("HOME=") + (home != nullptr ? home : "/"), "LC_ALL=C"};
}

bool contains(std::string_view text, std::string_view what) { return text.find(what) != std::string_view::npos; }

// A name or an IPv4 address that ssh's -R takes as it is: no ':', no option.
bool forwardable_host(std::string_view h) {
  if (h.empty() || h.size() > 253 || h[0] == '-') return false;
  return std::all_of(h.begin(), h.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '-';
  });
}

// A port of 127.0.0.1 free now (bound, read and closed).
result<int> free_loopback_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return error(env_errc::failed, std::string("no socket for a local port: ") + std::strerror(errno));
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  const bool got = ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 &&
                   ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0;
  const int err = errno;
  ::close(fd);
  if (!got) return error(env_errc::failed, std::string("no free local port: ") + std::strerror(err));
  return static_cast<int>(ntohs(a.sin_port));
}

// The first line of `out` that is a port number (what `ssh -O forward -R 0:…` prints).
std::optional<std::string> port_line(std::string_view out) {
  std::size_t at = 0;
  while (at < out.size()) {
    auto end = out.find('\n', at);
    if (end == std::string_view::npos) end = out.size();
    const auto line = out.substr(at, end - at);
    if (!line.empty() && line.size() <= 5 && line.find_first_not_of("0123456789") == std::string_view::npos) {
      return std::string(line);
    }
    at = end + 1;
  }
  return std::nullopt;
}

std::string trimmed(std::string_view s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == ' ')) s.remove_suffix(1);
  if (s.size() > 2000) s = s.substr(s.size() - 2000);
  return std::string(s);
}

// What a failed ssh (or a failed command through it) means.
error classify(const process::finished& f, const std::string& what, const std::string& host) {
  const std::string out = trimmed(f.output);
  if (f.timed_out) return error(env_errc::unreachable, what + ": no answer from " + host + " in time" + (out.empty() ? "" : ": " + out));
  if (contains(out, "Host key verification failed") || contains(out, "HOST IDENTIFICATION HAS CHANGED") ||
      contains(out, "host key for") || contains(out, "No ED25519 host key is known")) {
    return error(env_errc::refused, what + ": the host key of " + host +
                                        " is not the one in known_hosts (refused; check known_hosts): " + out);
  }
  if (contains(out, "Permission denied")) {
    return error(env_errc::refused, what + ": " + host + " did not accept the identity file: " + out);
  }
  if (contains(out, "No space left on device") || contains(out, "tether:free-kib")) {
    return error(env_errc::no_space, what + ": the remote disk is full: " + out);
  }
  if (contains(out, "tether:lost")) return error(env_errc::lost, what + ": the lease's directory is gone on " + host);
  if (f.status.code == 255 || f.status.signal > 0) {
    return error(env_errc::unreachable, what + ": the connection to " + host + " failed (" + f.status.describe() +
                                            (out.empty() ? ")" : "): " + out));
  }
  return error(env_errc::failed, what + " failed (" + f.status.describe() + (out.empty() ? ")" : "): " + out));
}

class ssh_environment;

// What runs ssh for one lease: its options and its control socket.
class connection {
 public:
  connection(const ssh_options& o, fs::path control) : o_(o), control_(std::move(control)) {}

  [[nodiscard]] std::vector<std::string> argv(std::vector<std::string> extra) const {
    std::vector<std::string> a = {o_.program.string(), "-F", "/dev/null", "-T",
        "-o", "BatchMode=yes", "-o", "StrictHostKeyChecking=yes",
        "-o", "UserKnownHostsFile=" + o_.known_hosts.string(), "-o", "GlobalKnownHostsFile=/dev/null",
        "-o", "IdentitiesOnly=yes", "-o", "IdentityFile=" + o_.identity_file.string(),
        "-o", "ConnectTimeout=" + std::to_string(o_.connect_timeout.count()),
        "-o", "ServerAliveInterval=5", "-o", "ServerAliveCountMax=3", "-o", "LogLevel=ERROR",
        "-o", "ControlPath=" + control_.string(), "-p", std::to_string(o_.port), "-l", o_.user};
    for (auto& e : extra) a.push_back(std::move(e));
    return a;
  }

  // ssh with `extra` options, then the host, then `remote` (a shell line) if any.
  [[nodiscard]] process::spawn_options options(std::vector<std::string> extra, const std::string& remote) const {
    process::spawn_options s;
    extra.push_back(o_.host);
    if (!remote.empty()) extra.push_back(remote);
    s.argv = argv(std::move(extra));
    s.env = local_environment();
    return s;
  }

  // A shell line on the host, to its end: its output, or what its failure means.
  [[nodiscard]] result<std::string> run(const std::string& what, const std::string& remote) const {
    return finish(what, options({}, remote), o_.command_limit);
  }

  [[nodiscard]] result<std::string> finish(const std::string& what, process::spawn_options s,
                                           std::chrono::milliseconds limit) const {
    auto done = process::run_to_end(std::move(s), {.limit = limit, .max_output = 1 << 20});
    if (!done) return error(env_errc::failed, what + ": cannot start ssh: " + done.error().describe());
    if (done->timed_out || !done->status.success()) return classify(*done, what, o_.host);
    return std::move(done->output);
  }

  // The lease's master connection, started unless one answers on the control
  // socket. `ssh -f` forks the master, which leaves the process group only
  // when it daemonizes: the spawn's group is never signalled (only the
  // foreground ssh, at the limit), so the master is never caught in between.
  [[nodiscard]] result<void> ensure_master() const {
    auto check = process::run_to_end(options({"-O", "check"}, ""), {.limit = 5s});
    if (check && !check->timed_out && check->status.success()) return {};
    auto o = options({"-f", "-N", "-o", "ControlMaster=yes",
                      "-o", "ControlPersist=" + std::to_string(o_.control_persist.count()) + "s",
                      "-o", "StreamLocalBindUnlink=yes"}, "");
    const fs::path log = fs::path(control_.string() + ".log");
    std::error_code ec;
    fs::remove(log, ec);
    o.stdout_mode = process::output::log_file;
    o.stderr_mode = process::output::log_file;
    o.log = log;
    o.death = process::parent_death::ignore;
    auto s = process::system_spawner().spawn(o);
    if (!s) return error(env_errc::failed, "connecting to " + o_.host + ": cannot start ssh: " + s.error().describe());
    const auto limit = std::chrono::duration_cast<std::chrono::milliseconds>(o_.connect_timeout + 10s);
    process::finished f;
    if (s->pidfd.valid()) {
      pollfd p{s->pidfd.get(), POLLIN, 0};
      f.timed_out = ::poll(&p, 1, static_cast<int>(limit.count())) == 0;
    } else {  // no pidfd_open: the exit is polled
      const auto deadline = std::chrono::steady_clock::now() + limit;
      while (!process::has_exited(s->pid) && !(f.timed_out = std::chrono::steady_clock::now() > deadline)) {
        std::this_thread::sleep_for(10ms);
      }
    }
    const pid_t pid = s->release();
    if (f.timed_out) {
      ::kill(pid, SIGKILL);  // the foreground ssh only: a master already forked is left to its ControlPersist
    }
    f.status = process::reap(pid);
    std::ifstream in(log);
    f.output.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    fs::remove(log, ec);
    if (f.timed_out || !f.status.success()) return classify(f, "connecting to " + o_.host, o_.host);
    return {};
  }

  void close_master() const { (void)process::run_to_end(options({"-O", "exit"}, ""), {.limit = 5s}); }

  [[nodiscard]] const ssh_options& opts() const { return o_; }

 private:
  const ssh_options& o_;
  fs::path control_;
};

class ssh_lease;

class lease_spawner final : public process::spawner {
 public:
  explicit lease_spawner(ssh_lease& l) : l_(l) {}
  result<process::spawned> spawn(const process::spawn_options& o) override;

 private:
  ssh_lease& l_;
};

class ssh_lease final : public lease {
 public:
  ssh_lease(const ssh_options& o, fs::path control, std::string dir, lease_outcome outcome)
      : c_(o, std::move(control)), dir_(std::move(dir)), workspace_(dir_ + "/workspace"),
        journal_(dir_ + "/.tether/commands"),
        provider_id_("ssh://" + o.user + "@" + o.host + ":" + std::to_string(o.port) + dir_), outcome_(outcome),
        spawner_(*this) {}

  [[nodiscard]] const std::string& provider_id() const override { return provider_id_; }
  [[nodiscard]] lease_outcome outcome() const override { return outcome_; }
  [[nodiscard]] const std::string& workspace() const override { return workspace_; }
  process::spawner& spawner() override { return spawner_; }

  result<process::spawned> spawn_remote(const process::spawn_options& o) {
    auto j = journal_spawn(o, journal_, workspace_, c_.opts().remote_path);
    if (!j) return j.error();
    auto relay = c_.options({}, j->line);
    return relays_.spawn(o, std::move(relay.argv), std::move(relay.env), j->id);
  }

  std::optional<std::string> command_id(pid_t relay) override { return relays_.id_of(relay); }

  result<std::vector<command_record>> commands() override {
    auto out = c_.run("reading the command journal", journal_listing(journal_));
    if (!out) return out.error();
    return parse_journal(*out);
  }

  result<void> signal(const std::string& id, int sig) override {
    auto script = signal_command(journal_, id, sig);
    if (!script) return script.error();
    auto out = c_.run("signalling command " + id, *script);
    if (!out) return out.error();
    const auto m = marked_lines(*out);
    if (!m.empty() && m.front() == "unknown") return error(env_errc::not_found, "no command " + id + " in the journal");
    return {};
  }

  result<tree_report> push(const fs::path& local) override {
    auto report = describe_tree(local);
    if (!report) return report;
    const std::string d = quote(dir_);
    const std::string extract =
        "D=" + d + "; rm -rf \"$D/workspace.in\" && mkdir -p \"$D/workspace.in\" && "
        "tar -xf - --no-same-owner -C \"$D/workspace.in\" && rm -rf \"$D/workspace\" && "
        "mv \"$D/workspace.in\" \"$D/workspace\" || { rc=$?; rm -rf \"$D/workspace.in\"; "
        "echo \"tether:free-kib " + free_kib("\"$D\"") + " KiB free on $D\" >&2; exit $rc; }";
    process::spawn_options s;
    s.argv = {"/bin/sh", "-c", "tar -cf - --numeric-owner -C \"$0\" . | \"$@\"", local.string()};
    for (auto& a : c_.options({}, extract).argv) s.argv.push_back(std::move(a));
    s.env = local_environment();
    auto done = c_.finish("sending the workspace", std::move(s), c_.opts().transfer_limit);
    if (!done) return done.error();
    return report;
  }

  result<tree_report> pull(const fs::path& local) override {
    const std::string pack = "cd -- " + quote(workspace_) + " 2>/dev/null || { echo tether:lost >&2; exit 3; }; " +
                             "tar -cf - --numeric-owner .";
    return receive_tree(local, [&](const fs::path& archive) -> result<void> {
      process::spawn_options s;
      s.argv = {"/bin/sh", "-c", "exec \"$@\" > \"$0\"", archive.string()};
      for (auto& a : c_.options({}, pack).argv) s.argv.push_back(std::move(a));
      s.env = local_environment();
      auto done = c_.finish("receiving the workspace", std::move(s), c_.opts().transfer_limit);
      if (!done) return done.error();
      return {};
    });
  }

  result<file_stat> stat(const std::string& path) override {
    const std::string p = quote(!path.empty() && path[0] == '/' ? path : workspace_ + "/" + path);
    auto out = c_.run("stat " + path, "if [ -e " + p + " ] || [ -L " + p + " ]; then stat -c 'tether:%F|%s|%a' -- " +
                                          p + "; else echo tether:absent; fi");
    if (!out) return out.error();
    const auto m = marked_lines(*out);
    if (m.empty()) return error(env_errc::failed, "stat " + path + ": no answer");
    file_stat st;
    if (m.front() == "absent") return st;
    st.exists = true;
    const auto bar1 = m.front().find('|');
    const auto bar2 = m.front().find('|', bar1 + 1);
    if (bar1 == std::string::npos || bar2 == std::string::npos) return error(env_errc::failed, "stat: " + m.front());
    st.directory = m.front().substr(0, bar1) == "directory";
    st.size = std::strtoull(m.front().c_str() + bar1 + 1, nullptr, 10);
    st.mode = static_cast<unsigned>(std::strtoul(m.front().c_str() + bar2 + 1, nullptr, 8));
    return st;
  }

  result<std::string> forward_socket(const fs::path& local_socket) override {
    const std::string remote = dir_ + "/.tether/s-" + random_hex(4) + ".sock";
    if (remote.size() > 100) {
      return error(env_errc::invalid, "remote_root is too long for a Unix socket under it: " + remote);
    }
    if (auto m = c_.ensure_master(); !m) return m.error();
    auto out = c_.finish("forwarding a socket", c_.options({"-O", "forward", "-R", remote + ":" + local_socket.string()}, ""),
                         c_.opts().command_limit);
    if (!out) return out.error();
    return remote;
  }

  result<void> put_file(const std::string& path, const std::string& content, unsigned mode) override {
    const std::string p = !path.empty() && path[0] == '/' ? path : workspace_ + "/" + path;
    const std::string dir = p.substr(0, p.rfind('/'));
    char octal[8];
    std::snprintf(octal, sizeof octal, "%o", mode & 07777);
    // Through a private file here: ssh reads it as its stdin, so the content is never on a command line.
    char local[] = "/tmp/tether-put-XXXXXX";
    const int fd = ::mkstemp(local);
    if (fd < 0) return error(env_errc::failed, "cannot make a temporary file for " + path);
    const bool written = ::write(fd, content.data(), content.size()) == static_cast<ssize_t>(content.size());
    ::close(fd);
    struct removed {
      const char* p;
      ~removed() { ::unlink(p); }
    } guard{local};
    if (!written) return error(env_errc::failed, "cannot write a temporary file for " + path);
    const std::string line = "umask 077; mkdir -p -- " + quote(dir.empty() ? "/" : dir) + " && cat > " + quote(p + ".put") +
                             " && chmod " + octal + " " + quote(p + ".put") + " && mv -f -- " + quote(p + ".put") + " " +
                             quote(p);
    process::spawn_options s;
    s.argv = {"/bin/sh", "-c", "exec \"$@\" < \"$0\"", local};
    for (auto& a : c_.options({}, line).argv) s.argv.push_back(std::move(a));
    s.env = local_environment();
    auto done = c_.finish("writing " + path, std::move(s), c_.opts().command_limit);
    if (!done) return done.error();
    return {};
  }

  result<std::string> forward_port(const std::string& host, int port) override {
    if (!forwardable_host(host) || port <= 0 || port > 65535) {
      return error(env_errc::invalid, "cannot forward to " + host + ":" + std::to_string(port));
    }
    if (auto m = c_.ensure_master(); !m) return m.error();
    // Port 0: the host picks one, and ssh prints it.
    auto out = c_.finish("forwarding a port",
                         c_.options({"-O", "forward", "-R", "127.0.0.1:0:" + host + ":" + std::to_string(port)}, ""),
                         c_.opts().command_limit);
    if (!out) return out.error();
    if (auto p = port_line(*out)) return "127.0.0.1:" + *p;
    return error(env_errc::failed, "forwarding a port: ssh named no port (" + out->substr(0, 200) + ")");
  }

  result<std::string> forward_here(int port) override {
    if (port <= 0 || port > 65535) return error(env_errc::invalid, "cannot forward port " + std::to_string(port));
    if (auto m = c_.ensure_master(); !m) return m.error();
    // ssh names no port it picks for a local forward through the master:
    // a free one is picked here, and picked again if it was taken meanwhile.
    tether::error last(env_errc::failed, "forwarding a port here");
    for (int attempt = 0; attempt < 3; ++attempt) {
      auto local = free_loopback_port();
      if (!local) return local.error();
      const std::string here = "127.0.0.1:" + std::to_string(*local);
      auto out = c_.finish("forwarding port " + std::to_string(port) + " here",
                           c_.options({"-O", "forward", "-L", here + ":127.0.0.1:" + std::to_string(port)}, ""),
                           c_.opts().command_limit);
      if (out) return here;
      last = out.error();
    }
    return last;
  }

  result<std::string> stamp() override {
    auto out = c_.run("stamping the workspace", stamp_script(workspace_));
    if (!out) return out.error();
    return parse_stamp(*out);
  }

  result<void> check() override {
    auto out = c_.run("checking the lease", "[ -d " + quote(workspace_) + " ] && echo tether:ok || echo tether:lost");
    if (!out) return out.error();
    const auto m = marked_lines(*out);
    if (m.empty() || m.front() != "ok") return error(env_errc::lost, "the lease's directory " + dir_ + " is gone");
    return {};
  }

  result<void> release(release_mode mode) {
    if (mode == release_mode::destroy) {
      auto out = c_.run("deleting the lease", "rm -rf -- " + quote(dir_));
      c_.close_master();
      if (!out) return out.error();
      return {};
    }
    c_.close_master();
    return {};
  }

 private:
  connection c_;
  std::string dir_;
  std::string workspace_;
  std::string journal_;
  std::string provider_id_;
  lease_outcome outcome_;
  lease_spawner spawner_;
  relays relays_;
};

result<process::spawned> lease_spawner::spawn(const process::spawn_options& o) { return l_.spawn_remote(o); }

class ssh_environment final : public environment {
 public:
  explicit ssh_environment(ssh_options o) : o_(std::move(o)) {}
  [[nodiscard]] const std::string& name() const override { return o_.name; }
  [[nodiscard]] std::string_view kind() const override { return "ssh"; }

  result<std::unique_ptr<lease>> acquire(const lease_request& request) override {
    if (request.key.empty()) return error(env_errc::invalid, "a lease needs a key");
    const std::string name = provider_name(request.key);
    const std::string dir = o_.remote_root + "/" + name;
    const std::string where = o_.user + "@" + o_.host + ":" + std::to_string(o_.port) + "/" + name;
    const fs::path control = o_.control_dir / sha256_hex(where).substr(0, 20);
    connection c(o_, control);
    if (auto m = c.ensure_master(); !m) return m.error();
    std::string labels;
    for (const auto& [k, v] : request.labels) labels += k + "=" + v + "\n";
    const std::string d = quote(dir);
    auto out = c.run("preparing the lease",
                     "D=" + d + "; if [ -d \"$D/workspace\" ]; then echo tether:resumed; else "
                     "mkdir -p \"$D/workspace\" \"$D/.tether/commands\" && printf '%s' " + quote(labels) +
                         " > \"$D/.tether/labels\" && echo tether:created || "
                         "{ echo \"tether:free-kib " + free_kib(quote(o_.remote_root)) + " KiB free\" >&2; exit 1; }; fi");
    if (!out) return out.error();
    const auto m = marked_lines(*out);
    if (m.empty()) return error(env_errc::failed, "preparing the lease: no answer from " + o_.host);
    lease_outcome outcome = m.front() == "resumed" ? lease_outcome::resumed : lease_outcome::created;
    if (outcome == lease_outcome::created && request.previous) outcome = lease_outcome::replaced;
    return std::unique_ptr<lease>(std::make_unique<ssh_lease>(o_, control, dir, outcome));
  }

  result<probe_report> probe(const std::vector<std::string>& programs) override {
    probe_report report;
    report.where = o_.user + "@" + o_.host + ":" + std::to_string(o_.port);
    // Its own control path, never a lease's: a probe connects directly.
    connection c(o_, o_.control_dir / ("probe-" + sha256_hex(report.where).substr(0, 12)));
    std::string script = "PATH=" + quote(o_.remote_path) + "; export PATH; ";
    for (const auto& p : programs) {
      script += "printf 'tether:program %s %s\\n' " + quote(p) + " \"$(command -v " + quote(p) + " || echo -)\"; ";
    }
    script += "mkdir -p " + quote(o_.remote_root) + " 2>/dev/null; printf 'tether:free %s\\n' \"" +
              free_kib(quote(o_.remote_root)) + "\"";
    auto out = c.run("probing " + report.where, script);
    if (!out) return out.error();
    for (const auto& line : marked_lines(*out)) {
      std::istringstream words(line);
      std::string what, a, b;
      words >> what >> a;
      if (what == "program") {
        std::getline(words >> std::ws, b);
        report.programs.emplace_back(a, b == "-" ? std::string() : b);
      } else if (what == "free" && !a.empty()) {
        report.free_bytes = std::strtoull(a.c_str(), nullptr, 10) * 1024;
      }
    }
    return report;
  }

  result<void> release(lease& l, release_mode mode) override {
    auto* mine = dynamic_cast<ssh_lease*>(&l);
    if (mine == nullptr) return error(env_errc::invalid, "not a lease of environment " + o_.name);
    return mine->release(mode);
  }

 private:
  ssh_options o_;
};

result<void> check_word(const std::string& what, const std::string& v) {
  if (v.empty()) return error(env_errc::invalid, what + " is required");
  if (v[0] == '-') return error(env_errc::invalid, what + " may not start with '-': " + v);
  for (char c : v) {
    if (static_cast<unsigned char>(c) <= ' ' || c == '\'' || c == '"' || c == '\\' || c == 0x7f) {
      return error(env_errc::invalid, what + " may not contain spaces, quotes or control characters: " + v);
    }
  }
  return {};
}

}  // namespace

result<std::unique_ptr<environment>> make_environment(ssh_options o) {
  if (auto r = check_word("host", o.host); !r) return r.error();
  if (auto r = check_word("user", o.user); !r) return r.error();
  if (o.port < 1 || o.port > 65535) return error(env_errc::invalid, "port must be 1-65535");
  if (o.remote_root.empty() || o.remote_root[0] != '/') {
    return error(env_errc::invalid, "remote_root must be an absolute path: " + o.remote_root);
  }
  while (o.remote_root.size() > 1 && o.remote_root.back() == '/') o.remote_root.pop_back();
  std::error_code ec;
  if (!fs::is_regular_file(o.identity_file, ec)) {
    return error(env_errc::invalid, "identity_file is not a readable file: " + o.identity_file.string());
  }
  if (!fs::is_regular_file(o.known_hosts, ec)) {
    return error(env_errc::invalid, "known_hosts is not a readable file: " + o.known_hosts.string() +
                                        " (the host key is always checked)");
  }
  if (o.control_dir.string().size() > 80) {
    return error(env_errc::invalid, "control_dir is too long for ssh's sockets: " + o.control_dir.string());
  }
  fs::create_directories(o.control_dir, ec);
  fs::permissions(o.control_dir, fs::perms::owner_all, ec);
  if (ec) return error(env_errc::invalid, "cannot make control_dir " + o.control_dir.string() + ": " + ec.message());
  return std::unique_ptr<environment>(std::make_unique<ssh_environment>(std::move(o)));
}

}  // namespace tether::env::ssh
