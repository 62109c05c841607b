// How a shortened session id, or `last`, is expanded (cli/session_ref.h).
#include "cli/session_ref.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

namespace tether::cli {
namespace {

// A lister over fixed ids (most recent first) that records what it was asked.
struct fake_sessions {
  std::vector<std::string> ids;
  std::vector<std::string> asked;

  session_lister lister() {
    return [this](const std::string& prefix, std::size_t limit) -> result<std::vector<std::string>> {
      asked.push_back(prefix);
      std::vector<std::string> out;
      for (const auto& id : ids)
        if (id.starts_with(prefix) && out.size() < limit) out.push_back(id);
      return out;
    };
  }
};

TEST(session_ref, a_unique_prefix_in_any_case_with_or_without_ses_names_the_session) {
  fake_sessions f{{"ses_01M8X6AAAA", "ses_01M9BBBB"}, {}};
  for (const std::string arg : {"01m8", "01M8X6", "ses_01m8x6aa", "ses_01M8X6AAAA"}) {
    auto id = resolve_session_with(arg, f.lister());
    ASSERT_TRUE(id) << arg << ": " << id.error().message;
    EXPECT_EQ(*id, "ses_01M8X6AAAA") << arg;
  }
}

TEST(session_ref, last_is_the_most_recently_active) {
  fake_sessions f{{"ses_B", "ses_A"}, {}};
  auto id = resolve_session_with("last", f.lister());
  ASSERT_TRUE(id);
  EXPECT_EQ(*id, "ses_B");
  fake_sessions none;
  auto empty = resolve_session_with("last", none.lister());
  ASSERT_FALSE(empty);
  EXPECT_NE(empty.error().message.find("no sessions yet"), std::string::npos) << empty.error().message;
}

TEST(session_ref, an_ambiguous_prefix_is_refused_naming_the_matches) {
  fake_sessions f{{"ses_01AB", "ses_01AC"}, {}};
  auto id = resolve_session_with("01A", f.lister());
  ASSERT_FALSE(id);
  EXPECT_NE(id.error().message.find("ambiguous"), std::string::npos) << id.error().message;
  EXPECT_NE(id.error().message.find("ses_01AB"), std::string::npos);
  EXPECT_NE(id.error().message.find("ses_01AC"), std::string::npos);
}

TEST(session_ref, an_id_that_is_whole_wins_over_longer_ones_it_starts) {
  fake_sessions f{{"ses_work-2", "ses_work"}, {}};
  auto id = resolve_session_with("ses_work", f.lister());
  ASSERT_TRUE(id) << id.error().message;
  EXPECT_EQ(*id, "ses_work");
}

TEST(session_ref, a_chosen_lower_case_id_is_found_as_given_before_upper_case) {
  fake_sessions f{{"ses_mine"}, {}};
  auto id = resolve_session_with("mi", f.lister());
  ASSERT_TRUE(id) << id.error().message;
  EXPECT_EQ(*id, "ses_mine");
  EXPECT_EQ(f.asked, std::vector<std::string>{"ses_mi"}) << "found on the first try";
}

TEST(session_ref, text_that_cannot_be_an_id_is_refused_without_a_lookup) {
  fake_sessions f{{"ses_A"}, {}};
  for (const std::string& arg : std::vector<std::string>{"", "ses_", "a/b", "../x", "a b", std::string(70, 'A')}) {
    auto id = resolve_session_with(arg, f.lister());
    ASSERT_FALSE(id) << arg;
    EXPECT_NE(id.error().message.find("is not a session id"), std::string::npos) << id.error().message;
  }
  EXPECT_TRUE(f.asked.empty());
  auto missing = resolve_session_with("ZZ", f.lister());
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().message.find("names no session"), std::string::npos) << missing.error().message;
}

}  // namespace
}  // namespace tether::cli
