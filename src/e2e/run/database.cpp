#include "e2e/run/database.h"

#include <stdlib.h>

#include "e2e/errors.h"
#include "e2e/run/process.h"

namespace tether::e2e {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

database_server::database_server(fs::path script) : script_(std::move(script)) {}

database_server::~database_server() {
  if (dir_.empty()) return;
  (void)run({"destroy", dir_.string()}, dir_.parent_path() / (dir_.filename().string() + ".log"));
  std::error_code ec;
  fs::remove_all(dir_, ec);
  fs::remove(dir_.parent_path() / (dir_.filename().string() + ".log"), ec);
}

result<std::string> database_server::run(const std::vector<std::string>& args, const fs::path& log) {
  std::error_code ec;
  if (!fs::exists(script_, ec))
    return make_error(e2e_errc::infrastructure, "the postgres-2node environment needs " + script_.string() +
                                                    " (set $TETHER_PG_CLUSTER to the pg-cluster script)");
  std::vector<std::string> argv{script_.string()};
  argv.insert(argv.end(), args.begin(), args.end());
  auto p = child_process::start(argv, log);
  if (!p) return p.error();
  std::string out = (*p)->rest_of_stdout(60s);
  const auto status = (*p)->wait(10s);
  if (!status || *status != 0)
    return make_error(e2e_errc::infrastructure, "pg-cluster " + args.front() + " failed (see " + log.string() + ")");
  while (!out.empty() && (out.back() == '\n' || out.back() == '\r')) out.pop_back();
  return out;
}

result<std::string> database_server::create(const std::string& name, const fs::path& log) {
  std::lock_guard lock(mu_);
  if (failed_) return *failed_;
  if (dir_.empty()) {
    // The server runs as the postgres user (when the harness runs as root),
    // which must reach its directory: not under a cell's scratch root, whose
    // parents may be closed to others ($TMPDIR of a private directory), but
    // in a directory of its own under /tmp.
    std::string tmpl = "/tmp/tether-pg-XXXXXX";
    if (::mkdtemp(tmpl.data()) == nullptr) {
      failed_ = make_error(e2e_errc::infrastructure, "cannot create a directory for the database under /tmp");
      return *failed_;
    }
    if (auto started = run({"start", tmpl}, log); !started) {
      failed_ = started.error();
      std::error_code ec;
      fs::remove_all(tmpl, ec);
      return *failed_;
    }
    dir_ = tmpl;
  }
  return run({"createdb", dir_.string(), name}, log);
}

void database_server::drop(const std::string& name, const fs::path& log) {
  std::lock_guard lock(mu_);
  if (!dir_.empty()) (void)run({"dropdb", dir_.string(), name}, log);
}

}  // namespace tether::e2e
