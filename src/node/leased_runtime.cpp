#include "node/leased_runtime.h"

#include <chrono>
#include <condition_variable>
#include <csignal>
#include <future>
#include <optional>
#include <utility>
#include <vector>

#include <spdlog/spdlog.h>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/post.hpp>

#include "env/kinds.h"
#include "env/tree.h"
#include "process/spawn.h"
#include "session/errors.h"
#include "store/async.h"
#include "util/errors.h"

namespace tether::node {

namespace asio = boost::asio;
namespace fs = std::filesystem;
using session::turn_result;
using session::turn_status;

// What one lease forwarded (kept while the keeper keeps it) and the tree
// both copies had after its last sync.
struct leased_runtime::forwards {
  std::mutex m;
  std::map<std::string, std::string> ports;    // "HOST:PORT" here -> there
  std::map<std::string, std::string> sockets;  // a path here -> there
  std::map<std::string, std::string> theirs;   // a port there -> "HOST:PORT" here
  std::string synced_sha;                      // "" until a sync
  // Stamps (env/tree.h stamp_tree, lease::stamp) of the two copies as the
  // last in-turn sync left them ("" unknown): a command that changed
  // nothing there, or no tool that wrote here, needs no transfer.
  std::string host_stamp;
  std::string lease_stamp;
  std::optional<env::tree_report> tree;  // what the last sync moved: the tree both copies then had
};

struct leased_runtime::placed {
  std::string name;
  std::unique_ptr<env::environment> env;
  std::unique_ptr<env::keeper> keeper;
  std::mutex m;
  std::map<std::string, std::shared_ptr<forwards>> leases;  // by key, while kept

  std::shared_ptr<forwards> forwards_of(const std::string& key) {
    std::lock_guard lock(m);
    auto& f = leases[key];
    if (!f) f = std::make_shared<forwards>();
    return f;
  }
  void forget(const std::string& key) {
    std::lock_guard lock(m);
    leases.erase(key);
  }
};

namespace {

// `fn()` on `pool`; the caller resumes on its own executor with the result.
template <class T, class Fn>
session::task<T> off_io(asio::thread_pool* pool, Fn fn) {
  return store::async_op<T>([pool, fn = std::move(fn)](store::completion<T> done) mutable {
    asio::post(*pool, [fn = std::move(fn), done = std::move(done)]() mutable { done(fn()); });
  });
}

class closed_spawner final : public process::spawner {
 public:
  result<process::spawned> spawn(const process::spawn_options&) override {
    return make_error(util_errc::invalid_argument, "the turn that had this lease is over");
  }
};

// A push of the host copy, and the stamps of both copies after it.
result<env::tree_report> push_stamped(env::lease& l, const fs::path& local, leased_runtime::forwards& f) {
  auto before = env::stamp_tree(local);  // taken before: a write during the push shows as a change next time
  auto sent = l.push(local);
  if (!sent) return sent.error();
  auto there = l.stamp();  // unknown ("") where the lease cannot make one: then nothing is skipped
  std::lock_guard lock(f.m);
  f.synced_sha = sent->sha256;
  f.host_stamp = before ? *before : std::string();
  f.lease_stamp = there ? *there : std::string();
  f.tree = *sent;
  return sent;
}

// A pull into the host copy — none when the lease's copy is as the last
// sync left it (its stamp) and, `host_too`, the host copy as well: then
// that sync's tree is the answer.
result<env::tree_report> pull_stamped(env::lease& l, const fs::path& local, leased_runtime::forwards& f,
                                      bool host_too) {
  auto there = l.stamp();  // taken before: a change during the pull shows next time
  auto here = host_too ? env::stamp_tree(local) : result<std::string>(std::string());
  {
    std::lock_guard lock(f.m);
    const bool lease_same = there && !f.lease_stamp.empty() && *there == f.lease_stamp;
    const bool host_same = !host_too || (here && !f.host_stamp.empty() && *here == f.host_stamp);
    if (lease_same && host_same && f.tree) {
      env::tree_report same = *f.tree;
      same.dropped = 0;
      same.cleared = 0;
      return same;
    }
  }
  auto got = l.pull(local);
  auto after = got ? env::stamp_tree(local) : result<std::string>(std::string());
  std::lock_guard lock(f.m);
  if (!got) {
    f.host_stamp.clear();
    f.lease_stamp.clear();
    return got.error();
  }
  f.synced_sha = got->sha256;
  f.lease_stamp = there ? *there : std::string();
  f.host_stamp = after ? *after : std::string();
  f.tree = *got;
  return got;
}

// The turn's view of its lease (session::turn_place). Closed when the turn
// returns: from then on nothing reaches the lease through it.
class lease_place final : public session::turn_place {
 public:
  lease_place(std::string environment, env::lease& l, std::shared_ptr<leased_runtime::forwards> f,
              asio::thread_pool& pool, fs::path local)
      : environment_(std::move(environment)),
        l_(&l),
        f_(std::move(f)),
        pool_(pool),
        local_(std::move(local)),
        workspace_(l.workspace()),
        home_((fs::path(l.workspace()).parent_path() / "agent-home").string()) {}

