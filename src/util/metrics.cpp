#include "util/metrics.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <functional>
#include <map>
#include <mutex>
#include <system_error>
#include <type_traits>
#include <utility>
#include <variant>

#include "util/check.h"

namespace tether::metrics {

namespace {

bool is_name_char(char c, bool first, bool colon_ok) {
  if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_') return true;
  if (colon_ok && c == ':') return true;
  return !first && c >= '0' && c <= '9';
}

bool valid_name(std::string_view s, bool colon_ok) {
  if (s.empty()) return false;
  for (std::size_t i = 0; i < s.size(); ++i)
    if (!is_name_char(s[i], i == 0, colon_ok)) return false;
  return true;
}

bool valid_bounds(const std::vector<double>& bounds) {
  for (std::size_t i = 0; i < bounds.size(); ++i) {
    if (!std::isfinite(bounds[i])) return false;
    if (i > 0 && !(bounds[i - 1] < bounds[i])) return false;
  }
  return true;
}

// Prometheus reads Go float syntax; the shortest round-trip form is valid.
std::string format_double(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  TETHER_CHECK(ec == std::errc(), "to_chars cannot fail with a 64-byte buffer");
  return {buf, end};
}

// The format escapes \ and newline in HELP text, and also " in label values.
std::string escape(std::string_view s, bool quote) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else if (quote && c == '"') {
      out += "\\\"";
    } else {
      out += c;
    }
  }
  return out;
}

// `labels`: the `name="value"` pairs, already escaped and comma-separated.
void sample(std::string& out, std::string_view name, std::string_view suffix, std::string_view labels,
            std::string_view value) {
  out.append(name).append(suffix);
  if (!labels.empty()) out.append("{").append(labels).append("}");
  out.append(" ").append(value).append("\n");
}

void render_one(std::string& out, std::string_view name, std::string_view labels, const counter& c) {
  sample(out, name, "", labels, std::to_string(c.value()));
}

void render_one(std::string& out, std::string_view name, std::string_view labels, const gauge& g) {
  sample(out, name, "", labels, std::to_string(g.value()));
}

void render_one(std::string& out, std::string_view name, std::string_view labels, const histogram& h) {
  const auto counts = h.cumulative_counts();
  const std::string prefix = labels.empty() ? std::string() : std::string(labels) + ",";
  const auto& bounds = h.bounds();
  for (std::size_t i = 0; i < bounds.size(); ++i)
    sample(out, name, "_bucket", prefix + "le=\"" + format_double(bounds[i]) + "\"", std::to_string(counts[i]));
  sample(out, name, "_bucket", prefix + "le=\"+Inf\"", std::to_string(counts.back()));
  sample(out, name, "_sum", labels, format_double(h.sum()));
  sample(out, name, "_count", labels, std::to_string(counts.back()));
}

template <class M>
constexpr std::string_view type_of() {
  if constexpr (std::is_same_v<M, counter>) return "counter";
  if constexpr (std::is_same_v<M, gauge>) return "gauge";
  if constexpr (std::is_same_v<M, histogram>) return "histogram";
}

}  // namespace

// ---- histogram ----

histogram::histogram(std::vector<double> bounds)
    : bounds_(std::move(bounds)), buckets_(std::make_unique<std::atomic<std::uint64_t>[]>(bounds_.size() + 1)) {
  TETHER_CHECK(valid_bounds(bounds_), "histogram bounds must be finite and strictly increasing");
}

void histogram::observe(double seconds) noexcept {
  if (std::isnan(seconds)) return;
  const auto i = std::lower_bound(bounds_.begin(), bounds_.end(), seconds) - bounds_.begin();
  buckets_[static_cast<std::size_t>(i)].fetch_add(1, std::memory_order_relaxed);
  sum_.fetch_add(seconds, std::memory_order_relaxed);
}

