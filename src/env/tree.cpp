#include "env/tree.h"

#include <fcntl.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <system_error>

#include <algorithm>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

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

result<fs::path> receiving_dir(const fs::path& local) {
  std::error_code ec;
  const fs::path tmp = local.parent_path() / ("." + local.filename().string() + ".pull-" + random_hex(4));
  if (!fs::create_directory(tmp, ec)) return error(env_errc::failed, "cannot make " + tmp.string() + ": " + ec.message());
  return tmp;
}

result<void> swap_in(const fs::path& received, const fs::path& local) {
  std::error_code ec;
  if (fs::exists(local, ec)) {
    if (::renameat2(AT_FDCWD, received.c_str(), AT_FDCWD, local.c_str(), RENAME_EXCHANGE) != 0) {
      const int e = errno;
      fs::remove_all(received, ec);
      return error(env_errc::failed, "cannot swap in the received workspace: " + std::system_category().message(e));
    }
  } else if (::rename(received.c_str(), local.c_str()) != 0) {
    const int e = errno;
    fs::remove_all(received, ec);
    return error(env_errc::failed, "cannot move in the received workspace: " + std::system_category().message(e));
  }
  fs::remove_all(received, ec);  // the old tree, after the swap
  return {};
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