  [[nodiscard]] const std::string& environment() const override { return environment_; }
  process::spawner& spawner() override {
    std::lock_guard lock(m_);
    return l_ != nullptr ? l_->spawner() : closed_;
  }
  [[nodiscard]] const std::string& workspace() const override { return workspace_; }
  [[nodiscard]] const std::string& home() const override { return home_; }

  session::task<result<void>> put_file(std::string path, std::string content, unsigned mode) override {
    env::lease* l = live();
    if (l == nullptr) co_return over();
    auto put = [l, path = std::move(path), content = std::move(content), mode] {
      return l->put_file(path, content, mode);
    };
    co_return co_await off_io<result<void>>(&pool_, std::move(put));
  }

  session::task<result<std::string>> reach_port(std::string host, int port) override {
    env::lease* l = live();
    auto forward = [l, host, port] { return l->forward_port(host, port); };
    co_return co_await cached(&leased_runtime::forwards::ports, host + ":" + std::to_string(port), std::move(forward));
  }

  session::task<result<std::string>> reach_socket(std::string local) override {
    env::lease* l = live();
    auto forward = [l, local] { return l->forward_socket(local); };
    co_return co_await cached(&leased_runtime::forwards::sockets, local, std::move(forward));
  }

  session::task<result<std::string>> reach_there(int port) override {
    env::lease* l = live();
    auto forward = [l, port] { return l->forward_here(port); };
    co_return co_await cached(&leased_runtime::forwards::theirs, std::to_string(port), std::move(forward));
  }

  void signal(int relay, int sig) override {
    std::lock_guard lock(m_);
    if (l_ == nullptr) return;
    auto id = l_->command_id(relay);
    if (!id) return;
    ++pending_;
    asio::post(pool_, [this, l = l_, id = *id, sig] {
      if (auto r = l->signal(id, sig); !r)
        spdlog::warn("env: signal {} to command {} in {} failed: {}", sig, id, environment_, r.error().describe());
      std::lock_guard done(m_);
      --pending_;
      ended_.notify_all();
    });
  }

  session::task<result<void>> send_workspace(bool even_unchanged) override {
    env::lease* l = live();
    if (l == nullptr) co_return over();
    auto send = [l, local = local_, f = f_, even_unchanged]() -> result<void> {
      if (!even_unchanged) {
        auto now = env::stamp_tree(local);
        std::lock_guard lock(f->m);
        if (now && !f->host_stamp.empty() && *now == f->host_stamp) return ok();  // no tool wrote here
      }
      auto sent = push_stamped(*l, local, *f);
      if (!sent) return sent.error();
      return ok();
    };
    co_return co_await off_io<result<void>>(&pool_, std::move(send));
  }

  session::task<result<void>> fetch_workspace() override {
    env::lease* l = live();
    if (l == nullptr) co_return over();
    auto receive = [l, local = local_, f = f_]() -> result<void> {
      auto got = pull_stamped(*l, local, *f, false);  // the command ran there: only that side may have changed
      if (!got) return got.error();
      return ok();
    };
    co_return co_await off_io<result<void>>(&pool_, std::move(receive));
  }

