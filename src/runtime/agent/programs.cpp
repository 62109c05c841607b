#include "runtime/agent/programs.h"

#include <stdlib.h>

#include <array>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <system_error>

#include <fmt/format.h>
#include <boost/json.hpp>

#include "process/run_to_end.h"

#ifndef TETHER_AGENTS_DEFAULT_PREFIX
#define TETHER_AGENTS_DEFAULT_PREFIX ""
#endif

namespace tether::runtime::agent {

namespace fs = std::filesystem;

namespace {

constexpr std::array<std::string_view, 5> kinds = {"codex", "claude", "opencode", "codex-acp", "claude-agent-acp"};
// Any ACP agent: only ever the profile's command.
constexpr std::string_view command_only_kind = "acp";

#if defined(__aarch64__)
constexpr std::string_view native_arch = "arm64";
#else
constexpr std::string_view native_arch = "x64";
#endif

std::string getenv_or_empty(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr ? std::string(v) : std::string();
}

// A hit must be something exec can run; a directory named like the binary is not.
bool runnable(const fs::path& p) {
  std::error_code ec;
  return fs::is_regular_file(p, ec) && process::is_executable(p);
}

std::optional<fs::path> on_path(const std::string& name, std::string_view path) {
  while (!path.empty()) {
    const auto colon = path.find(':');
    const std::string dir(path.substr(0, colon));
    path = colon == std::string_view::npos ? std::string_view() : path.substr(colon + 1);
    // A relative entry would make the hit depend on the working directory.
    if (dir.empty() || dir.front() != '/') continue;
    if (runnable(fs::path(dir) / name)) return fs::path(dir) / name;
  }
  return std::nullopt;
}

std::string joined(const std::vector<std::string>& names) {
  std::string s;
  for (const auto& n : names) s += (s.empty() ? "" : " or ") + n;
  return s;
}

result<program> find_command(std::string_view kind, const std::string& command, const search_environment& env) {
  if (command.find('/') != std::string::npos) {
    if (runnable(command)) return program{std::string(kind), found_in::command, fs::absolute(command)};
    return error(agent_errc::not_found,
                 fmt::format("{} not installed (its command {} is not an executable file)", kind, command));
  }
  if (auto hit = on_path(command, env.path)) return program{std::string(kind), found_in::command, *hit};
  return error(agent_errc::not_found,
               fmt::format("{} not installed (looked for its command {} in PATH {})", kind, command, env.path));
}

// The line a failed --version leaves for the message: its first non-empty one.
std::string first_line(std::string_view text) {
  const auto first = text.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos) return "(no output)";
  auto line = text.substr(first, text.find('\n', first) - first);
  while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.remove_suffix(1);
  return std::string(line);
}

// A fresh empty directory, removed when this goes out of scope.
class temporary_home {
 public:
  static result<temporary_home> make() {
    std::error_code ec;
    auto pattern = (fs::temp_directory_path(ec) / "tether-agent-home-XXXXXX").string();
    if (ec || ::mkdtemp(pattern.data()) == nullptr)
      return error(agent_errc::version_failed,
                   fmt::format("cannot create a temporary HOME in {}: {}", fs::temp_directory_path(ec).string(),
                               std::generic_category().message(errno)));
    return temporary_home(pattern);
  }
  temporary_home(temporary_home&& o) noexcept : dir_(std::exchange(o.dir_, {})) {}
  temporary_home& operator=(temporary_home&&) = delete;
  temporary_home(const temporary_home&) = delete;
  temporary_home& operator=(const temporary_home&) = delete;
  ~temporary_home() {
    std::error_code ec;
    if (!dir_.empty()) fs::remove_all(dir_, ec);
  }
  [[nodiscard]] const fs::path& dir() const { return dir_; }

 private:
  explicit temporary_home(fs::path dir) : dir_(std::move(dir)) {}
  fs::path dir_;
};

bool version_like(std::string_view t) {
  std::size_t i = 0;
  int dots = 0;
  auto digits = [&] {
    const auto start = i;
    while (i < t.size() && std::isdigit(static_cast<unsigned char>(t[i])) != 0) ++i;
    return i > start;
  };
  if (!digits()) return false;
  while (i < t.size() && t[i] == '.') {
    ++i;
    if (!digits()) return false;
    ++dots;
  }
  if (dots == 0) return false;
  if (i == t.size()) return true;
  if (t[i] != '-' && t[i] != '+') return false;
  ++i;
  if (i == t.size()) return false;
  for (; i < t.size(); ++i)
    if (std::isalnum(static_cast<unsigned char>(t[i])) == 0 && t[i] != '.' && t[i] != '-' && t[i] != '+') return false;
  return true;
}

}  // namespace

std::span<const std::string_view> agent_kinds() { return kinds; }

result<std::vector<std::string>> binary_names(std::string_view kind) {
  if (kind == "codex-acp") return std::vector<std::string>{fmt::format("codex-acp-linux-{}", native_arch), "codex-acp"};
  if (kind == command_only_kind) return std::vector<std::string>{};
  for (const auto k : kinds)
    if (k == kind) return std::vector<std::string>{std::string(kind)};
  return error(agent_errc::unknown_kind, fmt::format("unknown agent kind '{}'", kind));
}

