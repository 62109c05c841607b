// A throwaway PostgreSQL cluster for tests (scripts/pg-cluster: initdb in a
// temporary directory, a Unix socket, no TCP, as the `postgres` user when
// run as root). Under ctest one cluster serves every test process: the
// fixture test postgres.start starts it (under /tmp, named after the build
// directory) and names it in $TETHER_TEST_PG, postgres.stop stops it. A test binary run by hand
// starts its own on first use and stops it, its directory removed, when the
// process exits. Each test gets a database of its own (fresh_database()),
// dropped by its owner.
//
// Nothing is skipped: a machine without PostgreSQL fails the tests that
// need it (scripts/setup installs it).
#pragma once

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>

#include <unistd.h>

#include "store/postgres/pq.h"
#include "support/paths.h"


namespace tether::test {

class postgres_cluster {
 public:
  // The cluster the process's tests share.
  static postgres_cluster& get() {
    static postgres_cluster cluster(shared);
    return cluster;
  }
  // A cluster of the caller's own (tests that restart or kill the server),
  // stopped and removed with the object.
  enum ownership { shared, own };
  explicit postgres_cluster(ownership o);
  ~postgres_cluster();

  // postgresql://… of the cluster's maintenance database.
  [[nodiscard]] const std::string& admin_url() const { return admin_url_; }
  [[nodiscard]] const std::filesystem::path& dir() const { return dir_; }

  // A new, empty database; its URL.
  std::string fresh_database() {
    const std::string name = "t" + std::to_string(::getpid()) + "_" + std::to_string(++count_);
    sql("CREATE DATABASE " + name);
    return url_of(name);
  }
  void drop_database(const std::string& url) {
    const auto at = url.find("/", url.find('@'));
    const auto q = url.find('?');
    sql("DROP DATABASE IF EXISTS " + url.substr(at + 1, q - at - 1) + " WITH (FORCE)");
  }

  // Runs `statement` on the maintenance database (one connection, kept);
  // throws on failure.
  void sql(const std::string& statement) {
    std::lock_guard lock(mu_);
    if (!admin_ || !admin_->connected()) {
      auto c = store::postgres::connection::open(admin_url_, store::store_errc::read_failed);
      if (!c) throw std::runtime_error(c.error().message);
      admin_ = std::move(*c);
    }
    if (auto r = admin_->exec(statement); !r) throw std::runtime_error(statement + ": " + r.error().message);
  }

  // scripts/pg-cluster <verb> on this cluster (restart, kill, start).
  void control(const std::string& verb) const {
    const std::string cmd = script() + " " + verb + " " + dir_.string() + " >/dev/null";
    if (std::system(cmd.c_str()) != 0) throw std::runtime_error("pg-cluster " + verb + " failed");
  }

  postgres_cluster(const postgres_cluster&) = delete;
  postgres_cluster& operator=(const postgres_cluster&) = delete;

 private:
  // scripts/pg-cluster <verb> DIR; its one line of output.
  [[nodiscard]] std::string run_script(const std::string& verb) const {
    const std::string cmd = script() + " " + verb + " " + dir_.string();
    FILE* p = ::popen(cmd.c_str(), "r");
    if (p == nullptr) throw std::runtime_error("cannot run pg-cluster");
    char buf[512];
    std::string out;
    while (std::fgets(buf, sizeof buf, p) != nullptr) out += buf;
    if (::pclose(p) != 0 || out.empty()) throw std::runtime_error("pg-cluster " + verb + " failed");
    while (!out.empty() && out.back() == '\n') out.pop_back();
    return out;
  }

  static std::string script() { return std::string(test_paths::source_dir()) + "/scripts/pg-cluster"; }

  // The cluster's URL with another database name.
  [[nodiscard]] std::string url_of(const std::string& db) const {
    const auto at = url_.find("/", url_.find('@'));
    const auto q = url_.find('?');
    return url_.substr(0, at + 1) + db + url_.substr(q);
  }

  std::filesystem::path dir_;
  std::string url_;
  std::string admin_url_;
  pid_t owner_ = 0;
  std::atomic<int> count_{0};
  std::mutex mu_;
  std::unique_ptr<store::postgres::connection> admin_;
};

inline postgres_cluster::postgres_cluster(ownership o) {
  if (const char* env = std::getenv("TETHER_TEST_PG"); o == shared && env != nullptr && *env != '\0') {
    dir_ = env;
    // As `pg-cluster url` prints it, without starting a shell per test.
    std::ifstream port(dir_ / "port");
    std::string p;
    if (!std::getline(port, p) || p.empty()) throw std::runtime_error("no cluster in " + dir_.string());
    url_ = "postgresql://tether@/tether?host=" + dir_.string() + "&port=" + p;
    admin_url_ = url_of("postgres");
    return;  // owner_ stays 0: the fixture stops it
  }
  char tmpl[] = "/tmp/tether-pg-XXXXXX";
  if (::mkdtemp(tmpl) == nullptr) throw std::runtime_error("mkdtemp failed");
  dir_ = tmpl;
  url_ = run_script("start");
  admin_url_ = url_of("postgres");
  owner_ = ::getpid();
}

inline postgres_cluster::~postgres_cluster() {
  if (::getpid() != owner_) return;  // the fixture's cluster, or a forked child
  (void)std::system((script() + " stop " + dir_.string() + " >/dev/null 2>&1").c_str());
  std::error_code ec;
  std::filesystem::remove_all(dir_, ec);
}

}  // namespace tether::test
