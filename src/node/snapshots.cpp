#include "node/snapshots.h"

#include <sys/stat.h>

#include <algorithm>
#include <fstream>
#include <system_error>
#include <utility>
#include <vector>

#include <boost/asio/post.hpp>
#include <fmt/format.h>

#include "process/run_to_end.h"
#include "session/errors.h"
#include "store/async.h"
#include "util/errors.h"
#include "util/text.h"

namespace tether::node {

namespace fs = std::filesystem;
namespace asio = boost::asio;

namespace {

constexpr auto git_limit = std::chrono::minutes(5);

error io(std::string what) { return error{std::make_error_code(std::errc::io_error), std::move(what)}; }

// A ref name component: the ids Tether makes are letters, digits, '_' and '-'.
bool ref_safe(std::string_view id) {
  return !id.empty() && id.size() <= 128 && std::all_of(id.begin(), id.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
  });
}

// git with only what Tether sets: no system or global configuration, no
// hooks, no prompt; `git_dir`, and the work tree and index when given.
// `stdin_file` becomes git's stdin (run_to_end keeps a child's null): sh
// redirects it, the path passed as $0, never parsed as a command.
struct git_call {
  fs::path git_dir;
  fs::path work_tree;
  fs::path index;
  int compression = 1;
  fs::path stdin_file;

  result<std::string> operator()(std::vector<std::string> args, bool quiet_failure = false) const {
    static const auto program = process::find_program("git");
    if (!program) return io("git is not installed (not on PATH)");
    process::spawn_options o;
    if (!stdin_file.empty()) {
      static const auto sh = process::find_program("sh");
      if (!sh) return io("sh is not installed (not on PATH)");
      o.argv = {sh->string(), "-c", "exec \"$@\" < \"$0\"", stdin_file.string()};
    }
    // A checkout writes with every core (checkout.workers 0); objects are
    // deflated at `compression` (1: fast, a third of text's size; 0 for
    // what is deflated already, a repository's own objects).
    const std::vector<std::string> git{program->string(), "-c", "core.hooksPath=/dev/null", "-c", "core.fsmonitor=false",
              "-c", "core.looseCompression=" + std::to_string(compression), "-c", "core.autocrlf=false",
              "-c", "core.symlinks=true", "-c", "checkout.workers=0", "-c", "checkout.thresholdForParallelism=64"};
    o.argv.insert(o.argv.end(), git.begin(), git.end());
    o.argv.insert(o.argv.end(), std::make_move_iterator(args.begin()), std::make_move_iterator(args.end()));
    o.env = {"PATH=/usr/bin:/bin", "HOME=/nonexistent", "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null",
             "GIT_TERMINAL_PROMPT=0", "GIT_DIR=" + git_dir.string(), "LC_ALL=C"};
    if (!work_tree.empty()) o.env.push_back("GIT_WORK_TREE=" + work_tree.string());
    if (!index.empty()) o.env.push_back("GIT_INDEX_FILE=" + index.string());
    auto done = process::run_to_end(std::move(o), {.limit = git_limit, .max_output = 1U << 20U});
    if (!done) return io("cannot run git: " + done.error().message);
    if (done->timed_out) return io("git did not finish within 5 minutes");
    if (!done->status.success()) {
      if (quiet_failure) return make_error(util_errc::not_found, last_line(done->output));
      return io(fmt::format("git {}: {}", done->status.describe(), last_line(done->output)));
    }
    auto out = std::move(done->output);
    while (!out.empty() && (out.back() == '\n' || out.back() == '\r')) out.pop_back();
    return out;
  }
};

result<void> init_bare(const fs::path& repo) {
  std::error_code ec;
  if (fs::exists(repo / "HEAD", ec)) return ok();
  fs::create_directories(repo.parent_path(), ec);
  if (ec) return io("cannot make " + repo.parent_path().string() + ": " + ec.message());
  git_call git{repo};
  // No template: no sample hooks, no description; nothing but the layout.
  auto made = git({"init", "-q", "--bare", "--template=", repo.string()});
  if (!made) return made.error();
  return ok();
}

// What take() would hash, counted before any of it is: refused over budget.
result<void> within(const fs::path& workspace, const snapshot_budget& b) {
  std::uint64_t bytes = 0;
  std::uint64_t entries = 0;
  std::error_code ec;
  fs::recursive_directory_iterator it(workspace, fs::directory_options::none, ec);
  if (ec) return io("cannot read " + workspace.string() + ": " + ec.message());
  for (const fs::recursive_directory_iterator end; it != end; it.increment(ec)) {
    if (ec) return io("cannot read " + workspace.string() + ": " + ec.message());
    const auto st = it->symlink_status(ec);
    if (ec) continue;  // gone since it was listed
    if (++entries > b.entries)
      return io(fmt::format("the workspace has more than {} entries (the snapshot budget)", b.entries));
    if (fs::is_regular_file(st)) {
      bytes += it->file_size(ec);
      if (bytes > b.bytes) return io(fmt::format("the workspace holds more than {} bytes (the snapshot budget)", b.bytes));
    }
  }
  return ok();
}

// A tree of `work` in `repo` through its index `index`: git add -A, write-tree.
result<std::string> tree_of(const fs::path& repo, const fs::path& work, const fs::path& index, bool all) {
  // A repository's own objects are deflated already: stored as they are.
  git_call git{repo, work, index, all ? 0 : 1};
  std::vector<std::string> add{"add", "-A", "--ignore-errors"};
  if (all) add.emplace_back("-f");
  add.emplace_back("--");
  add.emplace_back(".");
  // --ignore-errors: a file the agent left unreadable is left out, not the snapshot.
  auto added = git(std::move(add));
  if (!added && !fs::exists(index)) return added.error();
  return git({"write-tree"});
}

result<void> check_out(const fs::path& repo, const std::string& tree, const fs::path& work, const fs::path& index) {
  git_call git{repo, work, index};
  if (auto r = git({"read-tree", tree}); !r) return r.error();
  if (auto r = git({"checkout-index", "-a", "-f"}); !r) return r.error();
  return ok();
}

class pooled final : public session::workspace_snapshots {
 public:
  pooled(const git_snapshots& s, asio::any_io_executor pool) : snaps_(s), pool_(std::move(pool)) {}

