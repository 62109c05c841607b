#include "work/workspace.h"

#include <algorithm>
#include <cctype>
#include <set>
#include <string_view>

#include <fmt/format.h>

#include "process/run_to_end.h"
#include "util/text.h"
#include "work/errors.h"

namespace tether::work {

namespace fs = std::filesystem;

namespace {

bool plain_name(std::string_view s) {
  return !s.empty() && s != "." && s != ".." && s.size() <= 100 &&
         std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isalnum(c) || c == '.' || c == '_' || c == '-'; });
}

tether::error bad(std::string message) { return make_error(work_errc::invalid_spec, std::move(message)); }

// `env` with each of `set` ("NAME=value") replacing any entry of the same name.
std::vector<std::string> with(std::vector<std::string> env, const std::vector<std::string>& set) {
  for (const auto& kv : set) {
    const auto name = kv.substr(0, kv.find('=') + 1);
    std::erase_if(env, [&](const std::string& e) { return e.starts_with(name); });
    env.push_back(kv);
  }
  return env;
}

class preparer {
 public:
  preparer(const workspace_spec& spec, const fs::path& dir) : spec_(spec), dir_(fs::absolute(dir)) {
    git_env_ = with(spec.env, {"GIT_TERMINAL_PROMPT=0", "GIT_ALLOW_PROTOCOL=file:git:http:https:ssh"});
  }

  result<workspace_report> run(workspace_decision decision) {
    std::error_code ec;
    switch (decision) {
      case workspace_decision::reuse:
        if (fs::is_directory(dir_, ec)) {
          report_.done = workspace_decision::reuse;
          report_.steps.emplace_back("reused the workspace");
          return report_;
        }
        report_.steps.emplace_back("the workspace was missing: created it again");
        return create();
      case workspace_decision::refresh:
        if (!fs::is_directory(dir_, ec)) {
          report_.steps.emplace_back("the workspace was missing: created it again");
          return create();
        }
        report_.done = workspace_decision::refresh;
        TETHER_TRY(run_setup());
        return report_;
      case workspace_decision::replace:
        TETHER_TRY(remove());
        report_.done = workspace_decision::replace;
        TETHER_TRY(make_and_check_out());
        return report_;
      case workspace_decision::create:
        return create();
    }
    return create();
  }

 private:
  result<workspace_report> create() {
    std::error_code ec;
    if (fs::exists(dir_, ec) && !fs::is_empty(dir_, ec))
      return make_error(work_errc::not_empty,
                        dir_.string() + " already exists and is not empty: a new workspace needs an empty place");
    report_.done = workspace_decision::create;
    TETHER_TRY(make_and_check_out());
    return report_;
  }

  result<void> make_and_check_out() {
    std::error_code ec;
    fs::create_directories(dir_, ec);
    if (ec) return make_error(work_errc::io, "cannot create " + dir_.string() + ": " + ec.message());
    fs::permissions(dir_, fs::perms::owner_all, ec);
    for (const auto& r : spec_.repositories) TETHER_TRY(check_out(r));
    return run_setup();
  }

  [[nodiscard]] bool local_repository(const repository& r) const {
    std::error_code ec;
    return r.url.find("://") == std::string::npos && fs::exists(fs::path(r.url) / ".git", ec);
  }

  result<void> check_out(const repository& r) {
    const fs::path target = dir_ / r.name;
    if (spec_.strategy == checkout_strategy::worktree && local_repository(r)) {
      const std::string at = r.branch.empty() ? "HEAD" : r.branch;
      std::vector<std::string> args{"-C", r.url, "worktree", "add"};
      if (r.branch.empty()) args.emplace_back("--detach");
      auto done = git(args, {target.string(), at});
      if (!done && !r.branch.empty()) {  // the branch is checked out elsewhere: its commit, detached
        auto detached = git({"-C", r.url, "worktree", "add", "--detach"}, {target.string(), at});
        if (!detached)
          return make_error(work_errc::checkout_failed, "worktree of " + r.name + " failed: " + done.error().message);
        report_.steps.push_back(fmt::format("added a worktree {} of {} at {} (detached: the branch is checked out "
                                            "elsewhere)",
                                            r.name, r.url, at));
        return ok();
      }
      if (!done)
        return make_error(work_errc::checkout_failed, "worktree of " + r.name + " failed: " + done.error().message);
      report_.steps.push_back(fmt::format("added a worktree {} of {} ({})", r.name, r.url, at));
      return ok();
    }
    std::vector<std::string> args{"clone", "--quiet"};
    if (!r.branch.empty()) {
      args.emplace_back("--branch");
      args.push_back(r.branch);
    }
    auto done = git(args, {r.url, target.string()});
    if (!done) return make_error(work_errc::checkout_failed, "clone of " + r.name + " failed: " + done.error().message);
    report_.steps.push_back(
        fmt::format("cloned {} from {} ({})", r.name, r.url, r.branch.empty() ? "its default branch" : r.branch));
    return ok();
  }

