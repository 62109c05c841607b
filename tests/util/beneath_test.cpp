#include "util/beneath.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace tether::beneath {
namespace {

namespace fs = std::filesystem;

class beneath_test : public testing::Test {
 protected:
  beneath_test() {
    std::random_device rd;
    dir_ = fs::temp_directory_path() / ("tether-beneath-" + std::to_string(rd()));
    root_path_ = dir_ / "root";
    fs::create_directories(root_path_ / "sub");
    put(root_path_ / "sub" / "a.txt", "inside");
    put(dir_ / "secret", "SECRET");
    fs::create_directories(dir_ / "elsewhere");
    root_ = std::move(open_root(root_path_).value());
  }
  ~beneath_test() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  static void put(const fs::path& p, const std::string& text) { std::ofstream(p) << text; }
  static std::string get(const fs::path& p) {
    std::ifstream in(p);
    return {std::istreambuf_iterator<char>(in), {}};
  }
  result<std::string> read(std::string_view rel) {
    auto fd = open_regular(root_.get(), rel);
    if (!fd) return fd.error();
    return read_all(fd->get(), 1U << 20U, rel);
  }

  fs::path dir_;
  fs::path root_path_;
  unique_fd root_;
};

TEST_F(beneath_test, plain_paths_read_and_write_beneath_the_root) {
  EXPECT_EQ(read("sub/a.txt").value(), "inside");
  EXPECT_EQ(read("./sub//a.txt").value(), "inside");
  ASSERT_TRUE(write_file(root_.get(), "new/deep/b.txt", "made", 0644));
  EXPECT_EQ(get(root_path_ / "new" / "deep" / "b.txt"), "made");
  struct stat st {};
  ASSERT_EQ(::stat((root_path_ / "new" / "deep" / "b.txt").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777U, 0644U);
  ASSERT_EQ(::stat((root_path_ / "new" / "deep").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777U, 0755U);
  ::chmod((root_path_ / "sub" / "a.txt").c_str(), 0600);
  ASSERT_TRUE(write_file(root_.get(), "sub/a.txt", "changed", 0644));
  EXPECT_EQ(get(root_path_ / "sub" / "a.txt"), "changed");
  ASSERT_EQ(::stat((root_path_ / "sub" / "a.txt").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777U, 0600U) << "an existing file keeps its mode";
}

TEST_F(beneath_test, escapes_are_refused_before_any_system_call) {
  for (const std::string& bad : std::vector<std::string>{"../secret", "sub/../../secret", "/etc/passwd", std::string("a\0b", 3)}) {
    auto r = read(bad);
    ASSERT_FALSE(r) << bad;
    EXPECT_EQ(r.error().code, util_errc::invalid_argument) << bad;
    EXPECT_FALSE(write_file(root_.get(), bad, "x", 0644)) << bad;
  }
  EXPECT_EQ(get(dir_ / "secret"), "SECRET");
}

TEST_F(beneath_test, no_symbolic_link_is_followed_anywhere_on_the_path) {
  fs::create_symlink(dir_ / "secret", root_path_ / "link");
  fs::create_directory_symlink(dir_ / "elsewhere", root_path_ / "dirlink");
  fs::create_symlink("sub/a.txt", root_path_ / "inner");  // even one that stays inside
  for (const std::string p : {"link", "dirlink/x", "inner"}) {
    auto r = read(p);
    ASSERT_FALSE(r) << p << " read " << r.value();
    EXPECT_NE(r.error().message.find("symbolic link"), std::string::npos) << r.error().message;
  }
  EXPECT_FALSE(write_file(root_.get(), "dirlink/x", "x", 0644));
  EXPECT_FALSE(fs::exists(dir_ / "elsewhere" / "x"));
  EXPECT_FALSE(open_dir(root_.get(), "dirlink/made", missing_dirs::make));
  EXPECT_FALSE(fs::exists(dir_ / "elsewhere" / "made"));
  // A link at the final name of a write is replaced, never written through.
  ASSERT_TRUE(write_file(root_.get(), "link", "mine", 0644));
  EXPECT_EQ(get(dir_ / "secret"), "SECRET");
  EXPECT_FALSE(fs::is_symlink(root_path_ / "link"));
}

TEST_F(beneath_test, a_fifo_is_refused_at_once_for_reading_and_writing) {
  ASSERT_EQ(::mkfifo((root_path_ / "pipe").c_str(), 0600), 0);
  auto r = read("pipe");  // an open without O_NONBLOCK would wait for a writer forever
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("not a regular file"), std::string::npos) << r.error().message;
  auto w = write_file(root_.get(), "pipe", "x", 0644);
  ASSERT_FALSE(w);
  EXPECT_NE(w.error().message.find("not a regular file"), std::string::npos) << w.error().message;
  struct stat st {};
  ASSERT_EQ(::lstat((root_path_ / "pipe").c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode)) << "the FIFO was left as it was";
  EXPECT_FALSE(read("sub"));
}

TEST_F(beneath_test, a_file_over_the_limit_is_refused) {
  put(root_path_ / "big", std::string(2000, 'x'));
  auto fd = open_regular(root_.get(), "big");
  ASSERT_TRUE(fd);
  auto r = read_all(fd->get(), 1000, "big");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, util_errc::too_large);
}

}  // namespace
}  // namespace tether::beneath
