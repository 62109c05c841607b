// e2e::database_server — the PostgreSQL cluster a campaign's postgres-2node
// cells share: one cluster (scripts/pg-cluster), a database per cell.
//
//   auto db = std::make_shared<database_server>(script);  // nothing started yet
//   result<std::string> url = db->create("cell_7", log);  // starts it once, then CREATE DATABASE
//   db->drop("cell_7", log);
//   // the destructor stops the cluster and removes its directory
//
// The cluster starts with the first database asked for (initdb, a Unix
// socket under /tmp, no TCP), so a campaign without postgres-2node cells
// starts none. A failed start is remembered: every later create returns the
// same error instead of trying again. Thread-safe (the campaign's workers
// share it).
#pragma once

#include <filesystem>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "util/result.h"

namespace tether::e2e {

class database_server {
 public:
  // `script`: the pg-cluster script.
  explicit database_server(std::filesystem::path script);
  ~database_server();
  database_server(const database_server&) = delete;
  database_server& operator=(const database_server&) = delete;

  // A new, empty database `name` ([a-z0-9_]); its store URL. The pg-cluster
  // script's output goes to `log`.
  result<std::string> create(const std::string& name, const std::filesystem::path& log);
  // Drops the database (its nodes have stopped).
  void drop(const std::string& name, const std::filesystem::path& log);

 private:
  result<std::string> run(const std::vector<std::string>& args, const std::filesystem::path& log);

  std::mutex mu_;
  std::filesystem::path script_;
  std::filesystem::path dir_;  // "" until started
  std::optional<error> failed_;
};

}  // namespace tether::e2e
