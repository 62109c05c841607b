#include "model/reported.h"

#include <boost/json/object.hpp>

namespace tether::model {

std::int64_t token_count(const boost::json::object& o, std::string_view key) {
  const auto* v = o.if_contains(key);
  if (v == nullptr) return 0;
  if (v->is_int64()) return reported_tokens(v->get_int64());
  if (v->is_uint64())
    return v->get_uint64() > static_cast<std::uint64_t>(max_reported_tokens) ? max_reported_tokens
                                                                              : static_cast<std::int64_t>(v->get_uint64());
  if (v->is_double()) {  // compared before converting: a double out of int64's range is undefined to convert
    const double d = v->get_double();
    if (!(d > 0)) return 0;
    return d >= static_cast<double>(max_reported_tokens) ? max_reported_tokens : static_cast<std::int64_t>(d);
  }
  return 0;
}

std::optional<double> cost_at(const boost::json::object& o, std::string_view key) {
  const auto* v = o.if_contains(key);
  if (v == nullptr || !v->is_number()) return std::nullopt;
  return reported_cost(v->to_number<double>());
}

}  // namespace tether::model
