// What one running cell holds (cell.cpp sets it up and tears it down,
// steps.cpp drives the API and observes). Private to e2e/run.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <boost/json/value.hpp>

#include "client/client.h"
#include "e2e/matchers.h"
#include "e2e/run/cell.h"
#include "e2e/run/process.h"
#include "e2e/run/ssh_host.h"

namespace tether::e2e {

struct sent_input {
  std::string id;
  std::string session;  // where it was sent (a fork step moves the cell to another session)
  std::string text;
  std::int64_t sent_unix_ms = 0;        // just before the POST
  std::int64_t admitted_steady_us = 0;  // when the 202 came back (CLOCK_MONOTONIC, as the scripted model records)
};

struct cell_env {
  const cell_plan* plan = nullptr;
  std::function<bool()> cancelled;
  template_values values;
  std::filesystem::path dir;  // temporary: data, workspace, config
  std::filesystem::path data;
  std::filesystem::path workspace;
  std::string token;
  std::string api_key;
  std::string mock_url;  // "" when the profile uses a real model server
  std::unique_ptr<child_process> mock;
  std::unique_ptr<child_process> server;
  std::unique_ptr<client::api_client> api;
  std::string session;
  std::vector<sent_input> inputs;
  // task cells (work_steps.cpp): the cell's task, its projects by name, and
  // how many scripted-model requests there were when its plan was approved
  std::string task;
  std::map<std::string, std::string> projects;
  std::optional<std::size_t> requests_at_approval;
  // reconfigure: what the configuration says instead of the profile
  std::optional<std::string> model_override;
  std::optional<std::string> instructions;
  int server_starts = 0;
  // postgres-2node (cluster.cpp): the cluster and the cell's database in it,
  // its store URL, the node serving the API (`server`, named `serving`) and
  // the other one
  std::shared_ptr<database_server> database;
  std::string database_name;
  std::string store;
  std::string serving = "node-a";
  std::unique_ptr<child_process> standby;
  std::string standby_url;
  // ssh (leased.cpp): the host the profile's turns run on
  std::unique_ptr<ssh_host> ssh;
};

// A JSON string's text ("" when absent or not a string); a number as an
// integer (0 when absent or not a number).
std::string str(const boost::json::value* v);
std::int64_t num(const boost::json::value* v);
// `s` as a TOML basic string, quoted.
std::string toml_string(std::string_view s);

std::int64_t steady_us_now();

// cell.cpp
result<void> start_server(cell_env& env);
// Writes DIR/config.toml for the cell's profile (with the reconfigure overrides).
result<void> write_config(const cell_env& env);
// SIGTERM (graceful) or SIGKILL, then waits; false when it had to be killed after 10 s.
bool stop_server(cell_env& env, restart_mode mode);

// cluster.cpp: the postgres-2node environment (two nodes on one PostgreSQL
// database). A restart step there stops the node serving the session and
// the API continues on the other, which takes the session over; the
// stopped node is started again as the standby.
bool two_nodes(const cell_env& env);
result<void> start_database(cell_env& env);
void stop_database(cell_env& env);
// The configuration's store and lease lines ("" for one node).
std::string cluster_config(const cell_env& env);
// Starts the standby node (the serving one is start_server's).
result<void> start_standby(cell_env& env);
result<void> switch_nodes(cell_env& env, restart_mode mode);
// Stops the standby node; false when it had to be killed.
bool stop_standby(cell_env& env);
// Starts `tether serve` named `node` on its own data directory: the process
// and its address.
result<std::pair<std::unique_ptr<child_process>, std::string>> start_node(cell_env& env, const std::string& node);

// leased.cpp: the leased environments (ssh, daytona). The profile's turns
// run in a lease there: the cell starts the ssh host (agent programs and
// `tether` seen inside, read-only) or reaches Daytona with the key in the
// environment's api_key_env.
bool leased(const cell_env& env);
result<void> start_environment(cell_env& env);
void stop_environment(cell_env& env);
// The profile's `environment` line and the [environments.ID] tables (""
// for an environment that leases nothing); written after the profile's keys.
std::string environment_config(const cell_env& env);
// What the server's process needs besides the token and the model's key (Daytona's key).
std::map<std::string, std::string> environment_variables(const cell_env& env);
// The session's leases (env.lease.* and env.workspace.synced events), each
// with the run it served (the last run started before it).
// Of `session` (the cell's, or one a fork step moved it from), whose runs are `executions`.
result<std::vector<observed_lease>> observe_leases(cell_env& env, const std::string& session,
                                                   const boost::json::array& executions);

// steps.cpp
// Runs one step with every template of it expanded (expand_step).
result<void> run_step(cell_env& env, const step& s);
// work_steps.cpp: the work layer's steps (create_project, create_task,
// approve, reject, update_project; send and wait in a task cell) and what a
// task cell observes of the work layer.
result<void> run_work_step(cell_env& env, const step& s);
bool is_work_step(const cell_env& env, const step& s);
result<void> observe_work(cell_env& env, const case_def& c, observation& o);
// The scripted model's recorded requests (GET /_mock/requests), each as its body's text.
result<std::vector<std::string>> mock_requests(cell_env& env);

// `executions` as list_executions() read them.
result<observation> observe(cell_env& env, const case_def& c, const boost::json::array& executions);
// One entry per sent input: the run that took it up and its times.
std::vector<turn_timing> turn_timings(cell_env& env, const boost::json::array& executions);
result<boost::json::array> list_executions(cell_env& env);
std::vector<run_usage> usage_of(const boost::json::array& executions);
// An execution view's `agent_process` ({"pid": N, "started_ms": T}); nullopt
// when it is null or absent (native) or has no pid.
std::optional<observed_process> agent_process_of(const boost::json::object& execution);

}  // namespace tether::e2e
