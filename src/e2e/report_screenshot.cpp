#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cctype>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <thread>
#include <vector>

#include "e2e/report.h"

extern char** environ;

namespace tether::e2e {

namespace fs = std::filesystem;

namespace {

constexpr auto chromium_deadline = std::chrono::seconds(60);

bool executable(const fs::path& p) { return ::access(p.c_str(), X_OK) == 0 && !fs::is_directory(p); }

// $TETHER_CHROMIUM, else `chromium` (or `chromium-browser`) on PATH.
std::optional<fs::path> find_chromium() {
  if (const char* env = std::getenv("TETHER_CHROMIUM"); env && *env) {
    if (executable(env)) return fs::path(env);
    return std::nullopt;
  }
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path ? path : "/usr/local/bin:/usr/bin:/bin");
  std::string dir;
  while (std::getline(dirs, dir, ':')) {
    if (dir.empty()) continue;
    for (const char* name : {"chromium", "chromium-browser"})
      if (executable(fs::path(dir) / name)) return fs::path(dir) / name;
  }
  return std::nullopt;
}

std::string last_line(const fs::path& log) {
  std::ifstream in(log);
  std::string line, last;
  while (std::getline(in, line))
    if (line.find_first_not_of(" \t\r") != std::string::npos) last = line;
  return last.empty() ? "(no output)" : last;
}

// Kills what is left of Chromium's process group (its zygote and renderers).
void kill_group(pid_t pid) { ::kill(-pid, SIGKILL); }

// Runs `argv` in its own process group with stdout and stderr to `log`;
// an error unless it exited 0 before the deadline (then the group is killed).
result<void> run_chromium(const std::vector<std::string>& argv, const fs::path& log) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
  posix_spawnattr_setpgroup(&attr, 0);

  std::vector<char*> args;
  args.reserve(argv.size() + 1);
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = 0;
  const int rc = ::posix_spawn(&pid, argv[0].c_str(), &actions, &attr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  if (rc != 0)
    return make_error(e2e_errc::io,
                      "cannot start " + argv[0] + ": " + std::error_code(rc, std::generic_category()).message());

  const auto deadline = std::chrono::steady_clock::now() + chromium_deadline;
  int status = 0;
  for (;;) {
    const pid_t w = ::waitpid(pid, &status, WNOHANG);
    if (w == pid) break;
    if (w < 0 && errno != EINTR) return make_error(e2e_errc::io, "lost the Chromium process");
    if (std::chrono::steady_clock::now() >= deadline) {
      kill_group(pid);
      ::waitpid(pid, &status, 0);
      return make_error(e2e_errc::io,
                        "Chromium did not finish the screenshot within 60 s; last output: " + last_line(log));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  kill_group(pid);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    return make_error(e2e_errc::io, "Chromium failed (" +
                                        (WIFEXITED(status) ? "exit " + std::to_string(WEXITSTATUS(status))
                                                           : "signal " + std::to_string(WTERMSIG(status))) +
                                        "): " + last_line(log));
  return ok();
}

result<void> check_png(const fs::path& png, const fs::path& log) {
  static constexpr std::array<unsigned char, 8> signature{0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
  std::ifstream in(png, std::ios::binary);
  if (!in) return make_error(e2e_errc::io, "Chromium wrote no " + png.string() + ": " + last_line(log));
  std::array<char, 8> head{};
  in.read(head.data(), head.size());
  for (std::size_t i = 0; i < signature.size(); ++i)
    if (static_cast<unsigned char>(head[i]) != signature[i])
      return make_error(e2e_errc::io, png.string() + " is not a PNG");
  std::error_code ec;
  if (fs::file_size(png, ec) <= 1024 || ec)
    return make_error(e2e_errc::io, png.string() + " is nearly empty (" + last_line(log) + ")");
  return ok();
}

// file:// URL of an absolute path, percent-encoding what a URL cannot hold.
std::string file_url(const fs::path& p) {
  static constexpr char hex[] = "0123456789ABCDEF";
  std::string url = "file://";
  for (const unsigned char c : p.string()) {
    if (std::isalnum(c) || c == '/' || c == '-' || c == '_' || c == '.' || c == '~') {
      url += static_cast<char>(c);
    } else {
      url += '%';
      url += hex[c >> 4];
      url += hex[c & 15];
    }
  }
  return url;
}

}  // namespace

result<void> screenshot(const fs::path& html, const fs::path& png) {
  const auto chromium = find_chromium();
  if (!chromium)
    return make_error(e2e_errc::io, std::getenv("TETHER_CHROMIUM") && *std::getenv("TETHER_CHROMIUM")
                                        ? std::string("$TETHER_CHROMIUM (") + std::getenv("TETHER_CHROMIUM") +
                                              ") is not an executable"
                                        : "Chromium not found on PATH: install Debian's `chromium` package "
                                          "(apt-get install chromium) or set $TETHER_CHROMIUM");
  std::error_code ec;
  const fs::path page = fs::absolute(html, ec);
  if (!fs::exists(page)) return make_error(e2e_errc::io, html.string() + " does not exist");
  const fs::path shot = fs::absolute(png, ec);
  if (shot.has_parent_path()) fs::create_directories(shot.parent_path(), ec);
  fs::remove(shot, ec);

  std::string profile_template = (fs::temp_directory_path(ec) / "tether-chromium-XXXXXX").string();
  if (::mkdtemp(profile_template.data()) == nullptr)
    return make_error(e2e_errc::io, "cannot create a temporary Chromium profile");
  const fs::path profile(profile_template);
  const fs::path log = profile / "chromium.log";

  const std::vector<std::string> argv{
      chromium->string(),
      "--headless=new",
      "--no-sandbox",
      "--disable-gpu",
      "--hide-scrollbars",
      "--no-first-run",
      "--no-default-browser-check",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
      "--disable-extensions",
      "--disable-dev-shm-usage",        // containers often have a tiny /dev/shm
      "--force-device-scale-factor=1",  // 1400 CSS pixels = 1400 PNG pixels
      "--user-data-dir=" + (profile / "profile").string(),
      "--window-size=1400,2000",
      "--screenshot=" + shot.string(),
      file_url(page),
  };
  auto ran = run_chromium(argv, log);
  auto checked = ran ? check_png(shot, log) : result<void>(ran.error());
  fs::remove_all(profile, ec);
  return checked;
}

}  // namespace tether::e2e
