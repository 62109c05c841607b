// The retry policy of a model step (docs/architecture.md §5), as pure functions so the agent
// loop and its tests share one truth.
//
//   retried:      rate_limited, overloaded, server_error, transport and
//                 timeout before the request was sent, incomplete_stream (and
//                 timeout) before any output was seen — at most max_retries
//                 times, waiting backoff(attempt) or the server's retry-after
//   compaction:   context_overflow before any output, once per turn
//   continuation: incomplete_stream / timeout after output: the step fails and
//                 the loop continues with a new step after a synthetic
//                 "continue where you left off" note
//   final:        everything else (auth, quota, invalid_request, bad_response,
//                 a second overflow, overflow after output, transport after
//                 the request was sent, a retryable kind once max_retries
//                 retries were used)
//
// A retryable kind is retried whether or not output was streamed before it
// (an in-stream overloaded error, say): the retried step replaces the
// ephemeral deltas of the failed one. Only incomplete_stream and timeout
// distinguish "before output" (retry) from "after output" (continuation).
#pragma once

#include <chrono>
#include <cstdint>
#include <random>

#include "runtime/native/providers/provider.h"

namespace tether::runtime::native {

struct retry_options {
  int max_retries = 4;
  std::chrono::milliseconds base{500};  // first wait; doubles per attempt
  std::chrono::milliseconds max_wait{30'000};
};

enum class failure_action { retry, compact, continue_after_cut, fail, cancelled };

// Whether this turn already spent its one compaction on a context overflow.
enum class compaction_budget { available, used };

// What to do about `f` given how many retries this step already used.
failure_action decide(const failure_info& f, int retries_used, const retry_options& o,
                      compaction_budget compaction = compaction_budget::available);

// The wait before retry number `attempt` (1-based): retry-after when the
// server sent one (as sent, even above max_wait), else base * 2^(attempt-1)
// capped at max_wait, with jitter: uniform in [wait/2, wait].
std::chrono::milliseconds backoff(int attempt, const failure_info& f, const retry_options& o, std::mt19937_64& rng);

}  // namespace tether::runtime::native