std::string_view to_string(found_in where) {
  switch (where) {
    case found_in::command:
      return "command";
    case found_in::prefix:
      return "prefix";
    case found_in::path:
      return "path";
  }
  return "?";
}

search_environment search_environment::current() {
  return {.path = getenv_or_empty("PATH"), .agents_prefix = getenv_or_empty("TETHER_AGENTS_PREFIX")};
}

fs::path default_prefix() { return TETHER_AGENTS_DEFAULT_PREFIX; }

result<program> find(std::string_view kind, const find_options& options, const search_environment& env) {
  auto names = binary_names(kind);
  if (!names) return names.error();
  if (!options.command.empty()) return find_command(kind, options.command, env);
  if (names->empty())
    return error(agent_errc::not_found,
                 fmt::format("{} has no binary of its own: the profile's command names the agent", kind));

  const fs::path prefix = !env.agents_prefix.empty() ? fs::path(env.agents_prefix) : options.prefix;
  std::string looked;
  if (!prefix.empty()) {
    const auto bin = fs::absolute(prefix) / "node_modules" / ".bin";
    for (const auto& name : *names)
      if (runnable(bin / name)) return program{std::string(kind), found_in::prefix, bin / name};
    looked = fmt::format("{}{}, then ", bin.string(), env.agents_prefix.empty() ? "" : " ($TETHER_AGENTS_PREFIX)");
  }
  for (const auto& name : *names)
    if (auto hit = on_path(name, env.path)) return program{std::string(kind), found_in::path, *hit};
  return error(agent_errc::not_found,
               fmt::format("{} not installed (looked in {}PATH {} for {})", kind, looked, env.path, joined(*names)));
}

result<std::string> version(const fs::path& program, version_options options, process::spawner& spawner) {
  auto home = temporary_home::make();
  if (!home) return home.error();
  process::spawn_options o;
  o.argv = {program.string(), "--version"};
  // PATH stays: npm's wrappers are `#!/usr/bin/env node` scripts.
  const auto path = getenv_or_empty("PATH");
  o.env = {"PATH=" + (path.empty() ? std::string("/usr/bin:/bin") : path), "HOME=" + home->dir().string(),
           "LANG=C.UTF-8"};
  o.cwd = home->dir();
  o.stdin_mode = process::input::null;
  o.stderr_mode = process::output::stdout_pipe;
  auto done = process::run_to_end(std::move(o), {.limit = options.limit}, spawner);
  if (!done) return done.error();
  if (done->timed_out)
    return error(agent_errc::version_timed_out,
                 fmt::format("{} --version did not finish within {} ms", program.string(), options.limit.count()));
  if (!done->status.success())
    return error(agent_errc::version_failed, fmt::format("{} --version: {}: {}", program.string(),
                                                         done->status.describe(), first_line(done->output)));
  if (auto v = first_version(done->output)) return *v;
  return error(agent_errc::no_version,
               fmt::format("{} --version printed no version: {}", program.string(), first_line(done->output)));
}

result<std::string> package_version(const fs::path& program) {
  std::error_code ec;
  auto dir = fs::canonical(program, ec).parent_path();
  if (ec) return error(agent_errc::no_version, fmt::format("{}: {}", program.string(), ec.message()));
  for (int up = 0; up <= 4 && !dir.empty(); ++up, dir = dir.parent_path()) {
    std::ifstream in(dir / "package.json");
    if (!in) continue;
    std::stringstream text;
    text << in.rdbuf();
    boost::system::error_code jec;
    const auto doc = boost::json::parse(text.str(), jec);
    if (!jec && doc.is_object())
      if (const auto* v = doc.as_object().if_contains("version"); v != nullptr && v->is_string())
        return std::string(v->as_string());
    return error(agent_errc::no_version, fmt::format("{} has no version", (dir / "package.json").string()));
  }
  return error(agent_errc::no_version, fmt::format("no package.json above {}", program.string()));
}

result<std::string> installed_version(const program& p, version_options options) {
  if (p.kind.ends_with("-acp")) return package_version(p.path);
  return version(p.path, options);
}

std::optional<std::string> first_version(std::string_view text) {
  std::size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i])) != 0) ++i;
    const auto start = i;
    while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i])) == 0) ++i;
    auto token = text.substr(start, i - start);
    // "(1.2.3)", "1.2.3," and "v1.2.3" still count.
    while (!token.empty() && std::string_view("([\"'").find(token.front()) != std::string_view::npos)
      token.remove_prefix(1);
    while (!token.empty() && std::string_view(")]\"',;:.").find(token.back()) != std::string_view::npos)
      token.remove_suffix(1);
    if (token.size() > 1 && (token.front() == 'v' || token.front() == 'V') &&
        std::isdigit(static_cast<unsigned char>(token[1])) != 0)
      token.remove_prefix(1);
    if (version_like(token)) return std::string(token);
  }
  return std::nullopt;
}

}  // namespace tether::runtime::agent
