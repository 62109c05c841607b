#include "runtime/common/pricing.h"
#include "support/paths.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace tether::runtime {
namespace {

model::usage usage(std::int64_t in, std::int64_t cached, std::int64_t out) {
  model::usage u;
  u.input_tokens = in;
  u.cached_input_tokens = cached;
  u.output_tokens = out;
  return u;
}

TEST(pricing, cost_status_names_are_stable) {
  EXPECT_EQ(to_string(cost_status::reported), "reported");
  EXPECT_EQ(to_string(cost_status::estimated), "estimated");
  EXPECT_EQ(to_string(cost_status::unpriced), "unpriced");
}

TEST(pricing, models_match_by_exact_name_then_longest_prefix_then_after_the_vendor) {
  const auto t = price_table::defaults();
  EXPECT_EQ(t.find("gpt-4o")->input, 2.5);
  EXPECT_EQ(t.find("gpt-4o-2024-08-06")->input, 2.5);
  EXPECT_EQ(t.find("gpt-4o-mini")->input, 0.15);
  EXPECT_EQ(t.find("gpt-4o-mini-2024-07-18")->output, 0.6);
  EXPECT_EQ(t.find("openai/gpt-4.1-mini")->input, 0.4);
  EXPECT_EQ(t.find("claude-sonnet-4-20250514")->output, 15.0);
  EXPECT_EQ(t.find("claude-opus-4-1-20250805")->input, 15.0);
  EXPECT_EQ(t.find("claude-3-5-haiku-latest")->input, 0.8);
  EXPECT_FALSE(t.find("llama-3.1-8b-instruct"));
  EXPECT_FALSE(t.find(""));
}

TEST(pricing, common_models_have_compiled_in_prices) {
  const auto t = price_table::defaults();
  for (const char* m : {"gpt-4o", "gpt-4o-mini", "gpt-4.1", "gpt-4.1-mini", "o3", "o4-mini", "gpt-5",
                        "claude-sonnet-4-0", "claude-opus-4-0", "claude-3-5-haiku-20241022"})
    EXPECT_TRUE(t.find(m)) << m;
}

TEST(pricing, cached_input_is_billed_at_the_cached_rate_and_the_rest_at_the_input_rate) {
  const auto t = price_table::defaults();
  // gpt-4o: 2.50 in, 10.00 out, 1.25 cached (per million)
  const auto c = price_usage(t, "gpt-4o", usage(1'000'000, 400'000, 100'000), std::nullopt);
  EXPECT_EQ(c.status, cost_status::estimated);
  ASSERT_TRUE(c.usd);
  EXPECT_NEAR(*c.usd, 0.6 * 2.5 + 0.4 * 1.25 + 0.1 * 10.0, 1e-9);
}

TEST(pricing, a_reported_cost_wins_and_an_unknown_model_is_unpriced_not_free) {
  const auto t = price_table::defaults();
  const auto r = price_usage(t, "deepseek/deepseek-r1", usage(10, 0, 90), 0.00026838);
  EXPECT_EQ(r.status, cost_status::reported);
  EXPECT_EQ(r.usd, 0.00026838);
  const auto u = price_usage(t, "my-local-model", usage(10, 0, 90), std::nullopt);
  EXPECT_EQ(u.status, cost_status::unpriced);
  EXPECT_FALSE(u.usd.has_value());
}

TEST(pricing, user_prices_override_and_extend_the_defaults) {
  auto t = load_prices(R"(
[server]
port = 8080

[prices."gpt-4o"]
input = 2
output = 8.0
cached_input = 0.5

[prices."my-model*"]
input = 0.1
output = 0.2
)");
  ASSERT_TRUE(t) << t.error().message;
  EXPECT_EQ(t->find("gpt-4o"), (model_price{2.0, 8.0, 0.5}));
  EXPECT_EQ(t->find("gpt-4o-2024-08-06")->input, 2.5);              // the exact override does not touch the pattern
  EXPECT_EQ(t->find("my-model-7b"), (model_price{0.1, 0.2, 0.1}));  // cached defaults to input
  EXPECT_EQ(t->find("gpt-4.1")->input, 2.0);
}

TEST(pricing, bad_price_files_get_clear_errors) {
  auto syntax = load_prices("[prices.\"gpt-4o\"\ninput = 1");
  ASSERT_FALSE(syntax);
  EXPECT_NE(syntax.error().message.find("line"), std::string::npos) << syntax.error().message;
  auto missing = load_prices("[prices.\"m\"]\ninput = 1\n");
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().message.find("\"m\" has no output"), std::string::npos) << missing.error().message;
  auto negative = load_prices("[prices.\"m\"]\ninput = -1\noutput = 1\n");
  ASSERT_FALSE(negative);
  EXPECT_NE(negative.error().message.find("non-negative"), std::string::npos);
  for (const char* value : {"inf", "+inf", "nan", "-inf"}) {
    auto odd = load_prices(std::string("[prices.\"m\"]\ninput = 1\noutput = ") + value + "\n");
    ASSERT_FALSE(odd) << value;
    EXPECT_NE(odd.error().message.find("\"m\".output must be a non-negative finite number"), std::string::npos)
        << odd.error().message;
  }
  auto text = load_prices("[prices.\"m\"]\ninput = \"cheap\"\noutput = 1\n");
  EXPECT_FALSE(text);
  auto unknown = load_prices("[prices.\"m\"]\ninput = 1\noutput = 1\ncache = 1\n");
  ASSERT_FALSE(unknown);
  EXPECT_NE(unknown.error().message.find("unknown key \"cache\""), std::string::npos);
  EXPECT_FALSE(load_prices("prices = 3\n"));
  EXPECT_TRUE(load_prices(""));
}

TEST(pricing, the_shipped_price_file_matches_the_compiled_in_defaults) {
  const auto file = std::filesystem::path(test_paths::source_dir()) / "config" / "prices.toml";
  std::ifstream in(file);
  ASSERT_TRUE(in) << file;
  std::stringstream ss;
  ss << in.rdbuf();
  auto shipped = load_prices(ss.str(), price_table());
  ASSERT_TRUE(shipped) << shipped.error().message;
  EXPECT_EQ(shipped->entries(), price_table::defaults().entries());
}

}  // namespace
}  // namespace tether::runtime
