// A Daytona-compatible server for the tests (Daytona itself cannot be
// reached from here): the REST API's sandbox routes under /api and the
// toolbox's under /toolbox/{sandboxId}, as Daytona publishes them
// (tests/env/daytona/spec-routes.json, checked route by route by a test),
// over the project's HTTP server shell on 127.0.0.1.
//
//   test::daytona::fake_daytona fake({.api_key = "k"});
//   ASSERT_TRUE(fake.start());
//   client_options.api_url = fake.api_url();       // http://127.0.0.1:PORT/api
//   fake.set_faults({.fail_next = 2});             // the next two API calls answer 503
//
// Sandboxes (sandbox.h) are directories under `dir`, each the root of its
// own filesystem; their commands run under bubblewrap. States: started
// (create, start), stopped (stop: its processes killed, its files kept),
// archived (archive of a stopped one), destroyed (delete: a later GET is
// 404). Session commands keep their logs and exit codes (GET …/command/ID
// reads them back, also after the client that started them went away); a
// followed log is a WebSocket (binary frames with the stream markers, then
// a Close with 1000).
//
// Faults: fail_next answers the next N API and toolbox requests with
// fail_status (not the fake's own /_fake routes); latency delays every
// request; create_silently makes the next POST /sandbox create the sandbox
// and close the connection unanswered; drop_logs_after cuts a followed log
// after that many bytes without a Close.
//
// Also served, for the SDK test (a process): POST /_fake/faults with the
// same fields as JSON, GET /_fake/requests (the routes seen).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <limits>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "util/result.h"

namespace tether::test::daytona {

struct fake_options {
  std::string api_key = "fake-daytona-key";
  std::filesystem::path dir;  // where sandboxes live; empty: a temporary directory, removed at the end
  std::string listen = "127.0.0.1:0";
  // More of this machine seen inside every sandbox, read-only: (path here,
  // path inside), e.g. the agent programs and `tether` for turns run there.
  std::vector<std::pair<std::filesystem::path, std::string>> read_only;
};

struct faults {
  int fail_next = 0;
  unsigned fail_status = 503;
  std::chrono::milliseconds latency{0};
  bool create_silently = false;
  std::size_t drop_logs_after = std::numeric_limits<std::size_t>::max();
};

class fake_daytona {
 public:
  explicit fake_daytona(fake_options o = {});
  ~fake_daytona();
  fake_daytona(const fake_daytona&) = delete;
  fake_daytona& operator=(const fake_daytona&) = delete;

  result<void> start();
  void stop();
  [[nodiscard]] std::uint16_t port() const;
  [[nodiscard]] std::string api_url() const;  // http://127.0.0.1:PORT/api

  void set_faults(faults f);
  // "METHOD /route/{param}" of every API and toolbox request, in order, as
  // the specification writes the route (the toolbox's without its prefix).
  [[nodiscard]] std::vector<std::string> requests() const;
  // A sandbox's root on this machine, and its state ("" when there is none).
  [[nodiscard]] std::filesystem::path sandbox_root(const std::string& id_or_name) const;
  [[nodiscard]] std::string state_of(const std::string& id_or_name) const;
  // How many sandboxes exist (destroyed ones not counted).
  [[nodiscard]] std::size_t sandboxes() const;

  struct impl;

 private:
  std::shared_ptr<impl> impl_;
};

}  // namespace tether::test::daytona
