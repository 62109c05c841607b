#include "env/daytona/daytona.h"

#include <cstdio>
#include <fstream>
#include <iterator>
#include <mutex>
#include <thread>

#include "env/daytona/api.h"
#include "env/ssh/command.h"
#include "env/tree.h"
#include "process/run_to_end.h"

namespace tether::env::daytona {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using ssh::quote;

namespace {

constexpr const char* workspace_dir = "/home/daytona/workspace";
constexpr const char* tether_dir = "/home/daytona/.tether";
constexpr const char* journal_dir = "/home/daytona/.tether/commands";

std::vector<std::string> tool_environment() { return {"PATH=/usr/bin:/bin", "LC_ALL=C"}; }

// A command in the sandbox that must succeed: its output, or what its failure means.
result<std::string> must(api& a, const sandbox_info& s, const std::string& what, const std::string& line,
                         std::chrono::seconds limit = 600s) {
  auto r = a.execute(s, line, limit);
  if (!r) return r.error();
  if (r->exit_code != 0) {
    const auto code = r->output.find("No space left on device") != std::string::npos ? env_errc::no_space
                                                                                      : env_errc::failed;
    return error(code, what + " failed (exit " + std::to_string(r->exit_code) + "): " + r->output.substr(0, 2000));
  }
  return std::move(r->output);
}

class daytona_lease;

class lease_spawner final : public process::spawner {
 public:
  explicit lease_spawner(daytona_lease& l) : l_(l) {}
  result<process::spawned> spawn(const process::spawn_options& o) override;

 private:
  daytona_lease& l_;
};

class daytona_lease final : public lease {
 public:
  daytona_lease(const daytona_options& o, std::shared_ptr<api> a, sandbox_info s, lease_outcome outcome)
      : o_(o), api_(std::move(a)), s_(std::move(s)), provider_id_("daytona:" + s_.id), outcome_(outcome),
        workspace_(workspace_dir), spawner_(*this) {}

  [[nodiscard]] const std::string& provider_id() const override { return provider_id_; }
  [[nodiscard]] lease_outcome outcome() const override { return outcome_; }
  [[nodiscard]] const std::string& workspace() const override { return workspace_; }
  process::spawner& spawner() override { return spawner_; }
  [[nodiscard]] const sandbox_info& sandbox() const { return s_; }

  result<process::spawned> spawn_remote(const process::spawn_options& o) {
    auto j = ssh::journal_spawn(o, journal_dir, workspace_, "/usr/local/bin:/usr/bin:/bin");
    if (!j) return j.error();
    // No end of input reaches a Daytona command: one that gets none reads /dev/null.
    const std::string text = o.stdin_mode == process::input::null ? "{ " + j->line + "; } < /dev/null" : j->line;
    auto env = tool_environment();
    env.push_back("TETHER_DAYTONA_KEY=" + o_.api_key);
    return relays_.spawn(o,
                         {o_.relay_program.string(), "env-relay", "daytona", "--api-url", o_.api_url, "--toolbox-url",
                          s_.toolbox_url, "--sandbox", s_.id, "--session", "tether-" + j->id, "--command", text},
                         std::move(env), j->id);
  }

  std::optional<std::string> command_id(pid_t relay) override { return relays_.id_of(relay); }

  result<std::vector<command_record>> commands() override {
    auto out = must(*api_, s_, "reading the command journal", ssh::journal_listing(journal_dir), 60s);
    if (!out) return out.error();
    return ssh::parse_journal(*out);
  }

  result<void> signal(const std::string& id, int sig) override {
    auto script = ssh::signal_command(journal_dir, id, sig);
    if (!script) return script.error();
    auto out = must(*api_, s_, "signalling command " + id, *script, 60s);
    if (!out) return out.error();
    const auto m = ssh::marked_lines(*out);
    if (!m.empty() && m.front() == "unknown") return error(env_errc::not_found, "no command " + id + " in the journal");
    return {};
  }

