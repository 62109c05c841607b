#include "runtime/agent/programs.h"

#include <stdlib.h>
#include <sys/stat.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "runtime/agent/errors.h"

namespace tether::runtime::agent {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

// A temporary directory with executable scripts in it, removed at the end.
class scratch {
 public:
  scratch() {
    auto pattern = (fs::temp_directory_path() / "tether-programs-test-XXXXXX").string();
    EXPECT_NE(::mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  ~scratch() { fs::remove_all(dir_); }
  scratch(const scratch&) = delete;
  scratch& operator=(const scratch&) = delete;

  [[nodiscard]] const fs::path& dir() const { return dir_; }

  // Writes an executable shell script at dir/relative.
  fs::path script(const fs::path& relative, const std::string& body) const {
    const auto p = dir_ / relative;
    fs::create_directories(p.parent_path());
    std::ofstream(p) << "#!/bin/sh\n" << body << "\n";
    fs::permissions(p, fs::perms::owner_all);
    return p;
  }
  // An npm-style prefix: PREFIX/node_modules/.bin/name.
  fs::path in_prefix(const std::string& name, const std::string& body = "echo 1.0.0") const {
    return script(fs::path("prefix") / "node_modules" / ".bin" / name, body);
  }
  [[nodiscard]] fs::path prefix() const { return dir_ / "prefix"; }

 private:
  fs::path dir_;
};

search_environment with_path(std::string path) { return {.path = std::move(path), .agents_prefix = {}}; }

TEST(agent_programs, an_explicit_absolute_command_wins_over_the_prefix_and_path) {
  scratch s;
  const auto mine = s.script("mine/codex-custom", "echo 9.9.9");
  s.in_prefix("codex");
  s.script("bin/codex", "echo 1.0.0");
  auto found = find("codex", {.command = mine.string(), .prefix = s.prefix()}, with_path((s.dir() / "bin").string()));
  ASSERT_TRUE(found) << found.error().message;
  EXPECT_EQ(found->where, found_in::command);
  EXPECT_EQ(found->path, mine);
  EXPECT_EQ(found->kind, "codex");
}

TEST(agent_programs, an_explicit_name_is_looked_up_in_path) {
  scratch s;
  const auto mine = s.script("bin/my-claude", "echo 2.0.0");
  auto found = find("claude", {.command = "my-claude", .prefix = {}},
                    with_path("relative/dir:" + (s.dir() / "empty").string() + ":" + (s.dir() / "bin").string()));
  ASSERT_TRUE(found) << found.error().message;
  EXPECT_EQ(found->where, found_in::command);
  EXPECT_EQ(found->path, mine);
}

TEST(agent_programs, a_missing_explicit_command_is_an_error_not_a_fallback) {
  scratch s;
  s.in_prefix("codex");
  auto found = find("codex", {.command = "no-such-codex", .prefix = s.prefix()}, with_path("/usr/bin:/bin"));
  ASSERT_FALSE(found);
  EXPECT_EQ(found.error(), agent_errc::not_found);
  EXPECT_NE(found.error().message.find("no-such-codex"), std::string::npos) << found.error().message;
  EXPECT_NE(found.error().message.find("/usr/bin:/bin"), std::string::npos) << found.error().message;

  auto absolute = find("codex", {.command = (s.dir() / "nope").string(), .prefix = s.prefix()}, with_path(""));
  ASSERT_FALSE(absolute);
  EXPECT_EQ(absolute.error(), agent_errc::not_found);
}

TEST(agent_programs, the_prefix_comes_before_path) {
  scratch s;
  const auto in_prefix = s.in_prefix("opencode");
  s.script("bin/opencode", "echo 1.0.0");
  auto found = find("opencode", {.prefix = s.prefix()}, with_path((s.dir() / "bin").string()));
  ASSERT_TRUE(found) << found.error().message;
  EXPECT_EQ(found->where, found_in::prefix);
  EXPECT_EQ(found->path, in_prefix);
}

TEST(agent_programs, the_environment_prefix_overrides_the_given_one) {
  scratch s;
  scratch other;
  s.in_prefix("claude");
  const auto overriding = other.in_prefix("claude");
  auto found = find("claude", {.prefix = s.prefix()}, {.path = "", .agents_prefix = other.prefix().string()});
  ASSERT_TRUE(found) << found.error().message;
  EXPECT_EQ(found->where, found_in::prefix);
  EXPECT_EQ(found->path, overriding);
}

TEST(agent_programs, codex_acp_prefers_its_native_binary_to_the_node_wrapper) {
  scratch s;
  s.in_prefix("codex-acp");
  auto wrapper = find("codex-acp", {.prefix = s.prefix()}, with_path(""));
  ASSERT_TRUE(wrapper) << wrapper.error().message;
  EXPECT_EQ(wrapper->path.filename(), "codex-acp");

  const auto native = binary_names("codex-acp").value().front();
  s.in_prefix(native);
  auto found = find("codex-acp", {.prefix = s.prefix()}, with_path(""));
  ASSERT_TRUE(found) << found.error().message;
  EXPECT_EQ(found->path.filename(), native);
}

TEST(agent_programs, path_is_the_fallback_when_the_prefix_lacks_the_binary) {
  scratch s;
  s.in_prefix("codex");  // another kind's binary
  const auto on_path = s.script("bin/claude-agent-acp", "exit 0");
  auto found = find("claude-agent-acp", {.prefix = s.prefix()}, with_path((s.dir() / "bin").string()));
  ASSERT_TRUE(found) << found.error().message;
  EXPECT_EQ(found->where, found_in::path);
  EXPECT_EQ(found->path, on_path);
}

TEST(agent_programs, a_file_that_is_not_executable_is_not_a_hit) {
  scratch s;
  const auto p = s.in_prefix("codex");
  fs::permissions(p, fs::perms::owner_read | fs::perms::owner_write);
  fs::create_directories(s.dir() / "bin" / "codex");  // a directory named like it either
  auto found = find("codex", {.prefix = s.prefix()}, with_path((s.dir() / "bin").string()));
  ASSERT_FALSE(found);
  EXPECT_EQ(found.error(), agent_errc::not_found);
}

TEST(agent_programs, not_found_names_every_place_it_looked) {
  scratch s;
  auto found = find("codex-acp", {.prefix = s.prefix()}, with_path("/nonexistent/a:/nonexistent/b"));
  ASSERT_FALSE(found);
  EXPECT_EQ(found.error(), agent_errc::not_found);
  const auto& m = found.error().message;
  EXPECT_NE(m.find("codex-acp not installed (looked in "), std::string::npos) << m;
  EXPECT_NE(m.find((s.prefix() / "node_modules" / ".bin").string()), std::string::npos) << m;
  EXPECT_NE(m.find("/nonexistent/a:/nonexistent/b"), std::string::npos) << m;
  EXPECT_NE(m.find("codex-acp-linux-"), std::string::npos) << m;
}

TEST(agent_programs, an_unknown_kind_is_refused) {
  auto found = find("gemini", {}, with_path("/usr/bin:/bin"));
  ASSERT_FALSE(found);
  EXPECT_EQ(found.error(), agent_errc::unknown_kind);
  EXPECT_EQ(agent_kinds().size(), 5u);
}

TEST(agent_programs, version_is_the_first_version_token_the_program_prints) {
  scratch s;
  const auto agent = s.script("fake-codex", "echo 'WARNING: no config in /tmp/x' >&2; echo 'codex-cli 0.171.0'");
  auto v = version(agent);
  ASSERT_TRUE(v) << v.error().message;
  EXPECT_EQ(*v, "0.171.0");
}

TEST(agent_programs, version_runs_with_stdin_closed_and_an_empty_throwaway_home) {
  scratch s;
  const auto seen = s.dir() / "seen";
  const auto agent = s.script("fake-claude",
                              "read line && exit 7\n"
                              "printf '%s\\n' \"$HOME\" \"$PWD\" > '" +
                                  seen.string() +
                                  "'\n"
                                  "[ -z \"$(ls -A \"$HOME\")\" ] || exit 8\n"
                                  "touch \"$HOME/.state\"\n"
                                  "echo '2.1.197 (Claude Code)'");
  auto v = version(agent);
  ASSERT_TRUE(v) << v.error().message;
  EXPECT_EQ(*v, "2.1.197");
  std::ifstream in(seen);
  std::string home;
  std::string cwd;
  std::getline(in, home);
  std::getline(in, cwd);
  EXPECT_NE(home, std::getenv("HOME") != nullptr ? std::getenv("HOME") : "");
  EXPECT_EQ(home, cwd);
  EXPECT_FALSE(fs::exists(home)) << home << " was not removed";
}

TEST(agent_programs, a_version_that_hangs_times_out_and_is_killed) {
  scratch s;
  const auto agent = s.script("hanging", "sleep 30");
  const auto started = std::chrono::steady_clock::now();
  auto v = version(agent, {.limit = 300ms});
  ASSERT_FALSE(v);
  EXPECT_EQ(v.error(), agent_errc::version_timed_out);
  EXPECT_LT(std::chrono::steady_clock::now() - started, 5s);
}

TEST(agent_programs, a_version_that_exits_1_is_an_error_with_its_output) {
  scratch s;
  const auto agent = s.script("failing", "echo 'Error: native binary not installed.' >&2; exit 1");
  auto v = version(agent);
  ASSERT_FALSE(v);
  EXPECT_EQ(v.error(), agent_errc::version_failed);
  EXPECT_NE(v.error().message.find("exit code 1"), std::string::npos) << v.error().message;
  EXPECT_NE(v.error().message.find("native binary not installed"), std::string::npos) << v.error().message;
}

TEST(agent_programs, output_without_a_version_is_an_error) {
  scratch s;
  const auto agent = s.script("chatty", "echo 'usage: chatty [OPTIONS]'");
  auto v = version(agent);
  ASSERT_FALSE(v);
  EXPECT_EQ(v.error(), agent_errc::no_version);
}

TEST(agent_programs, a_version_token_looks_like_digits_and_dots) {
  EXPECT_EQ(first_version("codex-cli 0.171.0"), "0.171.0");
  EXPECT_EQ(first_version("opencode v1.18.33\n"), "1.18.33");
  EXPECT_EQ(first_version("tool (1.2.3-beta.1)"), "1.2.3-beta.1");
  EXPECT_EQ(first_version("version 10.2, built 2026"), "10.2");
  EXPECT_EQ(first_version("build 42 on x86_64"), std::nullopt);
  EXPECT_EQ(first_version("1. 2. 3."), std::nullopt);
  EXPECT_EQ(first_version(""), std::nullopt);
}

TEST(agent_programs, package_version_reads_the_package_json_a_binary_belongs_to) {
  scratch s;
  const auto pkg = s.dir() / "node_modules" / "@zed-industries" / "codex-acp-linux-x64";
  fs::create_directories(pkg / "bin");
  std::ofstream(pkg / "package.json") << R"({"name": "@zed-industries/codex-acp-linux-x64", "version": "0.16.0"})";
  s.script(pkg.lexically_relative(s.dir()) / "bin" / "codex-acp", "exit 2");
  fs::create_directories(s.dir() / "node_modules" / ".bin");
  const auto link = s.dir() / "node_modules" / ".bin" / "codex-acp-linux-x64";
  fs::create_symlink("../@zed-industries/codex-acp-linux-x64/bin/codex-acp", link);
  auto v = package_version(link);
  ASSERT_TRUE(v) << v.error().message;
  EXPECT_EQ(*v, "0.16.0");

  auto none = package_version(s.script("loose/tool", "exit 0"));
  ASSERT_FALSE(none);
  EXPECT_EQ(none.error(), agent_errc::no_version);
}

}  // namespace
}  // namespace tether::runtime::agent
