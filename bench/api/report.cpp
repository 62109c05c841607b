#include "api/report.h"

#include <algorithm>
#include <cstdio>

namespace tether::bench::api {

namespace json = boost::json;

json::object to_json(const run_result& r) {
  json::array threads;
  for (std::size_t i = 0; i < std::min<std::size_t>(r.threads.size(), 12); ++i)
    threads.push_back({{"tid", r.threads[i].tid}, {"name", r.threads[i].name}, {"cpu_s", r.threads[i].seconds}});
  json::object events;
  for (const auto& [k, v] : r.event_counts) events[k] = v;
  json::object statuses;
  for (const auto& [k, v] : r.statuses) statuses[std::to_string(k)] = v;
  json::array errors;
  for (const auto& e : r.errors) errors.push_back(json::string(e));
  json::array log_samples;
  for (const auto& e : r.log.samples) log_samples.push_back(json::string(e));
  json::object metrics;
  for (const auto& [k, v] : r.metrics) metrics[k] = v;
  json::object o{{"name", r.name},
                 {"sessions", r.sessions},
                 {"turns_per_session", r.turns_per_session},
                 {"turns", r.turns},
                 {"turns_succeeded", r.turns_ok},
                 {"completed_in_time", r.completed},
                 {"seconds", r.seconds},
                 {"turns_per_s", r.turns_per_s},
                 {"turn_latency", to_json(r.latency)},
                 {"admission_latency", to_json(r.admission)},
                 {"scheduler_latency", to_json(r.scheduler)},
                 {"dispatch_latency", to_json(r.dispatch)},
                 {"model_time", to_json(r.model)},
                 {"overhead", to_json(r.overhead)},
                 {"finish_latency", to_json(r.finish)},
                 {"server_rss_end_mb", r.rss_end_mb},
                 {"server_peak_rss_mb", r.peak_rss_mb},
                 {"server_cpu_s", r.server_cpu_s},
                 {"mock_cpu_s", r.mock_cpu_s},
                 {"client_cpu_s", r.client_cpu_s},
                 {"server_threads_busiest", std::move(threads)},
                 {"model_requests",
                  {{"recorded", r.model_requests.requests},
                   {"unmatched", r.model_requests.unmatched},
                   {"incomplete", r.model_requests.incomplete},
                   {"turns_without_request", r.turns_without_model_request},
                   {"turns_with_several", r.turns_with_retries}}},
                 {"events_seen", std::move(events)},
                 {"event_stream_bytes", r.event_bytes},
                 {"http_statuses", std::move(statuses)},
                 {"server_metrics_during_turns", std::move(metrics)},
                 {"client_errors", r.error_count},
                 {"client_error_samples", std::move(errors)},
                 {"server_log",
                  {{"lines", r.log.lines},
                   {"warnings", r.log.warnings},
                   {"errors", r.log.errors},
                   {"samples", std::move(log_samples)}}},
                 {"shutdown", {{"exit_status", r.stop.status}, {"us", whole(r.stop.us)}}},
                 {"load_average_before", r.load_before}};
  if (r.idle_rss_mb > 0) o["idle_rss_mb"] = r.idle_rss_mb;
  return o;
}

void print_row(const run_result& r) {
  std::printf("%-22s %6zu %6zu %8.2f %8.0f %8.1f %8.1f %8.1f %8.1f %8.2f %8.2f %8.2f %8.1f %8.1f %8.1f\n",
              r.name.c_str(), r.turns, r.turns_ok, r.seconds, r.turns_per_s, ms(r.latency.p50), ms(r.latency.p95),
              ms(r.latency.p99), ms(r.model.p50), ms(r.overhead.p50), ms(r.overhead.p95), ms(r.overhead.p99),
              ms(r.scheduler.p50), ms(r.scheduler.p99), r.peak_rss_mb);
  std::fflush(stdout);
}

void print_details(const run_result& r) {
  std::printf(
      "  %s: p50/p99 ms: POST → 202 %.2f/%.2f, 202 → model %.2f/%.2f, model %.2f/%.2f,"
      " model done → execution.finished %.2f/%.2f\n",
      r.name.c_str(), ms(r.admission.p50), ms(r.admission.p99), ms(r.scheduler.p50), ms(r.scheduler.p99),
      ms(r.model.p50), ms(r.model.p99), ms(r.finish.p50), ms(r.finish.p99));
  std::printf(
      "  %s: CPU s: server %.2f, mock %.2f, client %.2f; model requests %zu (unmatched %zu);"
      " shutdown %.0f ms, exit %d\n",
      r.name.c_str(), r.server_cpu_s, r.mock_cpu_s, r.client_cpu_s, r.model_requests.requests,
      r.model_requests.unmatched, ms(r.stop.us), r.stop.status);
  const double commits = metric(r.metrics, "tether_store_commit_seconds_count");
  if (commits > 0 && r.turns > 0)
    std::printf(
        "  %s: store group commits %.0f (%.1f per turn), mean commit %.2f ms; mean model step %.2f ms\n",
        r.name.c_str(), commits, commits / static_cast<double>(r.turns),
        1000 * metric(r.metrics, "tether_store_commit_seconds_sum") / commits,
        metric(r.metrics, "tether_step_seconds_count") > 0
            ? 1000 * metric(r.metrics, "tether_step_seconds_sum") / metric(r.metrics, "tether_step_seconds_count")
            : 0.0);
  std::string busy;
  for (std::size_t i = 0; i < std::min<std::size_t>(r.threads.size(), 6); ++i)
    if (r.threads[i].seconds > 0.005)
      busy += " " + r.threads[i].name + "/" + std::to_string(r.threads[i].tid) + "=" +
              std::to_string(static_cast<int>(r.threads[i].seconds * 1000)) + "ms";
  if (!busy.empty()) std::printf("  %s: busiest server threads (CPU):%s\n", r.name.c_str(), busy.c_str());
  if (r.error_count > 0 || r.log.errors > 0 || r.log.warnings > 0 || !r.completed)
    std::printf("  %s: %s%zu client errors, server log %zu errors / %zu warnings\n", r.name.c_str(),
                r.completed ? "" : "DID NOT FINISH IN TIME; ", r.error_count, r.log.errors, r.log.warnings);
  for (const auto& e : r.errors) std::printf("    client: %s\n", e.c_str());
  for (const auto& e : r.log.samples) std::printf("    server: %s\n", e.c_str());
}

}  // namespace tether::bench::api
