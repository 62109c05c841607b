// Process-wide metrics for Prometheus (GET /metrics).
//
//   metrics::executions_total().with("succeeded").inc();
//   metrics::admission_seconds().observe(elapsed_seconds);
//   metrics::active_sessions().add(1);  ...  metrics::active_sessions().sub(1);
//   reply.body = metrics::global().render();
//
// Three kinds of metric, all updated with relaxed atomics (no lock, no
// allocation), safe from any thread:
//   counter    a uint64 that only goes up (inc)
//   gauge      an int64 that goes up and down (set, add, sub)
//   histogram  counts of observations per bucket (fixed upper bounds, in
//              seconds), their sum and their count
// A family is a metric with one label (`name{label="value"}`); with(value)
// returns the child for that value, creating it on first use (a short lock).
// Label values must come from a small fixed set known to the code (an
// outcome, a status code), never from user input: every value lives for the
// rest of the process.
//
// Ownership: a registry owns its metrics. Every reference it hands out (a
// metric, a family, a family's child) stays valid as long as the registry;
// global() is never destroyed, so its handles are valid for the whole
// process, including in other static destructors. Call sites may keep them
// (e.g. in a static) instead of looking them up again.
//
// Registration is for code, not for data: an invalid name or label name, a
// duplicate name, or histogram bounds that are not finite and strictly
// increasing is a bug and fails a TETHER_CHECK.
//
// render() produces the text exposition format 0.0.4: families in
// registration order, each with `# HELP` and `# TYPE`; a family's children
// sorted by label value; histograms as cumulative `_bucket{le="…"}` lines
// ending with `le="+Inf"`, then `_sum` and `_count`. Label values are escaped
// (\\, \", \n). A scrape that runs during updates sees each value atomically,
// but not all values at one instant; `_count` always equals the `+Inf` bucket.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace tether::metrics {

class counter {
 public:
  counter() = default;
  counter(const counter&) = delete;
  counter& operator=(const counter&) = delete;

  void inc(std::uint64_t n = 1) noexcept { value_.fetch_add(n, std::memory_order_relaxed); }
  [[nodiscard]] std::uint64_t value() const noexcept { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<std::uint64_t> value_{0};
};

class gauge {
 public:
  gauge() = default;
  gauge(const gauge&) = delete;
  gauge& operator=(const gauge&) = delete;

  void set(std::int64_t v) noexcept { value_.store(v, std::memory_order_relaxed); }
  void add(std::int64_t n = 1) noexcept { value_.fetch_add(n, std::memory_order_relaxed); }
  void sub(std::int64_t n = 1) noexcept { value_.fetch_sub(n, std::memory_order_relaxed); }
  [[nodiscard]] std::int64_t value() const noexcept { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<std::int64_t> value_{0};
};

class histogram {
 public:
  // `bounds`: the buckets' upper bounds in seconds, finite and strictly
  // increasing (TETHER_CHECK); the +Inf bucket is implicit.
  explicit histogram(std::vector<double> bounds);
  histogram(const histogram&) = delete;
  histogram& operator=(const histogram&) = delete;

  // Counts `seconds` in the first bucket whose bound is >= it (negative values
  // land in the first bucket). Lock-free. NaN is ignored.
  void observe(double seconds) noexcept;

  [[nodiscard]] const std::vector<double>& bounds() const noexcept { return bounds_; }
  // Cumulative counts, one per bound and a last one for +Inf (== count()).
  [[nodiscard]] std::vector<std::uint64_t> cumulative_counts() const;
  [[nodiscard]] double sum() const noexcept { return sum_.load(std::memory_order_relaxed); }
  [[nodiscard]] std::uint64_t count() const noexcept;

 private:
  std::vector<double> bounds_;
  // Per-bucket (not cumulative) counts; the last one is the +Inf bucket. The
  // count is their total, so a scrape never shows `_count` != `+Inf`.
  std::unique_ptr<std::atomic<std::uint64_t>[]> buckets_;
  std::atomic<double> sum_{0.0};
};

// A metric with one label. M is counter, gauge or histogram.
template <class M>
class family {
 public:
  ~family();
  family(const family&) = delete;
  family& operator=(const family&) = delete;

  // The child for `label_value`, created (zero) on first use; a stable
  // reference. Takes a short lock: hot paths may keep the reference.
  M& with(std::string_view label_value);

 private:
  friend class registry;
  struct impl;
  family(std::string label, std::vector<double> bounds);  // bounds: histograms only
  void render(std::string& out, std::string_view name) const;
  std::unique_ptr<impl> impl_;
};

using counter_family = family<counter>;
using gauge_family = family<gauge>;
using histogram_family = family<histogram>;

// Names: [a-zA-Z_:][a-zA-Z0-9_:]*, unique within the registry. Label names:
// [a-zA-Z_][a-zA-Z0-9_]*, not starting with "__", and not "le" for
// histograms. `help` is free text (escaped on output). Thread-safe.
class registry {
 public:
  registry();  // an empty registry (tests); the process uses global()
  ~registry();
  registry(const registry&) = delete;
  registry& operator=(const registry&) = delete;

  counter& add_counter(std::string name, std::string help);
  gauge& add_gauge(std::string name, std::string help);
  histogram& add_histogram(std::string name, std::string help, std::vector<double> bounds);
  counter_family& add_counter_family(std::string name, std::string help, std::string label);
  gauge_family& add_gauge_family(std::string name, std::string help, std::string label);
  histogram_family& add_histogram_family(std::string name, std::string help, std::string label,
                                         std::vector<double> bounds);

  // The text exposition format 0.0.4 (Content-Type
  // "text/plain; version=0.0.4; charset=utf-8").
  [[nodiscard]] std::string render() const;

 private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

// The process's registry; Tether's metrics below are registered in it, in
// this order, the first time any of them (or global()) is used.
registry& global();

// ---- Tether's metrics: the one place they are declared ----

// tether_executions_total{outcome}: executions finished, by outcome
// ("succeeded", "failed", "interrupted", "waiting").
counter_family& executions_total();
// tether_admission_seconds: latency of admitting an input (request accepted →
// input durable). Buckets 0.5 ms … 10 s.
histogram& admission_seconds();
// tether_step_seconds: latency of one model step (request sent → step ended).
// Buckets 50 ms … 300 s.
histogram& step_seconds();
// tether_active_sessions: sessions with a drain running.
gauge& active_sessions();
// tether_sse_subscribers: open SSE streams.
gauge& sse_subscribers();
// tether_store_commit_seconds: latency of one group commit of the store.
// Buckets 0.1 ms … 2.5 s.
histogram& store_commit_seconds();
// tether_store_degraded: 1 while the store refuses writes after a failed
// commit (event_store::health() is degraded), 0 otherwise.
gauge& store_degraded();
// tether_store_write_failures_total: failed commits and failed retry probes.
counter& store_write_failures_total();
// tether_http_requests_total{code}: HTTP requests answered, by status code
// ("200", "404", …).
counter_family& http_requests_total();

}  // namespace tether::metrics
