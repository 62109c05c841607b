// Pieces of the dashboard page (internal to src/e2e; see report.h).
//
// Everything here returns HTML text. Functions taking record text escape it
// themselves; callers only concatenate.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "e2e/result.h"

namespace tether::e2e::html {

// & < > " ' as entities: safe in text and in quoted attributes.
std::string escape(std::string_view s);

// A path as it goes into a URL (an href, a file:// URL): every byte but
// letters, digits and / - _ . ~ percent-encoded.
std::string url_path(std::string_view path);

// 1234567 → "1,234,567".
std::string thousands(std::int64_t n);
// 850 → "850 ms", 12345 → "12.3 s", 754000 → "12 min 34 s".
std::string duration(std::int64_t ms);
// 0.5 → "50%", 0.875 → "87.5%".
std::string percent(double fraction);
// "$0.0123" for a cost, or why there is none ("unavailable", "unpriced").
std::string cost(const std::optional<double>& usd, std::string_view status);

// Usage summed over cells (every attempt: retries are paid for too).
struct usage_sum {
  std::int64_t runs = 0;
  std::int64_t runs_with_usage = 0;
  std::int64_t runs_with_cost = 0;
  std::int64_t input_tokens = 0;
  std::int64_t output_tokens = 0;
  std::int64_t cached_input_tokens = 0;
  std::int64_t agent_time_ms = 0;
  std::optional<double> cost_usd;
  // leased environments: lease time and count, and the estimated runtime cost of the priced ones
  std::int64_t lease_ms = 0;
  std::int64_t leases = 0;
  std::int64_t unpriced_leased_cells = 0;
  std::optional<double> runtime_cost_usd;
  void add(const cell_result& r);
  // reported | partial | unpriced | unavailable, by the billing rules.
  [[nodiscard]] std::string cost_status() const;
};

// One series of a chart: a value per campaign (nullopt: no data).
struct series {
  std::string name;
  std::string colour;  // a CSS colour
  std::vector<std::optional<double>> values;
};

// An inline <svg> chart over `labels` (one per campaign, oldest first);
// `format` turns a value into an axis or point label.
using value_format = std::string (*)(double);
std::string line_chart(std::string_view title, const std::vector<std::string>& labels, const series& s, double y_max,
                       value_format format);
std::string bar_chart(std::string_view title, const std::vector<std::string>& labels,
                      const std::vector<series>& stacked, value_format format);

}  // namespace tether::e2e::html
