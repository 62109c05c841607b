#include "util/metrics.h"

#include <cstdint>
#include <limits>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

namespace tether::metrics {
namespace {

TEST(Metrics, RenderFollowsTheTextFormatInRegistrationOrder) {
  registry r;
  auto& requests = r.add_counter_family("app_requests_total", "Requests answered, by code.", "code");
  auto& up = r.add_counter("app_restarts_total", "Restarts.");
  auto& open = r.add_gauge("app_open_streams", "Open streams.");
  auto& latency = r.add_histogram("app_latency_seconds", "Latency in seconds.", {0.005, 0.1, 1, 2.5});
  auto& by_queue = r.add_histogram_family("app_wait_seconds", "Wait, by queue.", "queue", {0.5});
  auto& idle = r.add_gauge_family("app_idle", "Idle workers, by pool.", "pool");

  requests.with("404").inc();
  requests.with("200").inc(3);
  up.inc();
  open.set(5);
  open.sub(2);
  latency.observe(0.004);
  latency.observe(0.1);
  latency.observe(0.7);
  latency.observe(30);
  by_queue.with("b").observe(0.25);
  by_queue.with("a").observe(0.75);
  (void)idle;  // a family with no child yet renders only its HELP and TYPE

  EXPECT_EQ(r.render(),
            "# HELP app_requests_total Requests answered, by code.\n"
            "# TYPE app_requests_total counter\n"
            "app_requests_total{code=\"200\"} 3\n"
            "app_requests_total{code=\"404\"} 1\n"
            "# HELP app_restarts_total Restarts.\n"
            "# TYPE app_restarts_total counter\n"
            "app_restarts_total 1\n"
            "# HELP app_open_streams Open streams.\n"
            "# TYPE app_open_streams gauge\n"
            "app_open_streams 3\n"
            "# HELP app_latency_seconds Latency in seconds.\n"
            "# TYPE app_latency_seconds histogram\n"
            "app_latency_seconds_bucket{le=\"0.005\"} 1\n"
            "app_latency_seconds_bucket{le=\"0.1\"} 2\n"
            "app_latency_seconds_bucket{le=\"1\"} 3\n"
            "app_latency_seconds_bucket{le=\"2.5\"} 3\n"
            "app_latency_seconds_bucket{le=\"+Inf\"} 4\n"
            "app_latency_seconds_sum 30.804\n"
            "app_latency_seconds_count 4\n"
            "# HELP app_wait_seconds Wait, by queue.\n"
            "# TYPE app_wait_seconds histogram\n"
            "app_wait_seconds_bucket{queue=\"a\",le=\"0.5\"} 0\n"
            "app_wait_seconds_bucket{queue=\"a\",le=\"+Inf\"} 1\n"
            "app_wait_seconds_sum{queue=\"a\"} 0.75\n"
            "app_wait_seconds_count{queue=\"a\"} 1\n"
            "app_wait_seconds_bucket{queue=\"b\",le=\"0.5\"} 1\n"
            "app_wait_seconds_bucket{queue=\"b\",le=\"+Inf\"} 1\n"
            "app_wait_seconds_sum{queue=\"b\"} 0.25\n"
            "app_wait_seconds_count{queue=\"b\"} 1\n"
            "# HELP app_idle Idle workers, by pool.\n"
            "# TYPE app_idle gauge\n");
}

TEST(Metrics, AnUnusedHistogramRendersZeroes) {
  registry r;
  r.add_histogram("h_seconds", "H.", {1});
  EXPECT_EQ(r.render(),
            "# HELP h_seconds H.\n"
            "# TYPE h_seconds histogram\n"
            "h_seconds_bucket{le=\"1\"} 0\n"
            "h_seconds_bucket{le=\"+Inf\"} 0\n"
            "h_seconds_sum 0\n"
            "h_seconds_count 0\n");
}

TEST(Metrics, BucketsAreCumulativeAndAValueOnABoundCountsInThatBucket) {
  histogram h({0.01, 0.1, 1});
  for (double v : {-1.0, 0.0, 0.01, 0.011, 0.1, 0.5, 1.0, 1.5, 100.0}) h.observe(v);
  EXPECT_EQ(h.cumulative_counts(), (std::vector<std::uint64_t>{3, 5, 7, 9}));
  EXPECT_EQ(h.count(), 9U);
  EXPECT_DOUBLE_EQ(h.sum(), -1.0 + 0.0 + 0.01 + 0.011 + 0.1 + 0.5 + 1.0 + 1.5 + 100.0);
  const auto counts = h.cumulative_counts();
  for (std::size_t i = 1; i < counts.size(); ++i) EXPECT_LE(counts[i - 1], counts[i]);
}

TEST(Metrics, NanIsNotObserved) {
  histogram h({1});
  h.observe(std::numeric_limits<double>::quiet_NaN());
  EXPECT_EQ(h.count(), 0U);
  EXPECT_EQ(h.sum(), 0.0);
}

TEST(Metrics, LabelValuesAreEscapedAndHelpTooButWithoutQuotes) {
  registry r;
  auto& f = r.add_counter_family("c_total", "A \"help\" with \\ and\nnewline.", "path");
  f.with("a\\b\"c\nd").inc();
  EXPECT_EQ(r.render(),
            "# HELP c_total A \"help\" with \\\\ and\\nnewline.\n"
            "# TYPE c_total counter\n"
            "c_total{path=\"a\\\\b\\\"c\\nd\"} 1\n");
}

TEST(Metrics, WithReturnsTheSameChildForTheSameValue) {
  registry r;
  auto& f = r.add_counter_family("c_total", "C.", "outcome");
  counter& a = f.with("succeeded");
  f.with("failed");
  f.with("interrupted");
  EXPECT_EQ(&a, &f.with("succeeded"));
  a.inc(2);
  EXPECT_EQ(f.with("succeeded").value(), 2U);
  EXPECT_EQ(f.with("failed").value(), 0U);
}

TEST(Metrics, GaugeGoesUpAndDown) {
  gauge g;
  g.add();
  g.add(4);
  g.sub(7);
  EXPECT_EQ(g.value(), -2);
  g.set(11);
  EXPECT_EQ(g.value(), 11);
}

TEST(Metrics, ConcurrentObservationsAllCount) {
  registry r;
  auto& h = r.add_histogram("c_seconds", "C.", {0.25, 0.5});
  auto& c = r.add_counter_family("c_total", "C.", "thread");
  constexpr int threads = 4;
  constexpr int per_thread = 50'000;
  std::vector<std::thread> pool;
  pool.reserve(threads);
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      // Quarter-steps are exact in binary, so the sum is exact whatever the order.
      for (int i = 0; i < per_thread; ++i) {
        h.observe(0.25 * (i % 4));
        c.with(t % 2 == 0 ? "even" : "odd").inc();
      }
    });
  }
  for (auto& t : pool) t.join();
  constexpr std::uint64_t total = std::uint64_t{threads} * per_thread;
  EXPECT_EQ(h.count(), total);
  EXPECT_EQ(h.cumulative_counts(), (std::vector<std::uint64_t>{total / 2, total * 3 / 4, total}));
  EXPECT_EQ(h.sum(), 1.5 / 4 * static_cast<double>(total));
  EXPECT_EQ(c.with("even").value() + c.with("odd").value(), total);
}

