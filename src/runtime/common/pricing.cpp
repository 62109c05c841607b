#include "runtime/common/pricing.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "config/config.h"

namespace tether::runtime {

std::string_view to_string(cost_status s) {
  switch (s) {
    case cost_status::reported:
      return "reported";
    case cost_status::estimated:
      return "estimated";
    case cost_status::unpriced:
      return "unpriced";
  }
  return "unpriced";
}


namespace {

struct default_price {
  const char* pattern;
  model_price price;
};

// Public list prices (USD per million tokens: input, output, cached input)
// as published by OpenAI and Anthropic at the time of writing. They change:
// override them in the configuration's [prices] table.
constexpr default_price default_prices[] = {
    {"gpt-4o*", {2.50, 10.00, 1.25}},
    {"gpt-4o-mini*", {0.15, 0.60, 0.075}},
    {"gpt-4.1*", {2.00, 8.00, 0.50}},
    {"gpt-4.1-mini*", {0.40, 1.60, 0.10}},
    {"gpt-4.1-nano*", {0.10, 0.40, 0.025}},
    {"gpt-5*", {1.25, 10.00, 0.125}},
    {"gpt-5-mini*", {0.25, 2.00, 0.025}},
    {"gpt-5-nano*", {0.05, 0.40, 0.005}},
    {"o1*", {15.00, 60.00, 7.50}},
    {"o1-mini*", {1.10, 4.40, 0.55}},
    {"o3*", {2.00, 8.00, 0.50}},
    {"o3-mini*", {1.10, 4.40, 0.55}},
    {"o4-mini*", {1.10, 4.40, 0.275}},
    {"claude-opus-4*", {15.00, 75.00, 1.50}},
    {"claude-opus-4-5*", {5.00, 25.00, 0.50}},
    {"claude-sonnet-4*", {3.00, 15.00, 0.30}},
    {"claude-haiku-4-5*", {1.00, 5.00, 0.10}},
    {"claude-3-7-sonnet*", {3.00, 15.00, 0.30}},
    {"claude-3-5-sonnet*", {3.00, 15.00, 0.30}},
    {"claude-3-5-haiku*", {0.80, 4.00, 0.08}},
    {"claude-3-haiku*", {0.25, 1.25, 0.03}},
};

bool is_pattern(std::string_view p) { return !p.empty() && p.back() == '*'; }

}  // namespace

price_table price_table::defaults() {
  price_table t;
  for (const auto& d : default_prices) t.set(d.pattern, d.price);
  return t;
}

void price_table::set(std::string pattern, model_price price) { entries_[std::move(pattern)] = price; }

std::optional<model_price> price_table::find_name(std::string_view model) const {
  if (auto it = entries_.find(model); it != entries_.end() && !is_pattern(it->first)) return it->second;
  const model_price* best = nullptr;
  std::size_t best_len = 0;
  for (const auto& [pattern, price] : entries_) {
    if (!is_pattern(pattern)) continue;
    const std::string_view prefix = std::string_view(pattern).substr(0, pattern.size() - 1);
    if (model.starts_with(prefix) && (best == nullptr || prefix.size() > best_len)) {
      best = &price;
      best_len = prefix.size();
    }
  }
  if (best != nullptr) return *best;
  return std::nullopt;
}

std::optional<model_price> price_table::find(std::string_view model) const {
  if (auto p = find_name(model)) return p;
  if (const auto slash = model.rfind('/'); slash != std::string_view::npos) return find_name(model.substr(slash + 1));
  return std::nullopt;
}

result<price_table> load_prices(std::string_view toml_text, price_table base) {
  auto prices = config::parse_prices(toml_text);
  if (!prices) return prices.error();
  for (const auto& [model, p] : *prices) base.set(model, model_price{p.input, p.output, p.cached_input});
  return base;
}

priced_cost price_usage(const price_table& table, std::string_view model, const model::usage& usage,
                        std::optional<double> reported_cost_usd) {
  if (reported_cost_usd) return {reported_cost_usd, cost_status::reported};
  const auto price = table.find(model);
  if (!price) return {std::nullopt, cost_status::unpriced};
  const auto cached =
      std::clamp<std::int64_t>(usage.cached_input_tokens, 0, std::max<std::int64_t>(usage.input_tokens, 0));
  const auto fresh = std::max<std::int64_t>(usage.input_tokens, 0) - cached;
  const double usd = (static_cast<double>(fresh) * price->input + static_cast<double>(cached) * price->cached_input +
                      static_cast<double>(std::max<std::int64_t>(usage.output_tokens, 0)) * price->output) /
                     1e6;
  return {usd, cost_status::estimated};
}

}  // namespace tether::runtime
