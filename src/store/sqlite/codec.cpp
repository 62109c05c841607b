#include "store/sqlite/codec.h"

#include <boost/json.hpp>

#include "model/errors.h"
#include "store/errors.h"

namespace tether::store::sqlite {

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

std::string usage_text(const model::usage& u) {
  return json::serialize(json::object{{"input_tokens", u.input_tokens},
                                      {"output_tokens", u.output_tokens},
                                      {"cached_input_tokens", u.cached_input_tokens}});
}

result<model::usage> parse_usage(std::string_view text, std::string_view what) {
  auto v = parse_column(text, what);
  if (!v) return v.error();
  const auto* o = v->if_object();
  if (o == nullptr) return make_error(store_errc::corrupt, std::string(what) + ": usage is not a JSON object");
  model::usage u;
  auto field = [&](std::string_view key, std::int64_t& out) -> bool {
    const auto* f = o->if_contains(key);
    if (f == nullptr) return true;
    if (!f->is_int64()) return false;
    out = f->get_int64();
    return true;
  };
  if (!field("input_tokens", u.input_tokens) || !field("output_tokens", u.output_tokens) ||
      !field("cached_input_tokens", u.cached_input_tokens))
    return make_error(store_errc::corrupt, std::string(what) + ": usage has a non-integer count");
  return u;
}

}  // namespace tether::store::sqlite
