#include "runtime/native/settings.h"

#include <algorithm>

#include <fmt/format.h>

#include "util/errors.h"

namespace tether::runtime::native {

result<std::optional<wire_api>> parse_provider(std::string_view name) {
  if (name == "scripted") return std::optional<wire_api>();
  if (const auto api = parse_wire_api(name)) return std::optional(*api);
  return make_error(util_errc::invalid_argument,
                    fmt::format("\"{}\" is not a provider (openai-chat, openai-responses, anthropic, scripted)", name));
}

namespace {

result<void> read(config::profile& p, const config::table_reader& t) {
  auto& n = p.kind_settings<native_settings>();
  if (!p.provider.empty()) {
    auto api = parse_provider(p.provider);
    if (!api) return t.bad("provider", ": " + api.error().message);
    if (*api) n.provider = **api;
  }
  auto steps = t.integer("max_steps", n.max_steps, 1);
  if (!steps) return steps.error();
  n.max_steps = static_cast<int>(std::min<std::int64_t>(*steps, 100'000));
  auto window = t.integer("context_window", n.context_window, 1'000);
  if (!window) return window.error();
  n.context_window = *window;
  auto instructions = t.text("instructions", "");
  if (!instructions) return instructions.error();
  n.instructions = *instructions;
  auto sandbox = t.text("sandbox", std::string(process::to_string(n.sandbox)));
  if (!sandbox) return sandbox.error();
  const auto mode = process::parse_sandbox_mode(*sandbox);
  if (!mode || *mode == process::sandbox_mode::contain)
    return t.bad("sandbox", fmt::format(": \"{}\" is not a sandbox mode (workspace-write, read-only, off)", *sandbox));
  n.sandbox = *mode;
  auto network = t.boolean("network", n.network);
  if (!network) return network.error();
  n.network = *network;
  return ok();
}

std::string official_base_url(const config::profile& p) {
  return p.kind_settings<native_settings>().provider == wire_api::anthropic ? "https://api.anthropic.com/v1"
                                                                            : "https://api.openai.com/v1";
}

}  // namespace

config::kind_keys native_keys(std::string name) {
  return {std::move(name),
          {"provider", "base_url", "model", "api_key_env", "ca_file", "max_steps", "context_window", "sandbox",
           "network", "env", "instructions"},
          read,
          official_base_url};
}

}  // namespace tether::runtime::native