  session::workspace_snapshots::task<result<std::string>> restore(session_id source, execution_id execution, session_id fork) override {
    auto run = [this, source = std::move(source), execution = std::move(execution), fork = std::move(fork)] {
      return snaps_.restore_now(source, execution, fork);
    };
    co_return co_await on_pool<result<std::string>>(std::move(run));
  }
  session::workspace_snapshots::task<void> discard(session_id fork) override {
    auto run = [this, fork = std::move(fork)] {
      snaps_.discard_now(fork);
      return 0;
    };
    (void)co_await on_pool<int>(std::move(run));
  }

 private:
  template <class T, class Fn>
  session::workspace_snapshots::task<T> on_pool(Fn fn) {
    auto init = [pool = pool_, fn = std::move(fn)](store::completion<T> done) mutable {
      asio::post(pool, [fn = std::move(fn), done = std::move(done)]() mutable { done(fn()); });
    };
    co_return co_await store::async_op<T>(std::move(init));
  }

  const git_snapshots& snaps_;
  asio::any_io_executor pool_;
};

}  // namespace

git_snapshots::git_snapshots(fs::path data_dir, snapshot_budget budget)
    : data_(std::move(data_dir)), budget_(budget) {}

fs::path git_snapshots::repository(const session_id& s) const { return data_ / "snapshots" / (s.str() + ".git"); }
fs::path git_snapshots::workspace(const session_id& s) const { return data_ / "workspaces" / s.str(); }

result<std::string> git_snapshots::take(const session_id& s, const execution_id& e, const fs::path& workspace) const {
  if (!ref_safe(s.str()) || !ref_safe(e.str())) return make_error(util_errc::invalid_argument, "not a ref name");
  std::error_code ec;
  if (!fs::is_directory(workspace, ec)) return io("the workspace " + workspace.string() + " is not a directory");
  TETHER_TRY(within(workspace, budget_));
  const fs::path repo = repository(s);
  TETHER_TRY(init_bare(repo));
  auto files = tree_of(repo, workspace, repo / "files.index", false);
  if (!files) return files.error();
  std::string listing = "040000 tree " + *files + "\tfiles\n";
  const fs::path own_git = workspace / ".git";
  if (fs::is_directory(fs::symlink_status(own_git, ec))) {
    auto repo_tree = tree_of(repo, own_git, repo / "git.index", true);
    if (!repo_tree) return repo_tree.error();
    listing += "040000 tree " + *repo_tree + "\tgit\n";
  }
  const fs::path listing_file = repo / "listing";
  {
    std::ofstream out(listing_file, std::ios::trunc);
    out << listing;
    if (!out) return io("cannot write " + listing_file.string());
  }
  auto id = git_call{.git_dir = repo, .stdin_file = listing_file}({"mktree"});
  if (!id) return id.error();
  if (auto r = git_call{.git_dir = repo}({"update-ref", "refs/turns/" + e.str(), *id}); !r) return r.error();
  return *id;
}

