// The workspace digest: the same tree, the same digest, whatever the order it
// was made in; any change of content, mode, name or link, another digest.
// Receiving a tree: what a hostile archive holds (device nodes, set-ID bits,
// names and links that reach outside) never lands outside or as it came.
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "support/files.h"

#include "env/errors.h"
#include "env/tree.h"
#include "process/run_to_end.h"

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

// The stamp reads no content: it changes with what a write, a rename, a
// removal, a chmod or a new link does to an entry, and stays while nothing
// is touched.
TEST(TreeStamp, StaysWhileNothingChangesAndMovesWithEveryChange) {
  temp_dir a;
  put(a.path / "d/f.txt", "one");
  fs::create_symlink("d/f.txt", a.path / "l");
  auto first = stamp_tree(a.path);
  ASSERT_TRUE(first) << first.error().describe();
  EXPECT_EQ(*stamp_tree(a.path), *first);
  std::string last = *first;
  const auto moved = [&](const char* what) {
    auto now = stamp_tree(a.path);
    ASSERT_TRUE(now) << now.error().describe();
    EXPECT_NE(*now, last) << what;
    last = *now;
  };
  // The same size, written new and renamed in (as the file tools write).
  put(a.path / "d/.f.tmp", "two");
  fs::rename(a.path / "d/.f.tmp", a.path / "d/f.txt");
  moved("a file replaced by one of the same size");
  put(a.path / "d/g.txt", "");
  moved("a file added");
  fs::rename(a.path / "d/g.txt", a.path / "d/h.txt");
  moved("a file renamed");
  fs::permissions(a.path / "d/h.txt", fs::perms::owner_all);
  moved("a mode changed");
  fs::remove(a.path / "l");
  fs::create_symlink("d/h.txt", a.path / "l");
  moved("a link pointed elsewhere");
  fs::remove(a.path / "d/h.txt");
  moved("a file removed");
  EXPECT_FALSE(stamp_tree(a.path / "nowhere"));
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

// A tar archive written entry by entry (ustar headers), to say what a
// hostile side could send that `tar -c` of a real tree never would.
class crafted_tar {
 public:
  void file(const std::string& name, const std::string& body, unsigned mode = 0644) { add(name, '0', mode, body, ""); }
  void symlink(const std::string& name, const std::string& target) { add(name, '2', 0777, "", target); }
  void hardlink(const std::string& name, const std::string& target) { add(name, '1', 0644, "", target); }
  void dir(const std::string& name, unsigned mode) { add(name, '5', mode, "", ""); }
  [[nodiscard]] std::string bytes() const { return out_ + std::string(1024, '\0'); }

 private:
  void add(const std::string& name, char type, unsigned mode, const std::string& body, const std::string& link) {
    std::string h(512, '\0');
    auto octal = [&](std::size_t at, std::size_t width, unsigned long long v) {
      std::snprintf(h.data() + at, width, "%0*llo", static_cast<int>(width - 1), v);
    };
    h.replace(0, name.size(), name);
    octal(100, 8, mode);
    octal(108, 8, 0);
    octal(116, 8, 0);
    octal(124, 12, body.size());
    octal(136, 12, 1700000000);
    h[156] = type;
    h.replace(157, link.size(), link);
    h.replace(257, 6, std::string("ustar\0", 6));
    h.replace(263, 2, "00");
    h.replace(148, 8, "        ");
    unsigned sum = 0;
    for (unsigned char c : h) sum += c;
    std::snprintf(h.data() + 148, 8, "%06o", sum);
    h[155] = ' ';
    out_ += h + body + std::string((512 - body.size() % 512) % 512, '\0');
  }
  std::string out_;
};

result<tree_report> receive_bytes(const fs::path& local, const std::string& tar) {
  return receive_tree(local, [&](const fs::path& archive) -> result<void> {
    put(archive, tar);
    return {};
  });
}

std::size_t entries_in(const fs::path& dir) {
  return static_cast<std::size_t>(std::distance(fs::directory_iterator(dir), fs::directory_iterator()));
}

mode_t mode_of(const fs::path& p) {
  struct stat st {};
  EXPECT_EQ(::lstat(p.c_str(), &st), 0) << p;
  return st.st_mode;
}

// What `tar -c` of a real tree made by root brings: a device node, a FIFO,
// set-user-ID, set-group-ID and sticky bits, links out of the tree.
TEST(ReceivedTree, NoDeviceNodeFifoOrSetIdBitArrivesAndLinksStayLinks) {
  temp_dir src, host;
  put(src.path / "tool", "#!/bin/sh\n");
  ASSERT_EQ(::chmod((src.path / "tool").c_str(), 04755), 0);
  fs::create_directories(src.path / "shared");
  ASSERT_EQ(::chmod((src.path / "shared").c_str(), 02775), 0);
  fs::create_directories(src.path / "scratch");
  ASSERT_EQ(::chmod((src.path / "scratch").c_str(), 01777), 0);
  ASSERT_EQ(::mknod((src.path / "disk").c_str(), S_IFBLK | 0666, makedev(7, 0)), 0);
  ASSERT_EQ(::mknod((src.path / "null").c_str(), S_IFCHR | 0666, makedev(1, 3)), 0);
  ASSERT_EQ(::mkfifo((src.path / "pipe").c_str(), 0644), 0);
  fs::create_symlink("/etc/passwd", src.path / "passwd");
  fs::create_symlink("../../..", src.path / "up");
  fs::create_symlink("tool", src.path / "tool-link");
  auto packed = process::run_to_end(
      {.argv = {"/usr/bin/tar", "-cf", (host.path / "in.tar").string(), "-C", src.path.string(), "."}});
  ASSERT_TRUE(packed && packed->status.success()) << (packed ? packed->output : packed.error().describe());
  const auto tar = slurp(host.path / "in.tar");
  fs::remove(host.path / "in.tar");

  const fs::path ws = host.path / "workspace";
  put(ws / "old.txt", "old\n");
  auto got = receive_bytes(ws, tar);
  ASSERT_TRUE(got) << got.error().describe();
  EXPECT_EQ(got->dropped, 3U);  // disk, null, pipe
  // scratch's sticky bit at least (tar itself may drop set-ID bits it cannot pair with the owner).
  EXPECT_GE(got->cleared, 1U);
  EXPECT_FALSE(fs::exists(ws / "old.txt"));
  EXPECT_FALSE(fs::exists(fs::symlink_status(ws / "disk")));
  EXPECT_FALSE(fs::exists(fs::symlink_status(ws / "null")));
  EXPECT_FALSE(fs::exists(fs::symlink_status(ws / "pipe")));
  EXPECT_EQ(mode_of(ws / "tool") & 07777, 0755U);
  EXPECT_EQ(mode_of(ws / "shared") & 07777, 0775U);
  EXPECT_EQ(mode_of(ws / "scratch") & 07777, 0777U);
  EXPECT_EQ(fs::read_symlink(ws / "passwd"), "/etc/passwd");
  EXPECT_EQ(fs::read_symlink(ws / "up"), "../../..");
  EXPECT_EQ(fs::read_symlink(ws / "tool-link"), "tool");
  EXPECT_EQ(slurp(ws / "tool"), "#!/bin/sh\n");
  EXPECT_EQ(got->sha256, describe_tree(ws)->sha256);
  EXPECT_EQ(entries_in(host.path), 1U);  // nothing left beside the workspace
}

TEST(ConfineTree, EveryDeviceFifoAndSetIdBitIsCountedAndGoneLinksStay) {
  temp_dir t;
  put(t.path / "a/tool", "x");
  ASSERT_EQ(::chmod((t.path / "a/tool").c_str(), 06755), 0);
  ASSERT_EQ(::chmod((t.path / "a").c_str(), 02755), 0);
  fs::create_directories(t.path / "tmp");
  ASSERT_EQ(::chmod((t.path / "tmp").c_str(), 01777), 0);
  ASSERT_EQ(::mknod((t.path / "a/null").c_str(), S_IFCHR | 0666, makedev(1, 3)), 0);
  ASSERT_EQ(::mkfifo((t.path / "pipe").c_str(), 0600), 0);
  fs::create_symlink("/etc/shadow", t.path / "a/out");
  ASSERT_EQ(::chmod(t.path.c_str(), 01700), 0);  // the root itself too
  auto c = confine_tree(t.path);
  ASSERT_TRUE(c) << c.error().describe();
  EXPECT_EQ(c->dropped, 2U);
  EXPECT_EQ(c->cleared, 4U);
  EXPECT_EQ(mode_of(t.path / "a/tool") & 07777, 0755U);
  EXPECT_EQ(mode_of(t.path / "a") & 07777, 0755U);
  EXPECT_EQ(mode_of(t.path / "tmp") & 07777, 0777U);
  EXPECT_EQ(mode_of(t.path) & 07777, 0700U);
  EXPECT_FALSE(fs::exists(fs::symlink_status(t.path / "a/null")));
  EXPECT_FALSE(fs::exists(fs::symlink_status(t.path / "pipe")));
  EXPECT_EQ(fs::read_symlink(t.path / "a/out"), "/etc/shadow");
}

TEST(ReceivedTree, AnAbsoluteNameLandsInside) {
  temp_dir host;
  crafted_tar t;
  t.file("/absolute.txt", "rooted\n");
  const fs::path ws = host.path / "workspace";
  auto got = receive_bytes(ws, t.bytes());
  ASSERT_TRUE(got) << got.error().describe();
  EXPECT_EQ(slurp(ws / "absolute.txt"), "rooted\n");
  EXPECT_EQ(entries_in(host.path), 1U);
  EXPECT_FALSE(fs::exists("/absolute.txt"));
}

TEST(ReceivedTree, ANameThatClimbsOutFailsThePullAndTheHostCopyStays) {
  temp_dir host;
  crafted_tar t;
  t.file("kept.txt", "fine\n");
  t.file("../../escaped.txt", "climbed\n");
  const fs::path ws = host.path / "workspace";
  put(ws / "mine.txt", "mine\n");
  const auto before = describe_tree(ws)->sha256;
  auto got = receive_bytes(ws, t.bytes());
  ASSERT_FALSE(got);
  EXPECT_EQ(got.error(), env_errc::failed);
  EXPECT_NE(got.error().message.find("'..'"), std::string::npos) << got.error().message;
  EXPECT_EQ(describe_tree(ws)->sha256, before);
  EXPECT_EQ(entries_in(host.path), 1U);
  EXPECT_FALSE(fs::exists(host.path.parent_path() / "escaped.txt"));
}

TEST(ReceivedTree, AFileThroughALinkItMadeIsRefusedAndTheHostCopyStays) {
  temp_dir host, outside;
  crafted_tar t;
  t.symlink("a", outside.path.string());
  t.file("a/through.txt", "planted\n");
  const fs::path ws = host.path / "workspace";
  put(ws / "mine.txt", "mine\n");
  const auto before = describe_tree(ws)->sha256;
  auto got = receive_bytes(ws, t.bytes());
  ASSERT_FALSE(got);
  EXPECT_EQ(got.error(), env_errc::failed) << got.error().describe();
  EXPECT_EQ(entries_in(outside.path), 0U);
  EXPECT_EQ(describe_tree(ws)->sha256, before);
  EXPECT_EQ(entries_in(host.path), 1U);
}

TEST(ReceivedTree, AHardLinkToAFileOutsideIsNotMade) {
  temp_dir host, outside;
  put(outside.path / "secret", "keep\n");
  crafted_tar t;
  t.hardlink("h", outside.path.string() + "/secret");
  t.hardlink("g", "../../../../../../../../.." + outside.path.string() + "/secret");
  const fs::path ws = host.path / "workspace";
  put(ws / "mine.txt", "mine\n");
  auto got = receive_bytes(ws, t.bytes());
  struct stat st {};
  ASSERT_EQ(::stat((outside.path / "secret").c_str(), &st), 0);
  EXPECT_EQ(st.st_nlink, 1U);  // no second name for it anywhere
  EXPECT_FALSE(got);
  EXPECT_EQ(slurp(ws / "mine.txt"), "mine\n");
  EXPECT_EQ(entries_in(host.path), 1U);
}

TEST(ReceivedTree, WhatFetchFailsWithIsTheResultAndNothingIsLeft) {
  temp_dir host;
  const fs::path ws = host.path / "workspace";
  put(ws / "mine.txt", "mine\n");
  auto got = receive_tree(ws, [](const fs::path&) -> result<void> { return error(env_errc::lost, "gone"); });
  ASSERT_FALSE(got);
  EXPECT_EQ(got.error(), env_errc::lost);
  EXPECT_EQ(slurp(ws / "mine.txt"), "mine\n");
  EXPECT_EQ(entries_in(host.path), 1U);
  auto garbage = receive_bytes(ws, "not a tar at all");
  ASSERT_FALSE(garbage);
  EXPECT_EQ(garbage.error(), env_errc::failed);
  EXPECT_EQ(entries_in(host.path), 1U);
}

}  // namespace
}  // namespace tether::env
