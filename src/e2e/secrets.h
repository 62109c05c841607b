// e2e::find_secret — does a secret appear in what a cell leaves behind?
//
//   auto where = e2e::find_secret(artifacts_dir, {record_json}, api_key);
//   if (where) → the cell is a secret_leak; *where is the file, or "text N" for texts[N-1]
//
// Looks for the exact bytes of `secret` in every regular file under `dir`
// (recursively; symlinks are not followed) and in each of `texts`, and for
// the secret as it is written inside a JSON string (escaped), so a key with a
// quote or a backslash is still found. An empty secret cannot leak (nullopt).
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace tether::e2e {

std::optional<std::string> find_secret(const std::filesystem::path& dir, const std::vector<std::string>& texts,
                                       const std::string& secret);

}  // namespace tether::e2e
