#include "api/workspace.h"

#include <algorithm>
#include <optional>
#include <utility>

#include "api/errors.h"

namespace tether::api {

namespace fs = std::filesystem;

namespace {

bool inside(const fs::path& p, const fs::path& root) {
  const auto r = std::mismatch(root.begin(), root.end(), p.begin(), p.end()).first;
  // A trailing separator of the root reads as one empty last element.
  return r == root.end() || (std::next(r) == root.end() && r->empty());
}

}  // namespace

namespace {

// Both paths resolved (weakly_canonical); nullopt when either cannot be.
std::optional<std::pair<fs::path, fs::path>> resolved(const fs::path& workspace, const fs::path& data_dir) {
  if (data_dir.empty()) return std::nullopt;
  std::error_code ec;
  fs::path w = fs::weakly_canonical(workspace, ec);
  if (ec) return std::nullopt;
  fs::path d = fs::weakly_canonical(data_dir, ec);
  if (ec) return std::nullopt;
  return std::pair{std::move(w), std::move(d)};
}

}  // namespace

bool holds_data_dir(const fs::path& workspace, const fs::path& data_dir) {
  const auto r = resolved(workspace, data_dir);
  return r && inside(r->second, r->first);
}

bool in_data_dir(const fs::path& workspace, const fs::path& data_dir) {
  const auto r = resolved(workspace, data_dir);
  return r && inside(r->first, r->second);
}

result<std::string> resolve_workspace(std::string_view given, const std::vector<fs::path>& roots,
                                      const fs::path& data_dir) {
  const fs::path p(given);
  if (!p.is_absolute()) return make_error(api_errc::bad_request, "field 'workspace' must be an absolute path");
  std::error_code ec;
  const fs::path resolved = fs::weakly_canonical(p, ec);
  if (ec)
    return make_error(api_errc::bad_request, "field 'workspace': cannot resolve '" + p.string() + "': " + ec.message());
  if (holds_data_dir(resolved, data_dir))
    return make_error(api_errc::bad_request, "field 'workspace': '" + p.string() +
                                                 "' holds Tether's data directory, which the agent's tools must not reach");
  if (in_data_dir(resolved, data_dir))
    return make_error(api_errc::bad_request,
                      "field 'workspace': '" + p.string() +
                          "' is inside Tether's data directory (other sessions' workspaces, agent homes, the "
                          "store); name none and the session gets its own workspace there");
  for (const auto& root : roots)
    if (inside(resolved, root)) return resolved.string();
  std::string list;
  for (const auto& root : roots) list += (list.empty() ? "" : ", ") + root.string();
  return make_error(api_errc::bad_request, "field 'workspace': '" + p.string() + "' is not under a workspace root (" +
                                               (list.empty() ? std::string("none configured") : list) + ")");
}

std::vector<fs::path> resolve_roots(const std::vector<fs::path>& roots) {
  std::vector<fs::path> out;
  for (const auto& r : roots) {
    if (!r.is_absolute()) continue;
    std::error_code ec;
    auto resolved = fs::weakly_canonical(r, ec);
    if (ec) continue;
    if (std::find(out.begin(), out.end(), resolved) == out.end()) out.push_back(std::move(resolved));
  }
  return out;
}

}  // namespace tether::api
