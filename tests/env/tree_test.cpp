// The workspace digest: the same tree, the same digest, whatever the order it
// was made in; any change of content, mode, name or link, another digest.
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "support/files.h"

#include "env/errors.h"
#include "env/tree.h"

namespace tether::env {
namespace {

namespace fs = std::filesystem;
using test::put;
using test::slurp;
using test::temp_dir;

TEST(TreeDigest, TheSameTreeMadeInAnotherOrderHasTheSameDigest) {
  temp_dir a, b;
  put(a.path / "x/1.txt", "one");
  put(a.path / "y.txt", "why");
  fs::create_symlink("x/1.txt", a.path / "link");
  put(b.path / "y.txt", "why");
  fs::create_symlink("x/1.txt", b.path / "link");
  put(b.path / "x/1.txt", "one");
  auto ra = describe_tree(a.path);
  auto rb = describe_tree(b.path);
  ASSERT_TRUE(ra && rb);
  EXPECT_EQ(ra->sha256, rb->sha256);
  EXPECT_EQ(ra->bytes, 6U);
  EXPECT_EQ(ra->entries, 4U);  // x, x/1.txt, y.txt, link
}

TEST(TreeDigest, ContentModeNameAndLinkTargetEachChangeIt) {
  temp_dir a;
  put(a.path / "f", "1");
  fs::create_symlink("f", a.path / "l");
  const auto base = describe_tree(a.path)->sha256;
  put(a.path / "f", "2");
  const auto content = describe_tree(a.path)->sha256;
  EXPECT_NE(content, base);
  ::chmod((a.path / "f").c_str(), 0755);
  const auto mode = describe_tree(a.path)->sha256;
  EXPECT_NE(mode, content);
  fs::remove(a.path / "l");
  fs::create_symlink("g", a.path / "l");
  const auto link = describe_tree(a.path)->sha256;
  EXPECT_NE(link, mode);
  fs::rename(a.path / "f", a.path / "h");
  EXPECT_NE(describe_tree(a.path)->sha256, link);
}

TEST(TreeDigest, NotADirectoryIsAnError) {
  temp_dir a;
  put(a.path / "f", "x");
  EXPECT_EQ(describe_tree(a.path / "f").error(), env_errc::invalid);
  EXPECT_EQ(describe_tree(a.path / "none").error(), env_errc::invalid);
}

}  // namespace
}  // namespace tether::env
