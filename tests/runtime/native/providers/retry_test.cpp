#include "runtime/native/providers/retry.h"

#include <gtest/gtest.h>

namespace tether::runtime::native {
namespace {

failure_info failure(provider_errc kind, bool sent = true, bool output = false) {
  failure_info f;
  f.kind = kind;
  f.request_sent = sent;
  f.output_seen = output;
  return f;
}

TEST(retry_decide, transient_server_answers_are_retried_at_most_max_retries_times) {
  const retry_options o;
  for (auto kind : {provider_errc::rate_limited, provider_errc::overloaded, provider_errc::server_error}) {
    for (int used = 0; used < 4; ++used) EXPECT_EQ(decide(failure(kind), used, o), failure_action::retry);
    EXPECT_EQ(decide(failure(kind), 4, o), failure_action::fail);
  }
}

TEST(retry_decide, transport_failures_are_retried_only_before_the_request_was_sent) {
  const retry_options o;
  EXPECT_EQ(decide(failure(provider_errc::transport, false), 0, o), failure_action::retry);
  EXPECT_EQ(decide(failure(provider_errc::transport, false), 4, o), failure_action::fail);
  EXPECT_EQ(decide(failure(provider_errc::transport, true), 0, o), failure_action::fail);
}

TEST(retry_decide, a_cut_stream_is_retried_before_output_and_continued_after) {
  const retry_options o;
  for (auto kind : {provider_errc::incomplete_stream, provider_errc::timeout}) {
    EXPECT_EQ(decide(failure(kind, true, false), 0, o), failure_action::retry);
    EXPECT_EQ(decide(failure(kind, true, false), 4, o), failure_action::fail);
    EXPECT_EQ(decide(failure(kind, true, true), 0, o), failure_action::continue_after_cut);
    EXPECT_EQ(decide(failure(kind, true, true), 9, o), failure_action::continue_after_cut);
  }
  EXPECT_EQ(decide(failure(provider_errc::timeout, false, false), 1, o), failure_action::retry);
}

TEST(retry_decide, context_overflow_compacts_once_and_only_before_output) {
  const retry_options o;
  EXPECT_EQ(decide(failure(provider_errc::context_overflow), 0, o), failure_action::compact);
  EXPECT_EQ(decide(failure(provider_errc::context_overflow), 0, o, compaction_budget::used), failure_action::fail);
  EXPECT_EQ(decide(failure(provider_errc::context_overflow, true, true), 0, o), failure_action::fail);
}

TEST(retry_decide, final_kinds_are_not_retried) {
  const retry_options o;
  for (auto kind :
       {provider_errc::auth, provider_errc::quota, provider_errc::invalid_request, provider_errc::bad_response})
    EXPECT_EQ(decide(failure(kind), 0, o), failure_action::fail);
  EXPECT_EQ(decide(failure(provider_errc::cancelled), 0, o), failure_action::cancelled);
}

TEST(retry_backoff, waits_double_per_attempt_with_jitter_in_the_upper_half) {
  retry_options o;
  o.base = std::chrono::milliseconds(500);
  o.max_wait = std::chrono::milliseconds(30'000);
  std::mt19937_64 rng(7);
  const failure_info f = failure(provider_errc::server_error);
  for (int attempt = 1; attempt <= 8; ++attempt) {
    const std::int64_t full = std::min<std::int64_t>(500LL << (attempt - 1), 30'000);
    for (int i = 0; i < 200; ++i) {
      const auto w = backoff(attempt, f, o, rng).count();
      EXPECT_GE(w, full / 2) << attempt;
      EXPECT_LE(w, full) << attempt;
    }
  }
}

TEST(retry_backoff, the_servers_retry_after_is_honoured_as_sent) {
  const retry_options o;
  std::mt19937_64 rng(1);
  failure_info f = failure(provider_errc::rate_limited);
  f.retry_after = std::chrono::milliseconds(1750);
  EXPECT_EQ(backoff(1, f, o, rng), std::chrono::milliseconds(1750));
  f.retry_after = std::chrono::milliseconds(45'000);
  EXPECT_EQ(backoff(3, f, o, rng), std::chrono::milliseconds(45'000));
}

TEST(retry_backoff, huge_attempt_numbers_stay_capped) {
  const retry_options o;
  std::mt19937_64 rng(3);
  const auto w = backoff(1000, failure(provider_errc::overloaded), o, rng);
  EXPECT_LE(w, o.max_wait);
  EXPECT_GE(w, o.max_wait / 2);
  EXPECT_LE(backoff(0, failure(provider_errc::overloaded), o, rng), o.base);
}

}  // namespace
}  // namespace tether::runtime::native
