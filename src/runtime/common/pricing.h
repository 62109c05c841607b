// Model prices and the cost of one response, for every runtime that reports
// usage (the native loop, the agent programs through the model relay) (docs/architecture.md §5, "Cost").
//
//   auto table = load_prices(toml_text);          // user overrides over the defaults
//   auto cost = price_usage(*table, "gpt-4o-2024-08-06", usage, reported);
//   // cost.status: reported | estimated | unpriced; cost.usd empty when unpriced
//
// A price is USD per million tokens for input, output and cached input.
// Models are matched by exact name first, then by the longest prefix pattern
// ("gpt-4o*" matches "gpt-4o-2024-08-06"; "gpt-4o-mini*" wins over it for
// "gpt-4o-mini"), then the same again on the part after the last '/'
// ("openai/gpt-4o" as OpenRouter names it).
//
// The compiled-in defaults are public list prices at the time of writing;
// config/prices.toml ships the same table as a starting point for overrides.
// Anthropic cache writes (billed at 1.25x input) are priced as plain input:
// usage does not carry them separately, so such estimates run slightly low.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "model/events.h"
#include "util/result.h"

namespace tether::runtime {

// Cost as reported by the provider, or estimated from the price table.
enum class cost_status { reported, estimated, unpriced };
std::string_view to_string(cost_status s);

struct model_price {
  double input = 0;         // USD per million input tokens (not cached)
  double output = 0;        // USD per million output tokens
  double cached_input = 0;  // USD per million cached input tokens
  bool operator==(const model_price&) const = default;
};

class price_table {
 public:
  // The compiled-in list prices.
  static price_table defaults();

  // Sets the price of a model name or, ending with '*', a prefix pattern.
  void set(std::string pattern, model_price price);
  [[nodiscard]] std::optional<model_price> find(std::string_view model) const;
  [[nodiscard]] const std::map<std::string, model_price, std::less<>>& entries() const { return entries_; }

 private:
  [[nodiscard]] std::optional<model_price> find_name(std::string_view model) const;
  std::map<std::string, model_price, std::less<>> entries_;
};

// Reads `[prices."model"] input = 2.5, output = 10.0, cached_input = 1.25`
// tables from TOML text (other tables are ignored, so a whole config file
// may be passed) and merges them over `base`. `input` and `output` are
// required, `cached_input` defaults to `input`; prices are non-negative
// numbers. Errors (util_errc::invalid_argument) name the line or the model.
result<price_table> load_prices(std::string_view toml_text, price_table base = price_table::defaults());

struct priced_cost {
  std::optional<double> usd;  // empty when unpriced, never a made-up 0
  cost_status status = cost_status::unpriced;
};

// reported when the provider sent a cost; else estimated from the table
// (cached input at the cached rate, the rest of the input at the input
// rate, output at the output rate); else unpriced.
priced_cost price_usage(const price_table& table, std::string_view model, const model::usage& usage,
                        std::optional<double> reported_cost_usd);

}  // namespace tether::runtime