  result<void> remove() {
    std::error_code ec;
    if (spec_.strategy == checkout_strategy::worktree)
      for (const auto& r : spec_.repositories)
        if (local_repository(r)) (void)git({"-C", r.url, "worktree", "remove", "--force"}, {(dir_ / r.name).string()});
    fs::remove_all(dir_, ec);
    if (ec) return make_error(work_errc::io, "cannot remove " + dir_.string() + ": " + ec.message());
    if (spec_.strategy == checkout_strategy::worktree)
      for (const auto& r : spec_.repositories)
        if (local_repository(r)) (void)git({"-C", r.url, "worktree", "prune"}, {});
    report_.steps.emplace_back("removed the workspace");
    return ok();
  }

  result<void> run_setup() {
    for (const auto& command : spec_.setup) {
      process::spawn_options o;
      o.argv = {"/bin/sh", "-c", command};
      o.env = spec_.env;
      o.cwd = dir_;
      auto done = process::run_to_end(std::move(o), {.limit = spec_.command_limit});
      if (!done) return make_error(work_errc::command_failed, "cannot run `" + command + "`: " + done.error().message);
      if (done->timed_out)
        return make_error(work_errc::command_failed, fmt::format("`{}` did not finish within {} ms", command,
                                                     spec_.command_limit.count()));
      if (!done->status.success())
        return make_error(work_errc::command_failed,
                          fmt::format("`{}` {}: {}", command, done->status.describe(), last_line(done->output)));
      report_.steps.push_back("ran: " + command);
    }
    return ok();
  }

  // git OPTIONS -- OPERANDS: the operands can never be read as options.
  result<void> git(std::vector<std::string> options, const std::vector<std::string>& operands) {
    const auto program = process::find_program("git");
    if (!program) return make_error(work_errc::io, "git is not installed (not on PATH)");
    process::spawn_options o;
    o.argv = {program->string()};
    o.argv.insert(o.argv.end(), options.begin(), options.end());
    if (!operands.empty()) {
      o.argv.emplace_back("--");
      o.argv.insert(o.argv.end(), operands.begin(), operands.end());
    }
    o.env = git_env_;
    auto done = process::run_to_end(std::move(o), {.limit = spec_.command_limit});
    if (!done) return done.error();
    if (done->timed_out)
      return make_error(work_errc::checkout_failed,
                        fmt::format("git did not finish within {} ms", spec_.command_limit.count()));
    if (!done->status.success())
      return make_error(work_errc::checkout_failed, fmt::format("git {}: {}", done->status.describe(), last_line(done->output)));
    return ok();
  }

  const workspace_spec& spec_;
  fs::path dir_;
  std::vector<std::string> git_env_;
  workspace_report report_;
};

}  // namespace

result<void> check_spec(const workspace_spec& spec) {
  std::set<std::string, std::less<>> names;
  for (const auto& r : spec.repositories) {
    if (!plain_name(r.name))
      return bad(fmt::format("repository name \"{}\" is not one path component ([A-Za-z0-9._-]+)", r.name));
    if (!names.insert(r.name).second) return bad(fmt::format("two repositories are named \"{}\"", r.name));
    if (r.url.empty()) return bad(fmt::format("repository {} has no URL", r.name));
    if (r.url.starts_with('-')) return bad(fmt::format("repository {}: a URL cannot start with '-'", r.name));
    if (r.branch.starts_with('-') || r.branch.find("..") != std::string::npos)
      return bad(fmt::format("repository {}: \"{}\" is not a branch name", r.name, r.branch));
  }
  for (const auto& c : spec.setup)
    if (c.find_first_not_of(" \t") == std::string::npos) return bad("an empty setup command");
  return ok();
}

result<workspace_report> prepare_workspace(const workspace_spec& spec, const fs::path& dir,
                                           workspace_decision decision) {
  TETHER_TRY(check_spec(spec));
  preparer p(spec, dir);
  return p.run(decision);
}

}  // namespace tether::work
