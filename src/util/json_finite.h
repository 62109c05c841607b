#pragma once
// Whether every number in a JSON value is finite.
//
// Boost.JSON reads a number too large for a double (1e400) as infinity and
// writes infinity back as `Infinity`, which is not JSON: a value parsed from
// outside and stored again would not read back. What comes from a client, a
// model or an agent is checked with this where it is parsed, and refused
// with a clear error if it holds such a number.
#include <cmath>

#include <boost/json/value.hpp>

namespace tether {

inline bool all_numbers_finite(const boost::json::value& v) {
  switch (v.kind()) {
    case boost::json::kind::double_:
      return std::isfinite(v.get_double());
    case boost::json::kind::array:
      for (const auto& x : v.get_array())
        if (!all_numbers_finite(x)) return false;
      return true;
    case boost::json::kind::object:
      for (const auto& [k, x] : v.get_object())
        if (!all_numbers_finite(x)) return false;
      return true;
    default:
      return true;
  }
}

}  // namespace tether
