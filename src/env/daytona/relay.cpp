#include "env/daytona/relay.h"

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <thread>

#include "env/daytona/api.h"

namespace tether::env::daytona {

namespace {

void write_all(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    const auto n = ::write(fd, bytes.data(), bytes.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;  // the reader went away: nothing more to do with the output
    bytes.remove_prefix(static_cast<std::size_t>(n));
  }
}

int fail(const std::string& what) {
  std::fprintf(stderr, "tether env-relay: %s\n", what.c_str());
  return 255;
}

}  // namespace

int run_relay(const relay_args& a) {
  api client({.api_url = a.api_url, .api_key = a.api_key});
  sandbox_info s;
  s.id = a.sandbox;
  s.name = a.sandbox;
  s.toolbox_url = a.toolbox_url;
  if (auto r = client.create_session(s, a.session); !r) return fail(r.error().message);
  auto id = client.run_async(s, a.session, a.command);
  if (!id) return fail(id.error().message);

  std::atomic<bool> done{false};
  std::thread input([&] {
    char buf[16384];
    for (;;) {
      const auto n = ::read(0, buf, sizeof buf);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0 || done) return;
      if (!client.input(s, a.session, *id, std::string(buf, static_cast<std::size_t>(n)))) return;
    }
  });
  input.detach();  // a read of stdin cannot be interrupted; the process ends with it

  std::size_t out_at = 0, err_at = 0;
  auto flush = [&]() -> bool {
    auto logs = client.logs(s, a.session, *id);
    if (!logs) return false;
    if (logs->first.size() > out_at) write_all(1, std::string_view(logs->first).substr(out_at));
    if (logs->second.size() > err_at) write_all(2, std::string_view(logs->second).substr(err_at));
    out_at = std::max(out_at, logs->first.size());
    err_at = std::max(err_at, logs->second.size());
    return true;
  };
  for (;;) {
    auto c = client.command(s, a.session, *id);
    if (!c) return fail(c.error().message);
    if (c->exit_code) {
      done = true;
      if (!flush()) return fail("reading the last output of the command");
      return *c->exit_code;
    }
    if (!flush()) return fail("reading the output of the command");
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

}  // namespace tether::env::daytona
