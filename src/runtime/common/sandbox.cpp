#include "runtime/common/sandbox.h"

#include <algorithm>

namespace tether::runtime {

namespace fs = std::filesystem;

namespace {

constexpr const char* base_names[] = {"PATH", "LANG", "LANGUAGE", "TERM", "TZ", "USER", "LOGNAME"};

bool named(std::string_view entry, const std::vector<std::string>& names) {
  const auto eq = entry.find('=');
  const auto name = entry.substr(0, eq);
  return std::find(names.begin(), names.end(), name) != names.end();
}

// The store's credentials (libpq's PG* variables, DATABASE_URL) reach no
// child, whatever a profile passes through.
bool store_credential(std::string_view entry) {
  return entry.starts_with("PG") || entry.starts_with("DATABASE_URL=");
}

}  // namespace

std::vector<std::string> tool_environment(const sandbox_policy& policy, const fs::path& home, char** environ_entries) {
  std::vector<std::string> withheld = policy.withheld;
  withheld.emplace_back("TETHER_TOKEN");
  withheld.emplace_back("HOME");
  std::vector<std::string> allowed(std::begin(base_names), std::end(base_names));
  allowed.insert(allowed.end(), policy.env.begin(), policy.env.end());
  std::vector<std::string> out;
  bool has_path = false;
  for (char** e = environ_entries; e != nullptr && *e != nullptr; ++e) {
    const std::string_view entry(*e);
    const auto eq = entry.find('=');
    if (eq == std::string_view::npos || eq == 0) continue;
    if (named(entry, withheld) || store_credential(entry)) continue;
    if (!named(entry, allowed) && !entry.starts_with("LC_")) continue;
    if (std::find_if(out.begin(), out.end(), [&](const std::string& o) {
          return o.compare(0, eq + 1, entry.substr(0, eq + 1)) == 0;
        }) != out.end())
      continue;  // a duplicate name: the first wins, as getenv does
    has_path = has_path || entry.starts_with("PATH=");
    out.emplace_back(entry);
  }
  if (!has_path) out.emplace_back("PATH=/usr/local/bin:/usr/bin:/bin");
  out.push_back("HOME=" + home.string());
  return out;
}

process::sandbox sandbox_for(const sandbox_policy& policy, const fs::path& bwrap, const fs::path& workspace) {
  process::sandbox box;
  box.mode = policy.mode;
  box.network = policy.network;
  box.bwrap = bwrap;
  box.root = workspace;
  box.hidden = policy.hidden;
  box.masked = policy.masked;
  return box;
}

std::vector<std::string> bwrap_argv(const sandbox_policy& policy, const fs::path& bwrap, const fs::path& workspace,
                                    const std::vector<std::string>& command) {
  return process::sandbox_argv(sandbox_for(policy, bwrap, workspace), command);
}

}  // namespace tether::runtime
