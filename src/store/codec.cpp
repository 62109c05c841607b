#include "store/codec.h"

#include <boost/json.hpp>

#include "model/errors.h"
#include "store/errors.h"

namespace tether::store {

namespace json = boost::json;

result<json::value> parse_column(std::string_view text, std::string_view what) {
  json::parse_options opts;
  opts.max_depth = max_json_depth;
  json::error_code ec;
  json::value v = json::parse(text, ec, {}, opts);
  if (ec) return make_error(store_errc::corrupt, std::string(what) + " is not valid JSON: " + ec.message());
  return v;
}

result<model::payload> decode_payload(std::string_view type, int version, std::string_view data,
                                      std::string_view what) {
  auto v = parse_column(data, what);
  if (!v) return v.error();
  if (!v->is_object()) return make_error(store_errc::corrupt, std::string(what) + ": data is not a JSON object");
  auto p = model::decode(type, version, v->get_object());
  if (!p) return tether::error(p.error().code, std::string(what) + ": " + p.error().message);
  return p;
}

std::string usage_text(const model::usage& u) { return json::serialize(model::encode_usage(u)); }

result<model::usage> parse_usage(std::string_view text, std::string_view what) {
  auto v = parse_column(text, what);
  if (!v) return v.error();
  if (!v->is_object()) return make_error(store_errc::corrupt, std::string(what) + ": usage is not a JSON object");
  auto u = model::decode_usage(*v);
  if (!u) return make_error(store_errc::corrupt, std::string(what) + ": " + u.error().message);
  return u;
}

}  // namespace tether::store