TEST(MetricsDeathTest, ABadRegistrationIsABug) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(
      {
        registry r;
        r.add_counter("twice_total", "A.");
        r.add_gauge("twice_total", "B.");
      },
      "registered twice");
  EXPECT_DEATH((registry{}.add_counter("0bad", "A.")), "invalid metric name");
  EXPECT_DEATH((registry{}.add_counter_family("c_total", "A.", "__reserved")), "invalid label name");
  EXPECT_DEATH((registry{}.add_histogram_family("h_seconds", "A.", "le", {1})), "label 'le'");
  EXPECT_DEATH((registry{}.add_histogram("h_seconds", "A.", {1, 1})), "strictly increasing");
}

TEST(Metrics, TetherMetricsAreRegisteredInTheGlobalRegistry) {
  executions_total().with("succeeded").inc();
  http_requests_total().with("200").inc();
  const std::string text = global().render();
  for (const char* type_line :
       {"# TYPE tether_executions_total counter\n", "# TYPE tether_admission_seconds histogram\n",
        "# TYPE tether_step_seconds histogram\n", "# TYPE tether_active_sessions gauge\n",
        "# TYPE tether_sse_subscribers gauge\n", "# TYPE tether_store_commit_seconds histogram\n",
        "# TYPE tether_store_degraded gauge\n", "# TYPE tether_store_write_failures_total counter\n",
        "# TYPE tether_http_requests_total counter\n"}) {
    EXPECT_NE(text.find(type_line), std::string::npos) << type_line;
  }
  EXPECT_LT(text.find("tether_executions_total"), text.find("tether_http_requests_total"));
  EXPECT_NE(text.find("tether_executions_total{outcome=\"succeeded\"} "), std::string::npos);
  EXPECT_NE(text.find("tether_http_requests_total{code=\"200\"} "), std::string::npos);
  EXPECT_NE(text.find("tether_step_seconds_bucket{le=\"+Inf\"} "), std::string::npos);
  EXPECT_EQ(&admission_seconds(), &admission_seconds());
}

}  // namespace
}  // namespace tether::metrics
