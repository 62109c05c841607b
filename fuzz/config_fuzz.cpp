// The TOML configuration loader (config/config.h) on arbitrary text.
//
// Invariants: no exception escapes (toml++ throws on syntax errors; the
// loader must turn every one into an error value); a configuration that
// loads finds each of its profiles by name, and every error message is
// valid UTF-8 when the text was.
#include <string>
#include <vector>

#include "config/config.h"
#include "fuzz_support.h"
#include "model/runtime_kinds.h"
#include "runtime/agent/settings.h"
#include "runtime/native/settings.h"

namespace {

// The kinds' readers (runtime/native/settings.h, runtime/agent/settings.h),
// one of each shape: native, a per-turn agent, a warm agent with a wire, and
// the generic ACP kind that needs its command.
const std::vector<tether::config::kind_keys>& kinds() {
  namespace agent = tether::runtime::agent;
  namespace name = tether::model::runtime_kind;
  static const std::vector<tether::config::kind_keys> all{
      tether::runtime::native::native_keys(std::string(name::native)),
      agent::agent_keys(std::string(name::codex_exec), {}),
      agent::agent_keys(std::string(name::opencode), {.warm = true, .wire = true, .home = agent::model_home::by_wire}),
      agent::agent_keys(std::string(name::acp),
                        {.warm = true, .home = agent::model_home::own, .command_required = true}),
  };
  return all;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto s = tether::config::parse(text, kinds());
  if (!s) {
    if (tether::fuzz::valid_utf8(text)) FUZZ_CHECK(tether::fuzz::valid_utf8(s.error().describe()));
    return 0;
  }
  for (const auto& [name, p] : s->profiles) {
    auto found = s->find(name);
    FUZZ_CHECK(found.has_value());
    FUZZ_CHECK(found->name == p.name);
  }
  (void)s->find("no such profile");
  return 0;
}