std::vector<std::uint64_t> histogram::cumulative_counts() const {
  std::vector<std::uint64_t> out(bounds_.size() + 1);
  std::uint64_t total = 0;
  for (std::size_t i = 0; i < out.size(); ++i) {
    total += buckets_[i].load(std::memory_order_relaxed);
    out[i] = total;
  }
  return out;
}

std::uint64_t histogram::count() const noexcept {
  std::uint64_t total = 0;
  for (std::size_t i = 0; i <= bounds_.size(); ++i) total += buckets_[i].load(std::memory_order_relaxed);
  return total;
}

// ---- family ----

template <class M>
struct family<M>::impl {
  impl(std::string l, std::vector<double> b) : label(std::move(l)), bounds(std::move(b)) {}
  std::string label;
  std::vector<double> bounds;
  mutable std::mutex mu;
  // unique_ptr: a child's address must not change as others are added.
  std::map<std::string, std::unique_ptr<M>, std::less<>> children;
};

template <class M>
family<M>::family(std::string label, std::vector<double> bounds)
    : impl_(std::make_unique<impl>(std::move(label), std::move(bounds))) {}

template <class M>
family<M>::~family() = default;

template <class M>
M& family<M>::with(std::string_view label_value) {
  const std::lock_guard lock(impl_->mu);
  auto it = impl_->children.find(label_value);
  if (it == impl_->children.end()) {
    std::unique_ptr<M> child;
    if constexpr (std::is_same_v<M, histogram>) {
      child = std::make_unique<M>(impl_->bounds);
    } else {
      child = std::make_unique<M>();
    }
    it = impl_->children.emplace(std::string(label_value), std::move(child)).first;
  }
  return *it->second;
}

template <class M>
void family<M>::render(std::string& out, std::string_view name) const {
  const std::lock_guard lock(impl_->mu);
  for (const auto& [value, child] : impl_->children)
    render_one(out, name, impl_->label + "=\"" + escape(value, true) + "\"", *child);
}

template class family<counter>;
template class family<gauge>;
template class family<histogram>;

// ---- registry ----

struct registry::impl {
  struct entry {
    std::string name;
    std::string help;
    std::string_view type;
    std::variant<std::unique_ptr<counter>, std::unique_ptr<gauge>, std::unique_ptr<histogram>,
                 std::unique_ptr<counter_family>, std::unique_ptr<gauge_family>, std::unique_ptr<histogram_family>>
        metric;
  };
  mutable std::mutex mu;
  std::vector<entry> entries;

  template <class T>
  T& add(std::string name, std::string help, std::string_view type, std::unique_ptr<T> metric) {
    TETHER_CHECK(valid_name(name, true), "invalid metric name: " + name);
    T& ref = *metric;
    const std::lock_guard lock(mu);
    for (const auto& e : entries) TETHER_CHECK(e.name != name, "metric registered twice: " + name);
    entries.push_back(entry{std::move(name), std::move(help), type, std::move(metric)});
    return ref;
  }
};

namespace {

void check_label(std::string_view label, std::string_view type) {
  TETHER_CHECK(valid_name(label, false) && !label.starts_with("__"), "invalid label name: " + std::string(label));
  TETHER_CHECK(type != "histogram" || label != "le", "a histogram cannot have the label 'le'");
}

}  // namespace

registry::registry() : impl_(std::make_unique<impl>()) {}
registry::~registry() = default;

counter& registry::add_counter(std::string name, std::string help) {
  return impl_->add(std::move(name), std::move(help), type_of<counter>(), std::make_unique<counter>());
}

gauge& registry::add_gauge(std::string name, std::string help) {
  return impl_->add(std::move(name), std::move(help), type_of<gauge>(), std::make_unique<gauge>());
}

histogram& registry::add_histogram(std::string name, std::string help, std::vector<double> bounds) {
  return impl_->add(std::move(name), std::move(help), type_of<histogram>(),
                    std::make_unique<histogram>(std::move(bounds)));
}

counter_family& registry::add_counter_family(std::string name, std::string help, std::string label) {
  check_label(label, type_of<counter>());
  return impl_->add(std::move(name), std::move(help), type_of<counter>(),
                    std::unique_ptr<counter_family>(new counter_family(std::move(label), {})));
}

