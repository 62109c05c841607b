#include "api/body.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <string>
#include <vector>

#include <boost/json/basic_parser_impl.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>

#include "api/errors.h"
#include "api/handler.h"
#include "util/text.h"

namespace tether::api {

namespace json = boost::json;

namespace {

// A pass over the body that keeps no values, only what the checks need: the
// keys of every open object (a duplicate is found when its second copy
// ends) and the path of keys to the current value (to name a field).
struct key_checker {
  static constexpr std::size_t max_object_size = std::size_t(-1);
  static constexpr std::size_t max_array_size = std::size_t(-1);
  static constexpr std::size_t max_key_size = std::size_t(-1);
  static constexpr std::size_t max_string_size = std::size_t(-1);

  struct frame {
    bool object = false;
    std::vector<std::string> keys;
  };
  std::vector<frame> open;
  std::string key;      // the key being read (it may come in parts)
  std::string problem;  // set when a check failed

  [[nodiscard]] std::string path() const {
    std::string out;
    for (const auto& f : open) {
      if (!f.object || f.keys.empty()) continue;
      if (!out.empty()) out += '.';
      out += f.keys.back();
    }
    return out;
  }
  bool fail(std::string what, boost::system::error_code& ec) {
    problem = std::move(what);
    ec = make_error_code(std::errc::invalid_argument);
    return false;
  }
  bool nul_free(std::string_view s, boost::system::error_code& ec) {
    if (s.find('\0') == std::string_view::npos) return true;
    return fail("field '" + path() + "' contains the character U+0000, which is not accepted", ec);
  }

  bool on_document_begin(boost::system::error_code&) { return true; }
  bool on_document_end(boost::system::error_code&) { return true; }
  bool on_object_begin(boost::system::error_code&) {
    open.push_back({true, {}});
    return true;
  }
  bool on_object_end(std::size_t, boost::system::error_code&) {
    open.pop_back();
    return true;
  }
  bool on_array_begin(boost::system::error_code&) {
    open.push_back({false, {}});
    return true;
  }
  bool on_array_end(std::size_t, boost::system::error_code&) {
    open.pop_back();
    return true;
  }
  bool on_key_part(json::string_view s, std::size_t, boost::system::error_code&) {
    key.append(s.data(), s.size());
    return true;
  }
  bool on_key(json::string_view s, std::size_t, boost::system::error_code& ec) {
    key.append(s.data(), s.size());
    auto& keys = open.back().keys;
    const bool twice = std::find(keys.begin(), keys.end(), key) != keys.end();
    keys.push_back(std::move(key));
    key.clear();
    if (twice) return fail("field '" + path() + "' appears more than once", ec);
    return nul_free(keys.back(), ec);
  }
  bool on_string_part(json::string_view s, std::size_t, boost::system::error_code& ec) {
    return nul_free({s.data(), s.size()}, ec);
  }
  bool on_string(json::string_view s, std::size_t, boost::system::error_code& ec) {
    return nul_free({s.data(), s.size()}, ec);
  }
  bool on_number_part(json::string_view, boost::system::error_code&) { return true; }
  bool on_int64(std::int64_t, json::string_view, boost::system::error_code&) { return true; }
  bool on_uint64(std::uint64_t, json::string_view, boost::system::error_code&) { return true; }
  bool on_double(double d, json::string_view, boost::system::error_code& ec) {
    if (std::isfinite(d)) return true;
    return fail("field '" + path() + "' holds a number out of range", ec);
  }
  bool on_bool(bool, boost::system::error_code&) { return true; }
  bool on_null(boost::system::error_code&) { return true; }
  bool on_comment_part(json::string_view, boost::system::error_code&) { return true; }
  bool on_comment(json::string_view, boost::system::error_code&) { return true; }
};

std::string lowered(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return std::tolower(c); });
  return out;
}

std::string_view trimmed(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

}  // namespace

result<void> check_media_type(std::string_view content_type, std::string_view body) {
  if (body.empty() && trimmed(content_type).empty()) return ok();
  const std::string_view media = trimmed(content_type.substr(0, content_type.find(';')));
  if (lowered(media) == "application/json") return ok();
  const std::string given = media.empty() ? "no Content-Type" : "Content-Type '" + std::string(media) + "'";
  return make_error(api_errc::unsupported_media_type, "the body must be sent as application/json, not " + given);
}

result<json::object> parse_body(std::string_view body) {
  if (!is_valid_utf8(body)) return make_error(util_errc::invalid_utf8, "the request body is not valid UTF-8");
  boost::system::error_code ec;
  json::value v = json::parse(body, ec);
  if (ec) return make_error(util_errc::malformed_json, "the request body is not valid JSON: " + ec.message());
  if (!v.is_object()) return make_error(util_errc::malformed_json, "the request body must be a JSON object");
  // The same text again, for what the value no longer shows (a parser keeps
  // one copy of a repeated key).
  json::basic_parser<key_checker> checker(json::parse_options{});
  checker.write_some(false, body.data(), body.size(), ec);
  if (!checker.handler().problem.empty()) return make_error(api_errc::bad_request, checker.handler().problem);
  return std::move(v.as_object());
}

result<void> only_fields(const json::object& o, std::span<const std::string_view> known) {
  for (const auto& [key, value] : o) {
    if (std::find(known.begin(), known.end(), std::string_view(key)) != known.end()) continue;
    std::string list;
    for (const auto k : known) list += (list.empty() ? "" : ", ") + std::string(k);
    return make_error(api_errc::bad_request, "field '" + std::string(key) + "' is not known (known: " + list + ")");
  }
  return ok();
}

result<std::optional<std::string>> string_field(const json::object& o, std::string_view name) {
  const auto* v = o.if_contains(name);
  if (v == nullptr || v->is_null()) return std::optional<std::string>{};
  if (!v->is_string()) return make_error(api_errc::bad_request, "field '" + std::string(name) + "' must be a string");
  return std::optional<std::string>{std::string(v->as_string())};
}

result<std::optional<bool>> bool_field(const json::object& o, std::string_view name) {
  const auto* v = o.if_contains(name);
  if (v == nullptr || v->is_null()) return std::optional<bool>{};
  if (!v->is_bool()) return make_error(api_errc::bad_request, "field '" + std::string(name) + "' must be a boolean");
  return std::optional<bool>{v->as_bool()};
}

result<session::input_request> parse_input(const std::string& body) {
  auto o = parse_body(body);
  if (!o) return o.error();
  if (auto known = only_fields(*o, create_input_fields); !known) return known.error();
  session::input_request req;
  auto id = string_field(*o, "id");
  if (!id) return id.error();
  req.id = *id;
  auto text = string_field(*o, "text");
  if (!text) return text.error();
  if (!*text) return make_error(api_errc::bad_request, "field 'text' is required");
  req.prompt = std::move(**text);
  auto delivery = string_field(*o, "delivery");
  if (!delivery) return delivery.error();
  if (*delivery) {
    auto d = model::parse_delivery(**delivery);
    if (!d) return make_error(api_errc::bad_request, "field 'delivery' must be \"steer\" or \"queue\"");
    req.delivery = *d;
  }
  auto resume = bool_field(*o, "resume");
  if (!resume) return resume.error();
  req.start = resume->value_or(true) ? session::start_mode::resume : session::start_mode::record_only;
  return req;
}

}  // namespace tether::api
