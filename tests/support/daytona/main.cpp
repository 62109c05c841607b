// daytona_fake: the Daytona-compatible test server (fake_daytona.h) as a
// program, for tests in other languages (the official SDK's, in node).
//
//   daytona_fake [--api-key KEY] [--dir DIR]
//
// Prints "listening on PORT" once it serves http://127.0.0.1:PORT/api, then
// serves until its stdin closes (its parent went away) or SIGTERM.
#include <csignal>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <string>
#include <thread>

#include <pthread.h>
#include <unistd.h>

#include "support/daytona/fake_daytona.h"

int main(int argc, char** argv) {
  tether::test::daytona::fake_options o;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--api-key") == 0) {
      o.api_key = argv[i + 1];
    } else if (std::strcmp(argv[i], "--dir") == 0) {
      o.dir = argv[i + 1];
    } else {
      std::fprintf(stderr, "usage: daytona_fake [--api-key KEY] [--dir DIR]\n");
      return 2;
    }
  }
  sigset_t stop;
  sigemptyset(&stop);
  sigaddset(&stop, SIGTERM);
  sigaddset(&stop, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop, nullptr);  // the server's threads inherit the mask
  tether::test::daytona::fake_daytona fake(o);
  if (auto r = fake.start(); !r) {
    std::fprintf(stderr, "daytona_fake: %s\n", r.error().describe().c_str());
    return 1;
  }
  std::printf("listening on %u\n", fake.port());
  std::fflush(stdout);
  // stdin's end or a signal, whichever comes first.
  std::thread([] {
    char buf[256];
    while (std::fread(buf, 1, sizeof buf, stdin) > 0) {
    }
    ::kill(::getpid(), SIGTERM);
  }).detach();
  int sig = 0;
  sigwait(&stop, &sig);
  fake.stop();
  return 0;
}
