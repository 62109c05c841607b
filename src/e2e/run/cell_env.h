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

namespace tether::e2e {

struct sent_input {
  std::string id;
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
};

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
