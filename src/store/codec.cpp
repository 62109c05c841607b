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

std::string encode_setup(const std::vector<std::string>& setup) {
  boost::json::array a;
  for (const auto& c : setup) a.emplace_back(c);
  return boost::json::serialize(a);
}

result<std::vector<std::string>> decode_setup(std::string_view project, std::string_view text) {
  boost::system::error_code ec;
  auto v = boost::json::parse(text, ec);
  if (ec || !v.is_array())
    return make_error(store_errc::corrupt, "project " + std::string(project) + ": setup is not a JSON array");
  std::vector<std::string> out;
  for (const auto& c : v.as_array()) {
    if (!c.is_string())
      return make_error(store_errc::corrupt, "project " + std::string(project) + ": a setup command is not a string");
    out.emplace_back(c.as_string());
  }
  return out;
}

result<std::vector<model::project_repository>> decode_repositories(std::string_view project, std::string_view text) {
  boost::system::error_code ec;
  auto v = boost::json::parse(text, ec);
  if (ec) return make_error(store_errc::corrupt, "project " + std::string(project) + ": repositories are not JSON");
  auto repos = model::repositories_from_json(v);
  if (!repos)
    return make_error(store_errc::corrupt, "project " + std::string(project) + ": " + repos.error().message);
  return repos;
}

}  // namespace tether::store
