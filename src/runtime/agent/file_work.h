// file_work — where an agent's file requests (ACP fs/read_text_file and
// fs/write_text_file) run: never on an I/O thread, but on a small pool of
// their own, so a request that blocks in the file system (a FIFO the
// checks missed, a hung network mount) holds one of its threads and nothing
// else — health, the API and SIGTERM go on.
//
//   - two threads, at most `max_pending` requests queued or running in the
//     whole process; one more is answered at once with resource busy;
//   - the caller waits at most `deadline`; after it the answer is timed out
//     and the thread finishes (or stays stuck) on its own. The pool is never
//     joined, so a stuck thread cannot hold up the process's exit.
//
// run() must be awaited on a strand or single-threaded executor (the
// connection's); `work` must own what it reads.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>

#include <boost/asio/awaitable.hpp>
#include <boost/json/value.hpp>

#include "util/result.h"

namespace tether::runtime::agent::file_work {

struct limits {
  std::chrono::milliseconds deadline{30'000};
  std::size_t max_pending = 64;
};

boost::asio::awaitable<result<boost::json::value>> run(std::function<result<boost::json::value>()> work,
                                                       limits l = {});

// Requests queued or running now (for tests).
std::size_t pending();

}  // namespace tether::runtime::agent::file_work
