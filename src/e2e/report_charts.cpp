#include <cctype>
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "e2e/report_html.h"

namespace tether::e2e::html {

std::string url_path(std::string_view path) {
  static constexpr char hex[] = "0123456789ABCDEF";
  std::string out;
  for (const unsigned char c : path) {
    if (std::isalnum(c) || c == '/' || c == '-' || c == '_' || c == '.' || c == '~') {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += hex[c >> 4];
      out += hex[c & 15];
    }
  }
  return out;
}

std::string escape(std::string_view s) {
  std::string out;
  out.reserve(s.size() + 16);
  for (const char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string thousands(std::int64_t n) {
  std::string digits = std::to_string(n < 0 ? -n : n);
  std::string out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return n < 0 ? "-" + out : out;
}

std::string duration(std::int64_t ms) {
  if (ms < 1000) return std::to_string(ms) + " ms";
  if (ms < 60'000) return fmt::format("{:.1f} s", static_cast<double>(ms) / 1000);
  const std::int64_t s = (ms + 500) / 1000;
  if (s < 3600) return fmt::format("{} min {} s", s / 60, s % 60);
  return fmt::format("{} h {} min", s / 3600, (s % 3600) / 60);
}

std::string percent(double fraction) {
  const double p = fraction * 100;
  if (std::fabs(p - std::round(p)) < 0.05) return fmt::format("{:.0f}%", p);
  return fmt::format("{:.1f}%", p);
}

std::string cost(const std::optional<double>& usd, std::string_view status) {
  if (!usd) return status == "unpriced" ? "unpriced" : "unavailable";
  const std::string amount = *usd >= 1 ? fmt::format("${:.2f}", *usd) : fmt::format("${:.4f}", *usd);
  return status == "partial" ? amount + " (partial)" : amount;
}

void usage_sum::add(const cell_result& r) {
  runs += r.llm.run_count;
  runs_with_usage += r.llm.runs_with_token_usage;
  runs_with_cost += r.llm.runs_with_reported_cost;
  input_tokens += r.llm.input_tokens;
  output_tokens += r.llm.output_tokens;
  cached_input_tokens += r.llm.cached_input_tokens;
  agent_time_ms += r.runtime_cost.agent_time_ms;
  lease_ms += r.runtime_cost.lease_duration_ms.value_or(0);
  leases += r.runtime_cost.lease_count;
  if (r.runtime_cost.estimated_cost_usd)
    runtime_cost_usd = runtime_cost_usd.value_or(0) + *r.runtime_cost.estimated_cost_usd;
  else if (r.runtime_cost.lease_count > 0)
    ++unpriced_leased_cells;
  if (r.llm.reported_cost_usd) cost_usd = cost_usd.value_or(0) + *r.llm.reported_cost_usd;
}

std::string usage_sum::cost_status() const {
  if (runs > 0 && runs_with_cost == runs) return "reported";
  if (runs_with_cost > 0) return "partial";
  if (runs_with_usage > 0) return "unpriced";
  return "unavailable";
}

// ---------------------------------------------------------------- charts

namespace {

constexpr double width = 440, height = 236;
constexpr double left = 56, right = 428, top = 40, bottom = 196;

// The smallest of 1, 2, 2.5, 5 × 10^k, times 4 ticks, at or above `v`.
double nice_max(double v) {
  if (!(v > 0)) return 1;
  const double raw = v / 4;
  const double mag = std::pow(10, std::floor(std::log10(raw)));
  for (const double m : {1.0, 2.0, 2.5, 5.0, 10.0})
    if (m * mag >= raw * (1 - 1e-9)) return m * mag * 4;
  return v;
}

std::string num(double v) { return fmt::format("{:.1f}", v); }

double slot_x(std::size_t i, std::size_t n) {
  return left + (static_cast<double>(i) + 0.5) * (right - left) / static_cast<double>(n);
}
double value_y(double v, double y_max) { return bottom - (v / y_max) * (bottom - top); }

std::string frame(std::string_view title, const std::vector<std::string>& labels, double y_max, value_format format) {
  std::string s = fmt::format(R"(<svg class="chart" viewBox="0 0 {} {}" role="img" aria-label="{}">)", width, height,
                              escape(title));
  s += fmt::format(R"(<text x="{}" y="20" class="chart-title">{}</text>)", left - 44, escape(title));
  for (int t = 0; t <= 4; ++t) {
    const double v = y_max * t / 4;
    const double y = value_y(v, y_max);
    s += fmt::format(R"(<line x1="{}" x2="{}" y1="{}" y2="{}" class="{}"/>)", num(left), num(right), num(y), num(y),
                     t == 0 ? "axis" : "grid");
    s += fmt::format(R"(<text x="{}" y="{}" class="tick" text-anchor="end">{}</text>)", num(left - 6), num(y + 4),
                     escape(format(v)));
  }
  const std::size_t n = std::max<std::size_t>(labels.size(), 1);
  const std::size_t every = (n + 7) / 8;  // at most 8 labels under the axis
  for (std::size_t i = 0; i < labels.size(); ++i) {
    if (i % every != 0 && i + 1 != labels.size()) continue;
    s += fmt::format(R"(<text x="{}" y="{}" class="tick" text-anchor="middle">{}</text>)", num(slot_x(i, n)),
                     num(bottom + 18), escape(labels[i]));
  }
  return s;
}

}  // namespace

std::string line_chart(std::string_view title, const std::vector<std::string>& labels, const series& s, double y_max,
                       value_format format) {
  double top_value = 0;
  for (const auto& v : s.values) top_value = std::max(top_value, v.value_or(0));
  if (y_max <= 0) y_max = nice_max(top_value);
  std::string out = frame(title, labels, y_max, format);
  const std::size_t n = std::max<std::size_t>(labels.size(), 1);
  std::string points;
  for (std::size_t i = 0; i < s.values.size(); ++i)
    if (s.values[i]) points += num(slot_x(i, n)) + "," + num(value_y(*s.values[i], y_max)) + " ";
  if (!points.empty())
    out += fmt::format(R"(<polyline points="{}" fill="none" stroke="{}" stroke-width="2.5" stroke-linejoin="round"/>)",
                       points, escape(s.colour));
  const bool label_all = s.values.size() <= 12;
  for (std::size_t i = 0; i < s.values.size(); ++i) {
    if (!s.values[i]) continue;
    const double x = slot_x(i, n), y = value_y(*s.values[i], y_max);
    out += fmt::format(R"(<circle cx="{}" cy="{}" r="4" fill="#fff" stroke="{}" stroke-width="2.5"/>)", num(x), num(y),
                       escape(s.colour));
    if (label_all || i + 1 == s.values.size())
      out += fmt::format(R"(<text x="{}" y="{}" class="point" text-anchor="middle">{}</text>)", num(x), num(y - 9),
                         escape(format(*s.values[i])));
  }
  return out + "</svg>";
}

std::string bar_chart(std::string_view title, const std::vector<std::string>& labels,
                      const std::vector<series>& stacked, value_format format) {
  std::vector<double> totals(labels.size(), 0);
  for (const auto& s : stacked)
    for (std::size_t i = 0; i < s.values.size() && i < totals.size(); ++i) totals[i] += s.values[i].value_or(0);
  double top_value = 0;
  for (const double t : totals) top_value = std::max(top_value, t);
  const double y_max = nice_max(top_value);
  std::string out = frame(title, labels, y_max, format);
  const std::size_t n = std::max<std::size_t>(labels.size(), 1);
  const double bar = std::min(44.0, (right - left) / static_cast<double>(n) * 0.6);
  for (std::size_t i = 0; i < labels.size(); ++i) {
    double base = 0;
    for (const auto& s : stacked) {
      const double v = i < s.values.size() ? s.values[i].value_or(0) : 0;
      if (v <= 0) continue;
      const double y0 = value_y(base, y_max), y1 = value_y(base + v, y_max);
      out += fmt::format(R"(<rect x="{}" y="{}" width="{}" height="{}" fill="{}"><title>{}: {}</title></rect>)",
                         num(slot_x(i, n) - bar / 2), num(y1), num(bar), num(y0 - y1), escape(s.colour), escape(s.name),
                         escape(format(v)));
      base += v;
    }
    if (labels.size() <= 12)
      out += fmt::format(R"(<text x="{}" y="{}" class="point" text-anchor="middle">{}</text>)", num(slot_x(i, n)),
                         num(value_y(base, y_max) - 6), escape(format(base)));
  }
  // Legend, right-aligned in the title row.
  if (stacked.size() > 1) {
    double x = right;
    for (auto it = stacked.rbegin(); it != stacked.rend(); ++it) {
      x -= 7.0 * static_cast<double>(it->name.size()) + 22;
      out +=
          fmt::format(R"(<rect x="{}" y="11" width="10" height="10" rx="2" fill="{}"/>)", num(x), escape(it->colour));
      out += fmt::format(R"(<text x="{}" y="20" class="legend">{}</text>)", num(x + 14), escape(it->name));
    }
  }
  return out + "</svg>";
}

}  // namespace tether::e2e::html