  // Waits for the signals on their way, then lets go of the lease. Blocks.
  void close() {
    std::unique_lock lock(m_);
    ended_.wait(lock, [&] { return pending_ == 0; });
    l_ = nullptr;
  }

 private:
  env::lease* live() {
    std::lock_guard lock(m_);
    return l_;
  }
  // What the lease forwarded for `here` before, else `forward()` on the pool (kept when it worked).
  template <class Forward>
  session::task<result<std::string>> cached(std::map<std::string, std::string> leased_runtime::forwards::*cache,
                                            std::string here, Forward forward) {
    {
      std::lock_guard lock(f_->m);
      if (auto it = ((*f_).*cache).find(here); it != ((*f_).*cache).end()) co_return it->second;
    }
    if (live() == nullptr) co_return over();
    auto there = co_await off_io<result<std::string>>(&pool_, std::move(forward));
    if (there) {
      std::lock_guard lock(f_->m);
      ((*f_).*cache)[here] = *there;
    }
    co_return there;
  }
  static tether::error over() { return {util_errc::invalid_argument, "the turn that had this lease is over"}; }

  const std::string environment_;
  std::mutex m_;
  std::condition_variable ended_;
  env::lease* l_;
  int pending_ = 0;
  std::shared_ptr<leased_runtime::forwards> f_;
  asio::thread_pool& pool_;
  const fs::path local_;  // the host copy
  const std::string workspace_;
  const std::string home_;
  closed_spawner closed_;
};

// A turn that failed for its environment's sake, with the reason.
turn_result failed(const std::string& environment, const std::string& why) {
  turn_result r;
  r.status = turn_status::failed;
  r.error = "environment " + environment + ": " + why;
  return r;
}

// A record that did not land: the lease of the session is gone (interrupted) or the store failed.
turn_result not_recorded(const tether::error& e) {
  turn_result r;
  r.status = e == session::session_errc::lease_lost ? turn_status::interrupted : turn_status::failed;
  r.error = e.message;
  return r;
}

session::task<result<void>> record(std::shared_ptr<session::turn_host> host, model::payload p) {
  std::vector<model::payload> events;
  events.push_back(std::move(p));
  auto r = co_await host->record(std::move(events));
  if (!r) co_return r.error();
  co_return ok();
}

model::env_workspace_synced synced(std::string direction, const env::tree_report& t) {
  model::env_workspace_synced s;
  s.direction = std::move(direction);
  s.tree_sha256 = t.sha256;
  s.bytes = static_cast<std::int64_t>(t.bytes);
  s.entries = static_cast<std::int64_t>(t.entries);
  s.dropped = static_cast<std::int64_t>(t.dropped);
  s.cleared = static_cast<std::int64_t>(t.cleared);
  return s;
}

}  // namespace

leased_runtime::leased_runtime(session::runtime& inner, store::event_log& log, asio::any_io_executor io,
                               fs::path data_dir)
    : inner_(inner), log_(log), io_(std::move(io)), data_dir_(std::move(data_dir)) {}

leased_runtime::~leased_runtime() {
  for (auto& [name, p] : environments_) p->keeper->stop();
  if (pool_) pool_->join();
}

result<void> leased_runtime::place_profile(const std::string& profile, const config::environment_settings& e) {
  if (!pool_) pool_.emplace(8);
  auto it = environments_.find(e.name);
  if (it == environments_.end()) {
    auto made = env::make_environment(e);
    if (!made) return make_error(util_errc::invalid_argument, "profile " + profile + ": " + made.error().message);
    auto p = std::make_unique<placed>();
    p->name = e.name;
    p->env = std::move(*made);
    placed* raw = p.get();
    env::keeper_options ko;
    ko.keep_warm = std::chrono::milliseconds(e.keep_warm_ms);
    ko.on_released = [this, raw](const std::string& key, const std::string& provider_id, std::string_view reason,
                                 const result<void>& released) {
      if (!released)
        spdlog::warn("env: releasing {} in {} failed: {}", provider_id, raw->name, released.error().describe());
      raw->forget(key);
      record_release(raw->name, key, provider_id, reason);
    };
    p->keeper = std::make_unique<env::keeper>(*p->env, std::move(ko));
    it = environments_.emplace(e.name, std::move(p)).first;
  }
  profiles_[profile] = it->second.get();
  return ok();
}

// The release's event, appended to the session's log (no turn holds the
// session then: unfenced) before the key can be taken again, so the log
// keeps the order of what happened. Waits 10 s at most (a store that is
// stopping).
void leased_runtime::record_release(const std::string& environment, const std::string& key,
                                    const std::string& provider_id, std::string_view reason) {
  constexpr std::string_view prefix = "session-";
  if (key.rfind(prefix, 0) != 0) return;
  auto s = session_id::parse(std::string_view(key).substr(prefix.size()));
  if (!s) return;
  model::env_lease_released ev;
  ev.environment = environment;
  ev.provider_id = provider_id;
  ev.reason = std::string(reason);
  auto done = std::make_shared<std::promise<void>>();
  auto landed = done->get_future();
  asio::co_spawn(
      io_,
      [log = &log_, req = store::single_event(*s, std::move(ev)), done]() mutable -> session::task<void> {
        if (auto r = co_await log->append(std::move(req)); !r)
          spdlog::warn("env: the lease's release was not recorded: {}", r.error().describe());
        done->set_value();
      },
      asio::detached);
  if (landed.wait_for(std::chrono::seconds(10)) != std::future_status::ready)
    spdlog::warn("env: the release of {} in {} was not recorded within 10 s", provider_id, environment);
}

// Given back on the pool: a broken lease is released there (a round trip).
session::task<void> leased_runtime::give_back(std::optional<env::keeper::held> h) {
  auto drop = [h = std::move(h)]() mutable {
    h.reset();
    return 0;
  };
  co_await off_io<int>(blocking(), std::move(drop));
}

session::task<result<void>> leased_runtime::start() { co_return co_await inner_.start(); }

session::task<void> leased_runtime::stop() {
  stopped_ = true;
  if (!pool_) {
    co_await inner_.stop();
    co_return;
  }
  // Every kept lease stopped, off the I/O threads (a release's event needs one).
  std::vector<env::keeper*> keepers;
  for (auto& [name, p] : environments_) keepers.push_back(p->keeper.get());
  auto stop_all = [keepers] {
    for (auto* k : keepers) k->stop();
    return 0;
  };
  co_await off_io<int>(blocking(), std::move(stop_all));
  co_await inner_.stop();
}

session::task<void> leased_runtime::forget(session_id s) { co_await inner_.forget(std::move(s)); }

session::task<turn_result> leased_runtime::run_turn(session::turn_context ctx,
                                                    std::shared_ptr<session::turn_host> host) {
  const session_id s = ctx.session;
  const execution_id e = ctx.execution;
  const fs::path workspace = ctx.workspace.empty() ? data_dir_ / "workspaces" / s.str() : fs::path(ctx.workspace);
  const auto it = profiles_.find(ctx.profile.empty() ? std::string_view("default") : std::string_view(ctx.profile));
  if (snapshots_ != nullptr && snapshots_->pending(s)) {
    // The last turn's snapshot is still being taken: this turn may change the workspace only after.
    auto wait = [snaps = snapshots_, s] {
      snaps->wait_taken(s);
      return 0;
    };
    (void)co_await off_io<int>(snapshot_waits_, std::move(wait));
  }
  turn_result turn;
  if (it == profiles_.end())
    turn = co_await inner_.run_turn(std::move(ctx), std::move(host));
  else
    turn = co_await run_placed(it->second, std::move(ctx), std::move(host));
  if (snapshots_ != nullptr) snapshot_later(s, e, workspace);
  co_return turn;
}

void leased_runtime::keep_snapshots(const git_snapshots& s, asio::thread_pool& takes, asio::thread_pool& waits) {
  snapshots_ = &s;
  snapshot_takes_ = &takes;
  snapshot_waits_ = &waits;
}

// Marked pending now, before the turn's end is recorded; taken on the pool.
void leased_runtime::snapshot_later(session_id s, execution_id e, fs::path workspace) {
  snapshots_->begin(s);
  asio::post(*snapshot_takes_, [snaps = snapshots_, s = std::move(s), e = std::move(e), w = std::move(workspace)] {
    auto taken = snaps->take(s, e, w);
    snaps->end(s);
    if (!taken)
      spdlog::warn("session {}: no snapshot of the workspace after {} (a fork there is refused): {}", s.str(), e.str(),
                   taken.error().message);
  });
}

session::task<leased_runtime::recorded_lease> leased_runtime::recorded(session_id s, std::string environment) {
  recorded_lease out;
  event_seq after;
  bool ours = false;  // the synced events that follow an acquire in `environment`
  for (;;) {
    auto page = co_await log_.read(s, after, 500);
    if (!page) co_return out;  // a guess less: the kind still finds the lease by its name, and the tree goes up
    for (const auto& e : page->events) {
      if (const auto* a = e.as<model::env_lease_acquired>(); a != nullptr) {
        ours = a->environment == environment;
        if (ours) out.provider_id = a->provider_id;
      } else if (const auto* y = e.as<model::env_workspace_synced>(); y != nullptr && ours) {
        out.synced_sha = y->tree_sha256;
      }
      after = e.seq;
    }
    if (!page->more || page->events.empty()) co_return out;
  }
}

session::task<turn_result> leased_runtime::run_placed(placed* p, session::turn_context ctx,
                                                      std::shared_ptr<session::turn_host> host) {
  const session_id sid = ctx.session;
  const std::string key = "session-" + sid.str();
  env::keeper* keeper = p->keeper.get();

  // 1. The lease: the warm one, else acquired after the request is recorded.
  std::string lost;
  auto take_warm = [keeper, key, lost_id = &lost] { return keeper->take_warm(key, lost_id); };
  auto warm = co_await off_io<result<std::optional<env::keeper::held>>>(blocking(), std::move(take_warm));
  if (!warm) co_return failed(p->name, warm.error().message);
  std::optional<env::keeper::held> held = std::move(*warm);
  recorded_lease log_said;
  if (!held) {
    env::lease_request req;
    req.key = key;
    req.labels["tether-session"] = sid.str();
    req.labels["tether-environment"] = p->name;
    if (!lost.empty()) {
      req.previous = lost;
    } else {
      log_said = co_await recorded(sid, p->name);
      req.previous = log_said.provider_id;
    }
    model::env_lease_requested asked;
    asked.environment = p->name;
    asked.key = key;
    asked.provider_name = env::provider_name(key);
    for (const auto& [k, v] : req.labels) asked.labels[k] = v;
    model::payload ask = std::move(asked);
    if (auto r = co_await record(host, std::move(ask)); !r) co_return not_recorded(r.error());
    auto take = [keeper, req] { return keeper->take(req); };
    auto got = co_await off_io<result<env::keeper::held>>(blocking(), std::move(take));
    if (!got) co_return failed(p->name, got.error().message);
    held = std::move(*got);
  }
  env::lease& lease = held->get();
  model::env_lease_acquired acquired;
  acquired.environment = p->name;
  acquired.provider_id = lease.provider_id();
  acquired.outcome = std::string(env::to_string(held->outcome()));
  acquired.warm = held->warm();
  acquired.workspace = lease.workspace();
  model::payload acquired_event = std::move(acquired);
  if (auto r = co_await record(host, std::move(acquired_event)); !r) co_return not_recorded(r.error());

  // A lease made anew (created: a fork's first turn, say; or made again for
  // one that was gone) has an empty home: the agent session the binding
  // names is not there. The turn starts a new one with the transcript
  // rather than asking the agent for a session it cannot find, and says so.
  if (!held->warm() && held->outcome() != env::lease_outcome::resumed && ctx.binding) {
    model::agent_state_unavailable gone;
    gone.kind = ctx.binding->runtime;
    gone.agent_session = ctx.binding->external_session_id;
    gone.reason = "the lease in " + p->name + " was " + std::string(env::to_string(held->outcome())) +
                  ": its home holds no state of this agent session, so a new one starts with the transcript";
    model::payload gone_event = std::move(gone);
    if (auto r = co_await record(host, std::move(gone_event)); !r) co_return not_recorded(r.error());
    ctx.binding.reset();
  }

  // A program an earlier Tether left running there (a SIGKILL mid-turn) is
  // stopped, never run again, and the turn is told.
  if (!held->warm()) {
    auto sweep = [l = &lease]() -> result<std::vector<env::command_record>> {
      auto all = l->commands();
      if (!all) return all.error();
      std::vector<env::command_record> stopped;
      for (const auto& c : *all) {
        if (c.status != env::command_record::state::running) continue;
        if (auto r = l->signal(c.id, SIGKILL); !r) return r.error();
        stopped.push_back(c);
      }
      return stopped;
    };
    auto stopped = co_await off_io<result<std::vector<env::command_record>>>(blocking(), std::move(sweep));
    if (!stopped) co_return failed(p->name, "reading its command journal: " + stopped.error().message);
    for (const auto& c : *stopped) {
      model::synthetic told;
      told.text = "In " + p->name + ", " + (c.program.empty() ? std::string("a program") : c.program) + " (command " +
                  c.id + ") was still running from a turn before Tether restarted: it was " +
                  "stopped, its outcome is unknown, and it was not run again.";
      told.reason = "environment";
      model::payload told_event = std::move(told);
      if (auto r = co_await record(host, std::move(told_event)); !r) co_return not_recorded(r.error());
    }
  }

  // 2. The host copy goes up unless the lease's is known to hold the tree
  // it had at the last sync and the host copy still is that tree (a
  // resumed lease after a restart keeps what a turn cut short left there).
  const fs::path local = ctx.workspace.empty() ? data_dir_ / "workspaces" / sid.str() : fs::path(ctx.workspace);
  auto f = p->forwards_of(key);
  std::string expected;  // "" unknown: it goes up
  if (held->warm()) {
    std::lock_guard lock(f->m);
    expected = f->synced_sha;
  } else if (held->outcome() == env::lease_outcome::resumed) {
    expected = log_said.synced_sha;
  }
  auto send = [l = &lease, local, f, expected]() -> result<std::optional<env::tree_report>> {
    std::error_code ec;
    fs::create_directories(local, ec);
    auto here = env::describe_tree(local);
    if (!here) return here.error();
    if (!expected.empty() && here->sha256 == expected) {
      std::lock_guard lock(f->m);
      f->synced_sha = expected;
      return std::optional<env::tree_report>();
    }
    auto sent = push_stamped(*l, local, *f);
    if (!sent) return sent.error();
    return std::optional<env::tree_report>(*sent);
  };
  auto up = co_await off_io<result<std::optional<env::tree_report>>>(blocking(), std::move(send));
  if (!up) {
    held->broken();
    co_await give_back(std::move(held));
    co_return failed(p->name, "sending the workspace: " + up.error().message);
  }
  if (*up) {
    model::payload sent_event = synced("up", **up);
    if (auto r = co_await record(host, std::move(sent_event)); !r) co_return not_recorded(r.error());
  }

  // 3. The turn, there.
  auto place = std::make_shared<lease_place>(p->name, lease, f, *pool_, local);
  ctx.place = place;
  turn_result turn = co_await inner_.run_turn(std::move(ctx), host);
  auto let_go = [place] {
    place->close();
    return 0;
  };
  co_await off_io<int>(blocking(), std::move(let_go));

  // 4. The workspace comes back, whole or not at all — or not at all when
  // neither copy changed since the last sync (their stamps).
  auto receive = [l = &lease, local, f] { return pull_stamped(*l, local, *f, true); };
  auto down = co_await off_io<result<env::tree_report>>(blocking(), std::move(receive));
  if (!down) {
    held->broken();
    const std::string why =
        "environment " + p->name +
        ": bringing the workspace back failed (the host copy is as it was): " + down.error().message;
    if (turn.status == turn_status::failed) {
      turn.error += "; " + why;
    } else if (turn.status != turn_status::interrupted) {
      turn.status = turn_status::failed;
      turn.error = why;
    }
  } else {
    model::payload back_event = synced("down", *down);
    if (auto r = co_await record(host, std::move(back_event)); !r)
      spdlog::warn("env: the sync of {} was not recorded: {}", sid.str(), r.error().describe());
  }

  // 5. Given back: kept warm, or (broken) released now.
  co_await give_back(std::move(held));
  co_return turn;
}

}  // namespace tether::node
