// The TOML configuration loader (config/config.h) on arbitrary text.
//
// Invariants: no exception escapes (toml++ throws on syntax errors; the
// loader must turn every one into an error value); a configuration that
// loads finds each of its profiles by name, and every error message is
// valid UTF-8 when the text was.
#include <string>

#include "config/config.h"
#include "fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto s = tether::config::parse(text);
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
