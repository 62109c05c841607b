#include "node/data_dir.h"

#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <random>

#include <gtest/gtest.h>

namespace tether::node {
namespace {

namespace fs = std::filesystem;

class data_dir_test : public ::testing::Test {
 protected:
  data_dir_test() {
    std::random_device rd;
    root_ = fs::temp_directory_path() / ("tether-datadir-" + std::to_string(rd()) + std::to_string(rd()));
  }
  ~data_dir_test() override {
    std::error_code ec;
    fs::remove_all(root_, ec);
  }
  static mode_t mode_of(const fs::path& p) {
    struct stat st {};
    ::stat(p.c_str(), &st);
    return st.st_mode & 07777U;
  }
  fs::path root_;
  std::vector<std::string> warnings_;
  std::function<void(const std::string&)> warn_ = [this](const std::string& w) { warnings_.push_back(w); };
};

TEST_F(data_dir_test, a_second_claim_on_a_held_directory_is_refused_naming_the_directory_and_the_holder) {
  auto first = claim_data_dir(root_.string(), warn_);
  ASSERT_TRUE(first) << first.error().describe();
  auto second = claim_data_dir(root_.string(), warn_);
  ASSERT_FALSE(second);
  EXPECT_EQ(second.error(), node_errc::data_dir_locked);
  EXPECT_NE(second.error().message.find(first->path().string()), std::string::npos) << second.error().message;
  EXPECT_NE(second.error().message.find("pid " + std::to_string(::getpid())), std::string::npos)
      << second.error().message;
}

TEST_F(data_dir_test, the_lock_is_released_with_its_holder_and_a_stale_lock_file_blocks_nothing) {
  { auto first = claim_data_dir(root_.string(), warn_); ASSERT_TRUE(first); }
  ASSERT_TRUE(fs::exists(root_ / "lock"));  // left behind, as after a SIGKILL
  auto again = claim_data_dir(root_.string(), warn_);
  EXPECT_TRUE(again) << again.error().describe();
}

TEST_F(data_dir_test, a_moved_claim_keeps_the_lock) {
  auto first = claim_data_dir(root_.string(), warn_);
  ASSERT_TRUE(first);
  data_dir moved = std::move(first).value();
  EXPECT_FALSE(claim_data_dir(root_.string(), warn_));
}

TEST_F(data_dir_test, a_loose_directory_and_its_files_are_made_private_with_a_warning_each) {
  fs::create_directories(root_ / "workspaces");
  std::ofstream(root_ / "tether.db") << "x";
  std::ofstream(root_ / "token") << "t";
  ::chmod(root_.c_str(), 0755);
  ::chmod((root_ / "workspaces").c_str(), 0755);
  ::chmod((root_ / "tether.db").c_str(), 0644);
  ::chmod((root_ / "token").c_str(), 0600);  // already private: no warning
  auto d = claim_data_dir(root_.string(), warn_);
  ASSERT_TRUE(d) << d.error().describe();
  EXPECT_EQ(mode_of(root_), 0700U);
  EXPECT_EQ(mode_of(root_ / "workspaces"), 0700U);
  EXPECT_EQ(mode_of(root_ / "tether.db"), 0600U);
  EXPECT_EQ(mode_of(root_ / "token"), 0600U);
  EXPECT_EQ(mode_of(root_ / "lock") & 077U, 0U);
  EXPECT_EQ(warnings_.size(), 3U);
  for (const auto& w : warnings_) EXPECT_NE(w.find("readable by others"), std::string::npos) << w;
}

TEST_F(data_dir_test, a_path_that_cannot_be_a_directory_is_unusable_not_locked) {
  fs::create_directories(root_);
  std::ofstream(root_ / "file") << "x";
  auto d = claim_data_dir((root_ / "file").string(), warn_);
  ASSERT_FALSE(d);
  EXPECT_EQ(d.error(), node_errc::data_dir_unusable);
}

}  // namespace
}  // namespace tether::node