  result<tree_report> push(const fs::path& local) override {
    auto report = describe_tree(local);
    if (!report) return report;
    auto packed = process::run_to_end({.argv = {"/usr/bin/tar", "-cf", "-", "--numeric-owner", "-C", local.string(), "."},
                                       .env = tool_environment(), .stderr_mode = process::output::null},
                                      {.limit = 600'000ms, .max_output = std::size_t{4} << 30});
    if (!packed || !packed->status.success() || packed->dropped > 0) {
      return error(env_errc::failed, "packing " + local.string() + " failed");
    }
    const std::string tar = std::string(tether_dir) + "/push.tar";
    if (auto up = api_->upload(s_, tar, packed->output); !up) return up.error();
    const std::string w = quote(workspace_);
    auto unpacked = must(*api_, s_, "unpacking the workspace",
                         "rm -rf " + w + ".in && mkdir -p " + w + ".in && tar -xf " + quote(tar) +
                             " --no-same-owner -C " + w + ".in && rm -rf " + w + " && mv " + w + ".in " + w +
                             "; rc=$?; rm -f " + quote(tar) + " " + (" ; [ $rc = 0 ] || rm -rf " + w + ".in") +
                             "; exit $rc");
    if (!unpacked) return unpacked.error();
    return report;
  }

  result<tree_report> pull(const fs::path& local) override {
    const std::string tar = std::string(tether_dir) + "/pull.tar";
    auto packed = must(*api_, s_, "packing the workspace",
                       "[ -d " + quote(workspace_) + " ] || { echo 'the workspace is gone'; exit 3; }; tar -cf " +
                           quote(tar) + " --numeric-owner -C " + quote(workspace_) + " .");
    if (!packed) {
      if (packed.error().message.find("the workspace is gone") != std::string::npos) {
        return error(env_errc::lost, "the sandbox's workspace is gone");
      }
      return packed.error();
    }
    auto bytes = api_->download(s_, tar);
    (void)api_->execute(s_, "rm -f " + quote(tar), 60s);
    if (!bytes) return bytes.error();
    return receive_tree(local, [&](const fs::path& archive) -> result<void> {
      std::ofstream out(archive, std::ios::binary | std::ios::trunc);
      out << *bytes;
      out.close();
      if (!out) return error(env_errc::failed, "cannot write " + archive.string());
      return {};
    });
  }

  result<file_stat> stat(const std::string& path) override {
    const std::string p = !path.empty() && path[0] == '/' ? path : workspace_ + "/" + path;
    auto i = api_->info(s_, p);
    if (!i) return i.error();
    file_stat st;
    if (!*i) return st;
    st.exists = true;
    st.directory = (*i)->directory;
    st.size = (*i)->size;
    st.mode = static_cast<unsigned>(std::strtoul((*i)->permissions.c_str(), nullptr, 8));
    return st;
  }

  result<std::string> forward_socket(const fs::path&) override {
    return error(env_errc::invalid, "a Daytona sandbox has no Unix socket forwarding: it reaches Tether over HTTP");
  }

  result<void> put_file(const std::string& path, const std::string& content, unsigned mode) override {
    const std::string p = !path.empty() && path[0] == '/' ? path : workspace_ + "/" + path;
    const std::string dir = p.substr(0, p.rfind('/'));
    char octal[8];
    std::snprintf(octal, sizeof octal, "%o", mode & 07777);
    auto made = must(*api_, s_, "making " + dir, "umask 077; mkdir -p -- " + quote(dir.empty() ? "/" : dir), 60s);
    if (!made) return made.error();
    if (auto up = api_->upload(s_, p + ".put", content); !up) return up.error();
    auto placed = must(*api_, s_, "writing " + path,
                       std::string("chmod ") + octal + " " + quote(p + ".put") + " && mv -f -- " + quote(p + ".put") +
                           " " + quote(p),
                       60s);
    if (!placed) return placed.error();
    return {};
  }

  result<std::string> forward_port(const std::string& host, int port) override {
    if (o_.reach_host.empty()) {
      return error(env_errc::invalid, "environment " + o_.name +
                                          ": a sandbox cannot reach this machine (set reach_host to an address it can)");
    }
    (void)host;  // this machine's own address for it: the sandbox knows it as reach_host
    return o_.reach_host + ":" + std::to_string(port);
  }

  result<std::string> stamp() override {
    auto out = must(*api_, s_, "stamping the workspace", ssh::stamp_script(workspace_), 60s);
    if (!out) return out.error();
    return ssh::parse_stamp(*out);
  }

  result<std::string> forward_here(int port) override {
    return error(env_errc::invalid, "a Daytona sandbox's port " + std::to_string(port) +
                                        " is not forwarded to this machine (Daytona's preview URLs are not used)");
  }

  result<void> check() override {
    auto now = api_->get(s_.id);
    if (!now) return now.error();
    if (!*now || (*now)->state != "started") {
      return error(env_errc::lost, "sandbox " + s_.id + " is " + (*now ? (*now)->state : std::string("gone")));
    }
    return {};
  }

 private:
  const daytona_options& o_;
  std::shared_ptr<api> api_;
  sandbox_info s_;
  std::string provider_id_;
  lease_outcome outcome_;
  std::string workspace_;
  lease_spawner spawner_;
  ssh::relays relays_;
};

result<process::spawned> lease_spawner::spawn(const process::spawn_options& o) { return l_.spawn_remote(o); }

class daytona_environment final : public environment {
 public:
  explicit daytona_environment(daytona_options o)
      : o_(std::move(o)), api_(std::make_shared<api>(api_options{.api_url = o_.api_url, .api_key = o_.api_key,
                                                                 .ca_file = o_.ca_file})) {}

  [[nodiscard]] const std::string& name() const override { return o_.name; }
  [[nodiscard]] std::string_view kind() const override { return "daytona"; }

  result<std::unique_ptr<lease>> acquire(const lease_request& request) override {
    if (request.key.empty()) return error(env_errc::invalid, "a lease needs a key");
    const std::string name = provider_name(request.key);
    auto found = api_->get(name);
    if (!found) return found.error();
    lease_outcome outcome = lease_outcome::resumed;
    std::optional<sandbox_info> s = std::move(*found);
    if (!s) {
      create_request c{.name = name, .labels = request.labels, .target = o_.target, .snapshot = o_.snapshot,
                       .image = o_.image, .cpu = o_.cpu, .memory = o_.memory, .disk = o_.disk,
                       .auto_stop = o_.auto_stop, .auto_archive = o_.auto_archive, .auto_delete = o_.auto_delete};
      c.labels["tether-key"] = provider_name(request.key);
      auto made = api_->create(c);
      if (!made && made.error() != env_errc::refused) {
        // The create may have been made without its answer arriving (or made
        // twice by a resend, the second refused for its name): the name finds it.
        auto again = api_->get(name);
        if (!again || !*again) return made.error();
        made = std::move(**again);
      }
      if (!made) return made.error();
      s = std::move(*made);
      outcome = request.previous ? lease_outcome::replaced : lease_outcome::created;
    }
    auto started = ensure_started(*s);
    if (!started) return started.error();
    auto prepared = must(*api_, *started, "preparing the workspace",
                         std::string("mkdir -p ") + workspace_dir + " " + journal_dir, 60s);
    if (!prepared) return prepared.error();
    return std::unique_ptr<lease>(std::make_unique<daytona_lease>(o_, api_, std::move(*started), outcome));
  }

  result<void> release(lease& l, release_mode mode) override {
    auto* mine = dynamic_cast<daytona_lease*>(&l);
    if (mine == nullptr) return error(env_errc::invalid, "not a lease of environment " + o_.name);
    if (mode == release_mode::destroy) return api_->remove(mine->sandbox().id);
    auto stopped = api_->stop(mine->sandbox().id);
    if (!stopped && stopped.error() != env_errc::failed) return stopped.error();  // failed: not started already
    return {};
  }

  result<probe_report> probe(const std::vector<std::string>&) override {
    auto any = api_->list({{"tether-probe", "1"}});
    if (!any) return any.error();
    probe_report r;
    r.where = o_.api_url;
    return r;
  }

 private:
  // The sandbox started (started again when stopped or archived), within start_timeout.
  result<sandbox_info> ensure_started(sandbox_info s) {
    const auto deadline = std::chrono::steady_clock::now() + o_.start_timeout;
    for (;;) {
      if (s.state == "started") return s;
      if (s.state == "error" || s.state == "build_failed" || s.state == "destroyed" || s.state == "destroying") {
        return error(env_errc::lost, "sandbox " + s.name + " is " + s.state);
      }
      if (s.state == "stopped" || s.state == "archived") {
        auto r = api_->start(s.id);
        if (!r) return r.error();
        s = std::move(*r);
        continue;
      }
      if (std::chrono::steady_clock::now() > deadline) {
        return error(env_errc::unreachable, "sandbox " + s.name + " did not start in time (" + s.state + ")");
      }
      std::this_thread::sleep_for(1s);
      auto now = api_->get(s.id);
      if (!now) return now.error();
      if (!*now) return error(env_errc::lost, "sandbox " + s.name + " is gone");
      s = std::move(**now);
    }
  }

  daytona_options o_;
  std::shared_ptr<api> api_;
};

}  // namespace

result<std::unique_ptr<environment>> make_environment(daytona_options o) {
  if (o.api_url.rfind("http://", 0) != 0 && o.api_url.rfind("https://", 0) != 0) {
    return error(env_errc::invalid, "api_url must be an http:// or https:// URL: " + o.api_url);
  }
  if (o.api_key.empty()) return error(env_errc::invalid, "no Daytona API key (api_key_env names an empty variable)");
  if (o.relay_program.empty()) return error(env_errc::invalid, "no relay program (the tether binary)");
  return std::unique_ptr<environment>(std::make_unique<daytona_environment>(std::move(o)));
}

}  // namespace tether::env::daytona
