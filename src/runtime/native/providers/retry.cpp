#include "runtime/native/providers/retry.h"

#include <algorithm>

namespace tether::runtime::native {

namespace {

failure_action bounded_retry(int retries_used, const retry_options& o) {
  return retries_used < o.max_retries ? failure_action::retry : failure_action::fail;
}

}  // namespace

failure_action decide(const failure_info& f, int retries_used, const retry_options& o, compaction_budget compaction) {
  switch (f.kind) {
    case provider_errc::cancelled:
      return failure_action::cancelled;
    case provider_errc::rate_limited:
    case provider_errc::overloaded:
    case provider_errc::server_error:
      return bounded_retry(retries_used, o);
    case provider_errc::transport:
      return f.request_sent ? failure_action::fail : bounded_retry(retries_used, o);
    case provider_errc::timeout:
    case provider_errc::incomplete_stream:
      if (f.output_seen) return failure_action::continue_after_cut;
      return bounded_retry(retries_used, o);
    case provider_errc::context_overflow:
      if (f.output_seen || compaction == compaction_budget::used) return failure_action::fail;
      return failure_action::compact;
    case provider_errc::auth:
    case provider_errc::quota:
    case provider_errc::invalid_request:
    case provider_errc::bad_response:
      return failure_action::fail;
  }
  return failure_action::fail;
}

std::chrono::milliseconds backoff(int attempt, const failure_info& f, const retry_options& o, std::mt19937_64& rng) {
  using std::chrono::milliseconds;
  if (f.retry_after) return std::max(*f.retry_after, milliseconds{0});
  const int doublings = std::clamp(attempt, 1, 32) - 1;
  const std::int64_t cap = std::max<std::int64_t>(o.max_wait.count(), 0);
  std::int64_t wait = std::max<std::int64_t>(o.base.count(), 0);
  for (int i = 0; i < doublings && wait < cap; ++i) wait *= 2;
  wait = std::min(wait, cap);
  std::uniform_int_distribution<std::int64_t> jitter(wait / 2, wait);
  return milliseconds{jitter(rng)};
}

}  // namespace tether::runtime::native
