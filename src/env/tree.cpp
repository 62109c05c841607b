#include "env/tree.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <system_error>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "process/run_to_end.h"
#include "util/random.h"
#include "util/sha256.h"

namespace tether::env {

namespace fs = std::filesystem;

namespace {

result<std::string> content_digest(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) return error(env_errc::failed, "cannot read " + p.string());
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) return error(env_errc::failed, "cannot read " + p.string());
  return sha256_hex(bytes);
}

}  // namespace

result<confinement> confine_tree(const fs::path& root) {
  std::error_code ec;
  std::vector<fs::path> entries{root};
  for (fs::recursive_directory_iterator it(root, fs::directory_options::none, ec), end; !ec && it != end;
       it.increment(ec)) {
    entries.push_back(it->path());
  }
  if (ec) return error(env_errc::failed, "cannot list " + root.string() + ": " + ec.message());
  confinement c;
  for (const auto& p : entries) {
    struct stat st {};
    if (::lstat(p.c_str(), &st) != 0) return error(env_errc::failed, "cannot stat " + p.string());
    if (S_ISLNK(st.st_mode)) continue;
    if (!S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode)) {
      if (::unlink(p.c_str()) != 0) return error(env_errc::failed, "cannot remove " + p.string());
      ++c.dropped;
    } else if ((st.st_mode & (S_ISUID | S_ISGID | S_ISVTX)) != 0) {
      // Not a link (lstat above), in a directory no one else can reach.
      if (::chmod(p.c_str(), st.st_mode & 0777) != 0) return error(env_errc::failed, "cannot chmod " + p.string());
      ++c.cleared;
    }
  }
  return c;
}

result<tree_report> receive_tree(const fs::path& local, const std::function<result<void>(const fs::path&)>& fetch) {
  const fs::path box = local.parent_path() / ("." + local.filename().string() + ".pull-" + random_hex(4));
  if (::mkdir(box.c_str(), 0700) != 0) {
    return error(env_errc::failed, "cannot make " + box.string() + ": " + std::system_category().message(errno));
  }
  struct removed_at_end {
    fs::path p;
    ~removed_at_end() {
      std::error_code ec;
      fs::remove_all(p, ec);
    }
  } guard{box};
  const fs::path archive = box / "tree.tar";
  const fs::path tree = box / "tree";
  if (::mkdir(tree.c_str(), 0700) != 0) return error(env_errc::failed, "cannot make " + tree.string());
  TETHER_TRY(fetch(archive));
  auto unpacked = process::run_to_end(
      {.argv = {"/usr/bin/tar", "-xf", archive.string(), "--no-same-owner", "-C", tree.string()},
       .env = {"PATH=/usr/bin:/bin", "LC_ALL=C"}},
      {.limit = std::chrono::minutes(10)});
  if (!unpacked || unpacked->timed_out || !unpacked->status.success()) {
    return error(env_errc::failed, "unpacking the received workspace failed" +
                                       (unpacked ? ": " + unpacked->output.substr(0, 500) : std::string()));
  }
  std::error_code ec;
  fs::remove(archive, ec);
  auto confined = confine_tree(tree);
  if (!confined) return confined.error();
  if (fs::exists(local, ec)) {
    if (::renameat2(AT_FDCWD, tree.c_str(), AT_FDCWD, local.c_str(), RENAME_EXCHANGE) != 0) {
      return error(env_errc::failed, "cannot swap in the received workspace: " + std::system_category().message(errno));
    }
  } else if (::rename(tree.c_str(), local.c_str()) != 0) {
    return error(env_errc::failed, "cannot move in the received workspace: " + std::system_category().message(errno));
  }
  auto report = describe_tree(local);  // the old tree, now in the box, goes with it
  if (!report) return report;
  report->dropped = confined->dropped;
  report->cleared = confined->cleared;
  return report;
}

result<std::string> stamp_tree(const fs::path& root) {
  std::error_code ec;
  if (!fs::is_directory(root, ec)) return error(env_errc::invalid, root.string() + " is not a directory");
  std::vector<std::string> lines;
  for (fs::recursive_directory_iterator it(root, fs::directory_options::none, ec), end; !ec && it != end;
       it.increment(ec)) {
    struct stat st {};
    if (::lstat(it->path().c_str(), &st) != 0) return error(env_errc::failed, "cannot stat " + it->path().string());
    std::string line = it->path().lexically_relative(root).generic_string();
    line += '\0';
    line += std::to_string(st.st_mode) + ' ' + std::to_string(st.st_ino) + ' ' + std::to_string(st.st_size) + ' ' +
            std::to_string(st.st_mtim.tv_sec) + '.' + std::to_string(st.st_mtim.tv_nsec);
    if (S_ISLNK(st.st_mode)) line += ' ' + fs::read_symlink(it->path(), ec).string();
    lines.push_back(std::move(line));
  }
  if (ec) return error(env_errc::failed, "cannot list " + root.string() + ": " + ec.message());
  std::sort(lines.begin(), lines.end());
  std::string all;
  for (const auto& l : lines) {
    all += l;
    all += '\n';
  }
  return sha256_hex(all);
}

result<tree_report> describe_tree(const fs::path& root) {
  std::error_code ec;
  if (!fs::is_directory(root, ec)) return error(env_errc::invalid, root.string() + " is not a directory");
  std::vector<fs::path> entries;
  for (fs::recursive_directory_iterator it(root, fs::directory_options::none, ec), end; !ec && it != end;
       it.increment(ec)) {
    entries.push_back(it->path());
  }
  if (ec) return error(env_errc::failed, "cannot list " + root.string() + ": " + ec.message());
  std::vector<std::string> rels;
  rels.reserve(entries.size());
  for (const auto& p : entries) rels.push_back(p.lexically_relative(root).generic_string());
  std::sort(rels.begin(), rels.end());

  tree_report report;
  std::string manifest;
  for (const auto& rel : rels) {
    const fs::path p = root / rel;
    struct stat st {};
    if (::lstat(p.c_str(), &st) != 0) return error(env_errc::failed, "cannot stat " + p.string());
    std::string line = rel;
    line += '\0';
    line += std::to_string(st.st_mode & 07777);
    if (S_ISREG(st.st_mode)) {
      auto digest = content_digest(p);
      if (!digest) return digest.error();
      line += " f " + std::to_string(st.st_size) + ' ' + *digest;
      report.bytes += static_cast<std::uint64_t>(st.st_size);
    } else if (S_ISDIR(st.st_mode)) {
      line += " d";
    } else if (S_ISLNK(st.st_mode)) {
      line += " l " + sha256_hex(fs::read_symlink(p, ec).string());
    } else {
      line += " o";
    }
    manifest += line;
    manifest += '\n';
    ++report.entries;
  }
  report.sha256 = sha256_hex(manifest);
  return report;
}

}  // namespace tether::env
