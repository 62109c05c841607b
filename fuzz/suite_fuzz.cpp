// The qualification suite loader (e2e/suite.h) on arbitrary TOML, and its
// template expansion on arbitrary text.
//
// Input: one byte picks the mode — a whole suite file for parse_catalogue(),
// or a template for expand(). Invariants:
//   - no exception escapes;
//   - a suite that loads has canonical JSON that is JSON, and a definition
//     hash of 64 hex digits that does not change when computed again;
//   - expand() succeeds exactly when unknown_template_names() is empty, and
//     keeps valid UTF-8 valid.
#include <string>

#include <boost/json.hpp>

#include "e2e/suite.h"
#include "fuzz_support.h"

namespace e2e = tether::e2e;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  tether::fuzz::input_reader in(data, size);
  const std::uint8_t mode = in.byte() % 4;
  const std::string_view text = in.rest();

  if (mode == 0) {
    const e2e::template_values v{.nonce = "a1b2c3d4e5f6-1", .cell = "suite.profile.local.case"};
    auto expanded = e2e::expand(text, v);
    FUZZ_CHECK(expanded.has_value() == e2e::unknown_template_names(text).empty());
    if (expanded && tether::fuzz::valid_utf8(text)) FUZZ_CHECK(tether::fuzz::valid_utf8(*expanded));
    return 0;
  }

  auto cat = e2e::parse_catalogue(text, "fuzz.toml");
  if (!cat) return 0;
  for (const auto& s : cat->suites) {
    const std::string canonical = e2e::canonical_json(s);
    boost::system::error_code ec;
    (void)boost::json::parse(canonical, ec);
    FUZZ_CHECK(!ec);
    const std::string hash = e2e::definition_hash(s);
    FUZZ_CHECK(hash.size() == 64 && hash.find_first_not_of("0123456789abcdef") == std::string::npos);
    FUZZ_CHECK(e2e::definition_hash(s) == hash);
  }
  return 0;
}
