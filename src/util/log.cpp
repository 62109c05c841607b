#include "util/log.h"

#include <cstdlib>
#include <string>

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

namespace tether {

void setup_logging(std::string_view level) {
  std::string name(level);
  if (const char* env = std::getenv("TETHER_LOG"); env != nullptr && *env != '\0') name = env;
  // Logs go to stderr: stdout carries a command's output (serve's and
  // mock-llm's "listening on" line, run's transcript, --json documents), and a
  // parent that reads only that must never be blocked by log lines it ignores.
  auto logger = spdlog::get("tether");
  if (!logger) logger = spdlog::stderr_color_mt("tether");
  spdlog::set_default_logger(std::move(logger));
  spdlog::set_level(spdlog::level::from_str(name));
  spdlog::set_pattern("%Y-%m-%dT%H:%M:%S.%e %^%l%$ %v");
}

}  // namespace tether
