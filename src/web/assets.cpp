#include "web/assets.h"

#include <algorithm>

namespace tether::web {

const asset* find_asset(std::string_view name) {
  if (name.empty()) name = "index.html";
  const auto all = assets();
  const auto it = std::lower_bound(all.begin(), all.end(), name,
                                   [](const asset& a, std::string_view n) { return a.name < n; });
  return it != all.end() && it->name == name ? &*it : nullptr;
}

}  // namespace tether::web
