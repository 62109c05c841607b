// SHA-256 of bytes as lowercase hex (64 characters). Small and
// dependency-free, so any layer may use it (image blobs, configuration
// fingerprints, suite definition hashes).
#pragma once

#include <string>
#include <string_view>

namespace tether {

std::string sha256_hex(std::string_view data);

}  // namespace tether
