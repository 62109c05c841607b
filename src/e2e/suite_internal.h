// Private to the suite*.cpp files: what parsing a catalogue and writing its
// canonical form share, so both read a matcher's fields from one list.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "e2e/suite.h"

namespace tether::e2e::detail {

using key_list = std::vector<std::string_view>;

// The keys a matcher of kind `k` takes, "kind" first: parsing accepts exactly
// these (all required but `run` and `runs`), and canonical_json writes each of them.
key_list matcher_keys(matcher_kind k);

// One definitions file, without checking the suite's references (they may be
// in other files); suite.cpp.
result<catalogue> parse_file(std::string_view text, const std::string& origin);

}  // namespace tether::e2e::detail
