// Logging setup. Components log through spdlog's default logger; this sets
// its level and pattern once per process.
#pragma once

#include <string_view>

namespace tether {

// level: "trace" … "off"; unknown names mean "info". Honours TETHER_LOG.
void setup_logging(std::string_view level = "info");

}  // namespace tether