gauge_family& registry::add_gauge_family(std::string name, std::string help, std::string label) {
  check_label(label, type_of<gauge>());
  return impl_->add(std::move(name), std::move(help), type_of<gauge>(),
                    std::unique_ptr<gauge_family>(new gauge_family(std::move(label), {})));
}

histogram_family& registry::add_histogram_family(std::string name, std::string help, std::string label,
                                                 std::vector<double> bounds) {
  check_label(label, type_of<histogram>());
  TETHER_CHECK(valid_bounds(bounds), "histogram bounds must be finite and strictly increasing");
  return impl_->add(std::move(name), std::move(help), type_of<histogram>(),
                    std::unique_ptr<histogram_family>(new histogram_family(std::move(label), std::move(bounds))));
}

std::string registry::render() const {
  std::string out;
  const std::lock_guard lock(impl_->mu);
  for (const auto& e : impl_->entries) {
    out.append("# HELP ").append(e.name).append(" ").append(escape(e.help, false)).append("\n");
    out.append("# TYPE ").append(e.name).append(" ").append(e.type).append("\n");
    std::visit(
        [&](const auto& metric) {
          using T = typename std::decay_t<decltype(metric)>::element_type;
          if constexpr (std::is_same_v<T, counter> || std::is_same_v<T, gauge> || std::is_same_v<T, histogram>) {
            render_one(out, e.name, "", *metric);
          } else {
            metric->render(out, e.name);
          }
        },
        e.metric);
  }
  return out;
}

// ---- Tether's metrics ----

namespace {

struct tether_metrics {
  registry reg;
  counter_family& executions_total =
      reg.add_counter_family("tether_executions_total", "Executions finished, by outcome.", "outcome");
  histogram& admission_seconds =
      reg.add_histogram("tether_admission_seconds", "Latency of admitting an input until it is durable, in seconds.",
                        {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10});
  histogram& step_seconds = reg.add_histogram("tether_step_seconds", "Latency of one model step, in seconds.",
                                              {0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 30, 60, 120, 300});
  gauge& active_sessions = reg.add_gauge("tether_active_sessions", "Sessions with a drain running.");
  gauge& sse_subscribers = reg.add_gauge("tether_sse_subscribers", "Open SSE event streams.");
  histogram& store_commit_seconds =
      reg.add_histogram("tether_store_commit_seconds", "Latency of one group commit of the store, in seconds.",
                        {0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5});
  gauge& store_degraded =
      reg.add_gauge("tether_store_degraded",
                    "1 while the store cannot write (a commit failed and no retry has succeeded yet), else 0.");
  counter& store_write_failures_total = reg.add_counter(
      "tether_store_write_failures_total", "Commits and retry probes of the store that failed (full disk, I/O error).");
  counter_family& http_requests_total =
      reg.add_counter_family("tether_http_requests_total", "HTTP requests answered, by status code.", "code");
};

// Never destroyed, so handles stay valid in other static destructors too.
tether_metrics& process_metrics() {
  static auto* const m = new tether_metrics();  // NOLINT(cppcoreguidelines-owning-memory)
  return *m;
}

}  // namespace

registry& global() { return process_metrics().reg; }
counter_family& executions_total() { return process_metrics().executions_total; }
histogram& admission_seconds() { return process_metrics().admission_seconds; }
histogram& step_seconds() { return process_metrics().step_seconds; }
gauge& active_sessions() { return process_metrics().active_sessions; }
gauge& sse_subscribers() { return process_metrics().sse_subscribers; }
histogram& store_commit_seconds() { return process_metrics().store_commit_seconds; }
gauge& store_degraded() { return process_metrics().store_degraded; }
counter& store_write_failures_total() { return process_metrics().store_write_failures_total; }
counter_family& http_requests_total() { return process_metrics().http_requests_total; }

}  // namespace tether::metrics
