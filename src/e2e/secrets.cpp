#include "e2e/secrets.h"

#include <fstream>
#include <sstream>

#include "e2e/json_io.h"

namespace tether::e2e {

namespace fs = std::filesystem;

namespace {

bool contains_any(std::string_view text, const std::vector<std::string>& needles) {
  for (const auto& n : needles)
    if (text.find(n) != std::string_view::npos) return true;
  return false;
}

}  // namespace

std::optional<std::string> find_secret(const fs::path& dir, const std::vector<std::string>& texts,
                                       const std::string& secret) {
  if (secret.empty()) return std::nullopt;
  std::vector<std::string> needles{secret};
  auto escaped = json_escaped(secret);
  if (escaped != secret) needles.push_back(std::move(escaped));
  for (std::size_t i = 0; i < texts.size(); ++i)
    if (contains_any(texts[i], needles)) return "text " + std::to_string(i + 1);
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(dir, fs::directory_options::skip_permission_denied, ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (!it->is_regular_file(ec) || it->is_symlink(ec)) continue;
    std::ifstream in(it->path(), std::ios::binary);
    std::ostringstream ss;
    ss << in.rdbuf();
    if (contains_any(ss.str(), needles)) return it->path().string();
  }
  return std::nullopt;
}

}  // namespace tether::e2e
