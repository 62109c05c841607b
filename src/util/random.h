// Random secrets and nonces from the kernel's generator (std::random_device).
#pragma once

#include <cstddef>
#include <string>

namespace tether {

// `bytes` random bytes as 2 * bytes lowercase hex digits.
std::string random_hex(std::size_t bytes);

}  // namespace tether
