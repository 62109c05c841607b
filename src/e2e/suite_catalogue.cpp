// Loading a catalogue: every *.toml file of a directory parsed, merged (an
// id defined twice names both files) and its references checked.
#include "e2e/suite.h"

#include <algorithm>
#include <fstream>
#include <iterator>
#include <map>
#include <vector>

#include <fmt/format.h>

#include "e2e/suite_internal.h"
#include "e2e/suite_toml.h"

namespace tether::e2e {

namespace {

using namespace detail;

template <class T>
std::string known_ids(const std::map<std::string, T>& m) {
  std::vector<std::string_view> ids;
  ids.reserve(m.size());
  for (const auto& [id, v] : m) ids.push_back(id);
  return ids.empty() ? "none" : join(ids);
}

result<void> check_references(const catalogue& cat) {
  for (const auto& s : cat.suites) {
    const std::string where = fmt::format("{}: suite \"{}\"", s.file.string(), s.id);
    for (const auto& p : s.profiles)
      if (!cat.profiles.contains(p))
        return invalid(where, fmt::format("unknown profile \"{}\" (defined: {})", p, known_ids(cat.profiles)));
    for (const auto& e : s.environments)
      if (!cat.environments.contains(e))
        return invalid(where, fmt::format("unknown environment \"{}\" (defined: {})", e, known_ids(cat.environments)));
  }
  return ok();
}

// Where each id was defined, so a duplicate names both files.
struct origins {
  std::map<std::string, std::string> profiles, environments, suites;
};

result<void> claim(std::map<std::string, std::string>& seen, std::string_view what, const std::string& id,
                   const std::string& origin) {
  const auto [it, fresh] = seen.emplace(id, origin);
  if (fresh) return ok();
  return invalid(origin, fmt::format("duplicate {} id \"{}\" (already defined in {})", what, id, it->second));
}

result<void> merge(catalogue& into, catalogue part, const std::string& origin, origins& seen) {
  for (auto& [id, p] : part.profiles) {
    TETHER_TRY(claim(seen.profiles, "profile", id, origin));
    into.profiles.emplace(id, std::move(p));
  }
  for (auto& [id, e] : part.environments) {
    TETHER_TRY(claim(seen.environments, "environment", id, origin));
    into.environments.emplace(id, std::move(e));
  }
  for (auto& s : part.suites) {
    TETHER_TRY(claim(seen.suites, "suite", s.id, origin));
    into.suites.push_back(std::move(s));
  }
  return ok();
}

result<std::vector<std::filesystem::path>> toml_files(const std::filesystem::path& dir) {
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec))
    return make_error(e2e_errc::not_found, fmt::format("{}: no such directory", dir.string()));
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec))
    if (entry.path().extension() == ".toml" && entry.is_regular_file()) files.push_back(entry.path());
  if (ec) return make_error(e2e_errc::io, fmt::format("{}: {}", dir.string(), ec.message()));
  std::sort(files.begin(), files.end());
  return files;
}

result<std::string> read_text(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) return make_error(e2e_errc::io, fmt::format("{}: cannot read the file", file.string()));
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

}  // namespace

result<catalogue> parse_catalogue(std::string_view toml, const std::string& origin) {
  auto cat = parse_file(toml, origin);
  if (cat) TETHER_TRY(check_references(*cat));
  return cat;
}

result<catalogue> load_catalogue(const std::filesystem::path& dir) {
  auto files = toml_files(dir);
  if (!files) return files.error();
  catalogue cat;
  origins seen;
  for (const auto& file : *files) {
    auto text = read_text(file);
    if (!text) return text.error();
    auto part = parse_file(*text, file.string());
    if (!part) return part.error();
    TETHER_TRY(merge(cat, std::move(*part), file.string(), seen));
  }
  TETHER_TRY(check_references(cat));
  return cat;
}

}  // namespace tether::e2e
