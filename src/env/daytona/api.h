// The Daytona REST API as Tether calls it: sandboxes under the API URL
// (create, get, list by labels, start, stop, archive, delete) and each
// sandbox's toolbox at its toolboxProxyUrl (commands, sessions, files).
// The routes and shapes are Daytona's published ones (tests/env/daytona/
// README.md and spec-routes.json, checked against every request a test
// makes).
//
//   env::daytona::api a({.api_url = "https://app.daytona.io/api", .api_key = key});
//   auto s = a.create({.name = "tether-session-…", .labels = {{"tether-key", "…"}}});
//   auto r = a.execute(*s, "git status", std::chrono::seconds(60));   // exec_result
//
// Blocking: each call runs one exchange on an io_context of its own (call
// from a worker thread, never on the network threads). Keep-alive
// connections are shared by the calls of one api.
//
// Every request carries `Authorization: Bearer <key>` and
// X-Daytona-SDK-Version (0.218.0: the toolbox then answers JSON with stdout
// and stderr apart). The key is never in an error message.
//
// Errors (env_errc): unreachable (no connection, a timeout, a 5xx: the
// service's trouble, worth a retry), refused (401/403: the key), not_found
// (404), failed (another 4xx: its message), lost (a toolbox call to a
// sandbox that is no longer started: 409).
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "env/errors.h"
#include "util/result.h"

namespace tether::env::daytona {

struct api_options {
  std::string api_url;  // e.g. https://app.daytona.io/api
  std::string api_key;
  std::string ca_file;  // PEM certificates trusted besides the system's
  std::chrono::milliseconds timeout{60'000};
};

struct sandbox_info {
  std::string id;
  std::string name;
  std::string state;        // started, stopped, archived, starting, …
  std::string toolbox_url;  // toolboxProxyUrl
  std::map<std::string, std::string> labels;
  std::int64_t cpu = 0, memory = 0, disk = 0;  // vCPUs, GiB, GiB
  std::int64_t auto_stop = 0, auto_archive = 0, auto_delete = 0;  // minutes
};

struct create_request {
  std::string name;
  std::map<std::string, std::string> labels;
  std::string target;    // a region; "" for the account's default
  std::string snapshot;  // "" for the default
  std::string image;     // instead of a snapshot: sent as buildInfo (FROM image)
  std::int64_t cpu = 0, memory = 0, disk = 0;  // 0: the default
  // Quota-safe lifecycle (minutes): stopped after 15 idle, archived an hour
  // after stopping, deleted after 7 days.
  std::int64_t auto_stop = 15, auto_archive = 60, auto_delete = 7 * 24 * 60;
};

struct exec_result {
  int exit_code = -1;
  std::string output;  // stdout and stderr together
};

struct session_command {
  std::string id;
  std::string command;
  std::optional<int> exit_code;  // absent while it runs
};

struct file_info {
  bool directory = false;
  std::uint64_t size = 0;
  std::string permissions;  // "0644"
};

class api {
 public:
  explicit api(api_options o);
  ~api();
  api(const api&) = delete;
  api& operator=(const api&) = delete;

  result<sandbox_info> create(const create_request& r);
  // nullopt when there is none of that id or name.
  result<std::optional<sandbox_info>> get(const std::string& id_or_name);
  result<std::vector<sandbox_info>> list(const std::map<std::string, std::string>& labels);
  result<sandbox_info> start(const std::string& id);
  result<sandbox_info> stop(const std::string& id);
  result<sandbox_info> archive(const std::string& id);
  result<void> remove(const std::string& id);

  result<exec_result> execute(const sandbox_info& s, const std::string& command, std::chrono::seconds timeout,
                              const std::string& cwd = {});
  result<void> create_session(const sandbox_info& s, const std::string& session);
  // Starts `command` in the session without waiting: its id.
  result<std::string> run_async(const sandbox_info& s, const std::string& session, const std::string& command);
  result<session_command> command(const sandbox_info& s, const std::string& session, const std::string& id);
  // Every command the session ran, in order; not_found when there is no such session.
  result<std::vector<session_command>> session_commands(const sandbox_info& s, const std::string& session);
  // What a command has written so far: stdout and stderr apart.
  result<std::pair<std::string, std::string>> logs(const sandbox_info& s, const std::string& session,
                                                   const std::string& id);
  result<void> input(const sandbox_info& s, const std::string& session, const std::string& id,
                     const std::string& data);
  result<void> upload(const sandbox_info& s, const std::string& path, const std::string& bytes);
  result<std::string> download(const sandbox_info& s, const std::string& path);
  // nullopt when there is no such file.
  result<std::optional<file_info>> info(const sandbox_info& s, const std::string& path);

 private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

}  // namespace tether::env::daytona