result<std::string> git_snapshots::restore_now(const session_id& source, const execution_id& e,
                                               const session_id& fork) const {
  if (!ref_safe(source.str()) || !ref_safe(e.str()) || !ref_safe(fork.str()))
    return make_error(util_errc::invalid_argument, "not a ref name");
  wait_taken(source);  // a turn's snapshot still being taken is waited for
  const fs::path from = repository(source);
  std::error_code ec;
  if (!fs::exists(from / "HEAD", ec))
    return make_error(session::session_errc::cannot_fork,
                      "no snapshot of " + source.str() + "'s workspace was taken on this node");
  git_call src{from};
  auto tree = src({"rev-parse", "-q", "--verify", "refs/turns/" + e.str() + "^{tree}"}, true);
  if (!tree)
    return make_error(session::session_errc::cannot_fork,
                      "no snapshot of the workspace when " + e.str() +
                          " ended on this node (taken elsewhere, over the snapshot budget, or the turn was "
                          "settled by a recovery, not run)");
  const fs::path ws = workspace(fork);
  if (fs::exists(ws, ec) && !fs::is_empty(ws, ec))
    return make_error(session::session_errc::cannot_fork, "the fork's workspace " + ws.string() + " is in use");
  const fs::path repo = repository(fork);
  if (fs::exists(repo, ec))
    return make_error(session::session_errc::cannot_fork, "the fork's snapshot repository " + repo.string() + " exists");
  TETHER_TRY(init_bare(repo));
  {
    // The fork's repository borrows the source's objects (and, through its
    // alternates, those it borrows): nothing is copied.
    std::ofstream alt(repo / "objects" / "info" / "alternates", std::ios::trunc);
    alt << fs::absolute(from / "objects").string() << "\n";
    if (!alt) return io("cannot write the fork's alternates");
  }
  fs::create_directories(ws, ec);
  if (ec) return io("cannot make " + ws.string() + ": " + ec.message());
  ::chmod(ws.c_str(), 0700);
  git_call fk{repo};
  TETHER_TRY(check_out(repo, *tree + ":files", ws, repo / "files.index"));
  if (fk({"cat-file", "-e", *tree + ":git"}, true)) {
    fs::create_directories(ws / ".git", ec);
    if (ec) return io("cannot make " + (ws / ".git").string() + ": " + ec.message());
    TETHER_TRY(check_out(repo, *tree + ":git", ws / ".git", repo / "git.index"));
  }
  return *tree;
}

void git_snapshots::begin(const session_id& s) const {
  std::lock_guard lock(pending_->m);
  ++pending_->by_session[s.str()];
}

void git_snapshots::end(const session_id& s) const {
  {
    std::lock_guard lock(pending_->m);
    auto it = pending_->by_session.find(s.str());
    if (it != pending_->by_session.end() && --it->second <= 0) pending_->by_session.erase(it);
  }
  pending_->done.notify_all();
}

bool git_snapshots::pending(const session_id& s) const {
  std::lock_guard lock(pending_->m);
  return pending_->by_session.contains(s.str());
}

void git_snapshots::wait_taken(const session_id& s) const {
  std::unique_lock lock(pending_->m);
  pending_->done.wait(lock, [&] { return !pending_->by_session.contains(s.str()); });
}

void git_snapshots::discard_now(const session_id& fork) const {
  if (!ref_safe(fork.str())) return;
  std::error_code ec;
  fs::remove_all(workspace(fork), ec);
  fs::remove_all(repository(fork), ec);
}

std::unique_ptr<session::workspace_snapshots> git_snapshots::as_session(asio::any_io_executor pool) const {
  return std::make_unique<pooled>(*this, std::move(pool));
}

}  // namespace tether::node
