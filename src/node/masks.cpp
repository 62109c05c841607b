#include "node/masks.h"

#include <algorithm>
#include <cstdlib>
#include <string_view>

namespace tether::node {

namespace fs = std::filesystem;

namespace {

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr ? std::string(v) : std::string();
}

std::string percent_decoded(std::string_view s) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && i + 2 < s.size()) {
      const auto hex = std::string(s.substr(i + 1, 2));
      char* end = nullptr;
      const long v = std::strtol(hex.c_str(), &end, 16);
      if (end == hex.c_str() + 2) {
        out += static_cast<char>(v);
        i += 2;
        continue;
      }
    }
    out += s[i];
  }
  return out;
}

// The socket directories a libpq URL names: host=… parameters and a
// percent-encoded path as the authority's host (postgres://%2Fsrv%2Fpg/db).
std::vector<std::string> url_hosts(std::string_view url) {
  std::vector<std::string> out;
  const auto scheme = url.find("://");
  if (scheme == std::string_view::npos) return out;
  auto rest = url.substr(scheme + 3);
  const auto query_at = rest.find('?');
  auto authority = rest.substr(0, std::min(rest.find('/'), query_at));
  if (const auto at = authority.rfind('@'); at != std::string_view::npos) authority = authority.substr(at + 1);
  if (const auto colon = authority.rfind(':'); colon != std::string_view::npos) authority = authority.substr(0, colon);
  out.push_back(percent_decoded(authority));
  if (query_at == std::string_view::npos) return out;
  auto query = rest.substr(query_at + 1);
  while (!query.empty()) {
    const auto amp = query.find('&');
    const auto pair = query.substr(0, amp);
    if (pair.starts_with("host=")) {
      auto hosts = percent_decoded(pair.substr(5));
      for (std::size_t pos = 0; pos <= hosts.size();) {  // a comma-separated list
        const auto comma = hosts.find(',', pos);
        out.push_back(hosts.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos));
        if (comma == std::string::npos) break;
        pos = comma + 1;
      }
    }
    if (amp == std::string_view::npos) break;
    query = query.substr(amp + 1);
  }
  return out;
}

}  // namespace

std::vector<fs::path> server_secrets(const std::string& config, const std::string& store_url) {
  std::vector<std::string> candidates;
  const auto file = !config.empty() ? config : env("TETHER_CONFIG");
  std::error_code ignored;
  if (!file.empty()) candidates.push_back(fs::absolute(file, ignored).string());
  candidates.insert(candidates.end(), {"/run/postgresql", "/var/run/postgresql", env("PGHOST")});
  if (store_url.starts_with("postgres"))
    for (auto& h : url_hosts(store_url)) candidates.push_back(std::move(h));
  const auto home = env("HOME");
  candidates.push_back(!env("PGPASSFILE").empty() ? env("PGPASSFILE") : (home.empty() ? "" : home + "/.pgpass"));
  candidates.push_back(!env("PGSERVICEFILE").empty() ? env("PGSERVICEFILE")
                                                     : (home.empty() ? "" : home + "/.pg_service.conf"));
  std::vector<fs::path> out;
  for (const auto& c : candidates) {
    if (c.empty() || c.front() != '/') continue;  // a host name, or nothing
    std::error_code ec;
    auto p = fs::canonical(c, ec);
    if (ec) continue;
    if (std::find(out.begin(), out.end(), p) == out.end()) out.push_back(std::move(p));
  }
  return out;
}

}  // namespace tether::node
