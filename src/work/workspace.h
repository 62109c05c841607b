// work::prepare_workspace — a task's workspace in the `local` environment: an
// isolated directory holding a checkout of each of its project's
// repositories on its branch, made, kept, refreshed or replaced as the
// freshness decision says (work/fingerprint.h).
//
//   work::workspace_spec spec;
//   spec.repositories = {{.name = "api", .url = "/srv/git/api.git", .branch = "main"},
//                        {.name = "web", .url = "https://git.example/web.git", .branch = "dev"}};
//   spec.setup = {"make deps"};                       // lifecycle commands, in order
//   auto r = work::prepare_workspace(spec, dir, decision);
//   if (!r) log(r.error().message);                   // "clone of web failed: …"
//   for (const auto& step : r->steps) …               // what was done, one line each
//
// Decisions:
//   create   `dir` must not exist or be empty: it is made (0700), each
//            repository is checked out into dir/<name>, then the setup
//            commands run in `dir`
//   reuse    nothing is done (when `dir` is missing it is created instead,
//            and the report says so)
//   refresh  the setup commands run again
//   replace  `dir` is removed (worktrees of local repositories are pruned
//            from their repository first), then as create
//
// Checkouts: strategy clone runs `git clone --branch BRANCH -- URL
// dir/NAME` (without a branch: the remote's default). Strategy worktree
// adds a `git worktree add` of a local, non-bare repository (`url` a path)
// on BRANCH, detached when the branch is checked out elsewhere; a URL that
// is not a local repository is cloned instead. Git runs with argv (no shell),
// stdin from /dev/null, GIT_TERMINAL_PROMPT=0 (never waits for a password),
// and GIT_ALLOW_PROTOCOL=file:git:http:https:ssh, so a URL cannot name a
// remote helper such as ext:: that would run a command.
//
// Errors (work/errors.h). Refused before anything runs (invalid_spec): a repository
// name that is not one path component ([A-Za-z0-9._-]+, not "." or ".."),
// two repositories with the same name, an empty URL or one starting with
// '-', a branch starting with '-' or containing "..", an empty setup
// command. not_empty: create into a directory that holds something.
// checkout_failed: a clone or worktree failed (the repository named, git's
// last line). command_failed: see below. io: a directory could not be made
// or removed, or git is not installed.
//
// Setup commands run through /bin/sh -c in `dir` with the environment given
// in spec.env (the caller decides what a command may see), each within
// spec.command_limit. A failed command (or one that timed out) is the error,
// with its exit status and the last line it printed; later ones do not run.
//
// Everything blocks (git and the commands): call it from a blocking pool.
#pragma once

#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

#include "util/result.h"
#include "work/fingerprint.h"

namespace tether::work {

struct repository {
  std::string name;    // the checkout's directory in the workspace
  std::string url;     // a path, file://, https://, ssh://, git://, or scp-like host:path
  std::string branch;  // empty: the remote's default branch
};

enum class checkout_strategy { clone, worktree };

struct workspace_spec {
  std::vector<repository> repositories;
  checkout_strategy strategy = checkout_strategy::clone;
  std::vector<std::string> setup;     // lifecycle commands, run in the workspace
  std::vector<std::string> env;       // "NAME=value": the commands' (and git's) environment, PATH included
  std::chrono::milliseconds command_limit{600'000};
};

struct workspace_report {
  workspace_decision done = workspace_decision::create;  // what was actually done
  std::vector<std::string> steps;                         // "cloned api (main)", "ran: make deps", …
};

result<workspace_report> prepare_workspace(const workspace_spec& spec, const std::filesystem::path& dir,
                                           workspace_decision decision);

// The spec's problems, as prepare_workspace() refuses them (ok when none).
result<void> check_spec(const workspace_spec& spec);

}  // namespace tether::work
