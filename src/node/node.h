// node: one Tether process's parts, put together from the configuration —
// the store in the data directory, one runtime per profile built by the
// kind its `runtime` names (runtime/registry.h: native and the agent
// programs' kinds), the built-in scripted model when a profile names no base_url, and
// the session service on an io_context of its own threads.
// `tether serve` and `tether run` are both built on it.
//
//   node_options o{.config = "", .data_dir = "tether-data", .name = "serve"};
//   auto n = node::open(o);             // config, data dir, store, runtimes
//   if (!n) fail(n.error());
//   (*n)->run(service().start());       // recovery (docs/architecture.md §4)
//   ... (*n)->service() ...
//   (*n)->close();                      // service stop (then its runtimes'), store stop, scripted model stop
//
// Profiles: a session names its profile (empty means `default`); a turn of a
// session whose profile is not configured fails with a message naming the
// known ones. has_profile() lets the API refuse such a session up front.
//
// Tools: each profile's bash tool gets its sandbox (config `sandbox`,
// `network`, `env`), the data directory to hide, every profile's api_key_env
// to withhold, and DATA/run/procs for its process records. Bubblewrap is
// probed once, on the first profile that wants it; when it cannot run, those
// profiles run bash without a sandbox and a WARNING says so (as it does for
// `sandbox = "off"`). open() kills the process groups a previous run of the
// data directory left behind (process/records.h) once
// the store is open: call it only while this process owns the data directory.
//
// Errors of open(): util_errc::invalid_argument for a bad configuration or
// profile (the message says which), store errors for the database,
// util_errc::invalid_argument when an api_key_env variable is unset, and
// node_errc (node/errors.h) for the data directory: data_dir_locked when
// another live process holds it (see node/data_dir.h), data_dir_unusable
// when it cannot be created or locked. The directory is claimed before the
// store is opened or the scripted model started, and held until the node
// is destroyed.
#pragma once

#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/use_future.hpp>

#include "config/config.h"
#include "session/service.h"
#include "store/event_store.h"
#include "util/result.h"

namespace tether::work {
class work_service;
}

namespace tether::node {

struct node_options {
  std::string config;         // TOML file; empty: $TETHER_CONFIG, else built-in defaults
  std::string data_dir;       // empty: the config's data_dir, else config::default_data_dir()
  std::string store;          // empty: the config's store, else SQLite in the data directory
  std::string name = "node";  // node name for leases (unique among live processes)
  int threads = 2;            // io_context threads
  // Set: only this profile is loaded (an unknown name is an error).
  std::string only_profile;
  // Applied to every profile after loading (tether run's flags); may be empty.
  std::function<result<void>(config::profile&)> adjust;
  // Called with one line per notable choice (the scripted model's address).
  std::function<void(const std::string&)> note;
};

class node {
 public:
  static result<std::unique_ptr<node>> open(node_options o);
  ~node();
  node(const node&) = delete;
  node& operator=(const node&) = delete;

  [[nodiscard]] session::session_service& service();
  // Tasks, projects and plans (work/service.h), over service().
  [[nodiscard]] work::work_service& work();
  // Where a session's workspace may be (configuration `workspace_roots`; by
  // default DATA/workspaces and the directory the process started in), and
  // where an agent's project may name local repositories.
  [[nodiscard]] std::vector<std::filesystem::path> workspace_roots() const;
  [[nodiscard]] store::event_store& store();
  [[nodiscard]] const config::settings& settings() const;
  [[nodiscard]] const std::filesystem::path& data_dir() const;
  [[nodiscard]] bool has_profile(std::string_view name) const;  // "" is `default`
  // Why a session may not name the profile ("" when it may): not
  // configured, or disabled here (its api_key_env is not set).
  [[nodiscard]] std::string profile_problem(std::string_view name) const;
  // Which model answers the profile (config::model_label()), or "".
  [[nodiscard]] std::string model_label(std::string_view profile) const;
  [[nodiscard]] boost::asio::any_io_executor executor();
  // The built-in scripted model's base URL ("http://127.0.0.1:P"), or "".
  [[nodiscard]] std::string scripted_url() const;

  // Runs a coroutine on the node's threads and waits for it (from main).
  template <class T>
  T run(boost::asio::awaitable<T> a);
  void run(boost::asio::awaitable<void> a);

  // Stops the service (executions stop without terminal events; this node's
  // leases expire so the next start recovers them), then the store and the
  // scripted model, then joins the threads. Idempotent.
  void close();

  struct impl;

 private:
  explicit node(std::unique_ptr<impl> i);
  std::unique_ptr<impl> impl_;
};

template <class T>
T node::run(boost::asio::awaitable<T> a) {
  return boost::asio::co_spawn(executor(), std::move(a), boost::asio::use_future).get();
}
inline void node::run(boost::asio::awaitable<void> a) {
  boost::asio::co_spawn(executor(), std::move(a), boost::asio::use_future).get();
}

}  // namespace tether::node
