#include "util/log.h"

#include <cstdlib>
#include <string>

#include <spdlog/spdlog.h>

namespace tether {

void setup_logging(std::string_view level) {
  std::string name(level);
  if (const char* env = std::getenv("TETHER_LOG"); env != nullptr && *env != '\0') name = env;
  spdlog::set_level(spdlog::level::from_str(name));
  spdlog::set_pattern("%Y-%m-%dT%H:%M:%S.%e %^%l%$ %v");
}

}  // namespace tether
