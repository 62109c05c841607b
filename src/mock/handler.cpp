#include "mock/handler.h"

#include <charconv>
#include <ctime>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include "mock/errors.h"
#include "mock/request.h"
#include "mock/script.h"
#include "util/ids.h"
#include "util/text.h"

namespace tether::mock {

namespace json = boost::json;

namespace {

constexpr std::string_view cut_off_text = "partial answer, cut off by Fail with: disconnect";

// What one kept request counts: its body's text and the record around it.
std::size_t kept_size(std::string_view body) { return body.size() + 128; }

http_reply json_reply(unsigned status, const json::object& body) {
  http_reply r;
  r.status = status;
  r.body = json::serialize(body);
  return r;
}

http_reply error_reply(const http_error& e) {
  auto r = json_reply(e.status, e.body);
  r.headers = e.headers;
  return r;
}

std::optional<wire_format> model_route(std::string_view path) {
  if (path == "/v1/chat/completions") return wire_format::chat;
  if (path == "/v1/responses") return wire_format::responses;
  if (path == "/v1/messages") return wire_format::anthropic;
  return std::nullopt;
}

http_reply method_not_allowed(wire_format w, std::string_view method, std::string_view path, std::string_view allow) {
  auto r = error_reply(render_bad_request(w, 405,
                                          "method " + std::string(method) + " is not allowed on " + std::string(path) +
                                              " (use " + std::string(allow) + ")"));
  r.headers.emplace_back("allow", std::string(allow));
  return r;
}

json::object models_list() {
  json::object m;
  m["id"] = "mock";
  m["object"] = "model";
  m["type"] = "model";
  m["created"] = 0;
  m["created_at"] = "2025-01-01T00:00:00Z";
  m["display_name"] = "Tether scripted model";
  m["owned_by"] = "tether";
  json::array data;
  data.emplace_back(std::move(m));
  json::object o;
  o["object"] = "list";
  o["data"] = std::move(data);
  o["has_more"] = false;
  o["first_id"] = "mock";
  o["last_id"] = "mock";
  return o;
}

std::optional<std::size_t> query_number(std::string_view query, std::string_view key, bool& malformed) {
  while (!query.empty()) {
    const auto amp = query.find('&');
    const auto pair = query.substr(0, amp);
    if (pair.starts_with(key) && pair.size() > key.size() && pair[key.size()] == '=') {
      const auto v = pair.substr(key.size() + 1);
      std::size_t n = 0;
      const auto [ptr, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
      if (ec != std::errc() || ptr != v.data() + v.size()) {
        malformed = true;
        return std::nullopt;
      }
      return n;
    }
    if (amp == std::string_view::npos) break;
    query.remove_prefix(amp + 1);
  }
  return std::nullopt;
}

}  // namespace

http_reply malformed_http(unsigned status, const std::string& message) {
  auto r = error_reply(render_bad_request(wire_format::chat, status, message));
  r.close = true;
  return r;
}

std::pair<std::string_view, std::string_view> split_target(std::string_view target) {
  const auto q = target.find('?');
  if (q == std::string_view::npos) return {target, {}};
  return {target.substr(0, q), target.substr(q + 1)};
}

result<void> request_handler::open_record(const std::filesystem::path& file) {
  std::ofstream out(file, std::ios::app | std::ios::binary);
  if (!out) return error(mock_errc::record_failed, "cannot open " + file.string() + " for appending");
  const std::lock_guard lock(mu_);
  record_.emplace(std::move(out));
  return ok();
}

http_reply request_handler::handle(std::string_view method, std::string_view target, std::string_view body) {
  const auto [path, query] = split_target(target);
  if (const auto w = model_route(path)) {
    if (method != "POST") return method_not_allowed(*w, method, path, "POST");
    return model_request(*w, path, body);
  }
  if (path == "/v1/messages/count_tokens" && method == "POST") {
    boost::system::error_code ec;
    const auto v = json::parse(body, ec);
    auto c = ec ? result<conversation>(error(mock_errc::invalid_request, "the body is not JSON"))
                : parse_anthropic_request(v);
    if (!c) return error_reply(render_bad_request(wire_format::anthropic, 400, c.error().message));
    json::object o;
    o["input_tokens"] = input_tokens(*c);
    return json_reply(200, o);
  }
  const bool get = method == "GET";
  if (path == "/v1/models")
    return get ? json_reply(200, models_list()) : method_not_allowed(wire_format::chat, method, path, "GET");
  if (path == "/_mock/requests")
    return get ? list_requests(query) : method_not_allowed(wire_format::chat, method, path, "GET");
  if (path == "/_mock/health") {
    json::object o;
    o["status"] = "ok";
    return get ? json_reply(200, o) : method_not_allowed(wire_format::chat, method, path, "GET");
  }
  if (path == "/") {
    if (method == "HEAD") return http_reply{};
    json::object o;
    o["status"] = "ok";
    return get ? json_reply(200, o) : method_not_allowed(wire_format::chat, method, path, "GET, HEAD");
  }
  return error_reply(
      render_bad_request(wire_format::chat, 404, "unknown route: " + std::string(method) + " " + std::string(path)));
}

http_reply request_handler::too_large(std::string_view target, std::size_t limit) const {
  const auto w = model_route(split_target(target).first).value_or(wire_format::chat);
  auto r = error_reply(
      render_bad_request(w, 413, "the request body exceeds the limit of " + std::to_string(limit) + " bytes"));
  r.close = true;
  return r;
}

std::int64_t steady_micros() {
  return std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

std::size_t request_handler::kept_bytes() const {
  const std::lock_guard lock(mu_);
  return kept_bytes_;
}

void request_handler::mark_completed(std::size_t seq) {
  const std::lock_guard lock(mu_);
  if (seq <= dropped_ || seq > dropped_ + requests_.size()) return;
  requests_[seq - 1 - dropped_].as_object()["completed_us"] = steady_micros();
}

std::vector<json::value> request_handler::requests(std::size_t after) const {
  const std::lock_guard lock(mu_);
  const std::size_t first = std::max(after, dropped_) - dropped_;
  if (first >= requests_.size()) return {};
  return {requests_.begin() + static_cast<std::ptrdiff_t>(first), requests_.end()};
}

http_reply request_handler::list_requests(std::string_view query) const {
  bool malformed = false;
  const auto after = query_number(query, "after", malformed);
  if (malformed) return error_reply(render_bad_request(wire_format::chat, 400, "after must be a whole number"));
  json::array list;
  for (auto& r : requests(after.value_or(0))) list.push_back(std::move(r));
  json::object o;
  o["requests"] = std::move(list);
  return json_reply(200, o);
}

http_reply request_handler::model_request(wire_format w, std::string_view route, std::string_view body) {
  if (!is_valid_utf8(body)) return error_reply(render_bad_request(w, 400, "the request body is not valid UTF-8"));
  boost::system::error_code ec;
  json::parse_options options;
  options.max_depth = 1000;  // the default (32) refuses deeply nested tool schemas
  auto parsed = json::parse(body, ec, {}, options);
  if (ec) return error_reply(render_bad_request(w, 400, "the request body is not valid JSON: " + ec.message()));
  auto conv = parse_request(w, parsed);
  if (!conv) return error_reply(render_bad_request(w, 400, conv.error().message));

  auto d = decide(*conv);
  const auto canonical = canonical_segments(*conv);
  usage_figures usage;
  usage.input_tokens = input_tokens(*conv);
  bool fail_now = false;
  std::size_t seq = 0;
  {
    const std::lock_guard lock(mu_);
    json::object rec;
    seq = dropped_ + requests_.size() + 1;
    rec["seq"] = seq;
    rec["route"] = route;
    rec["received_us"] = steady_micros();
    rec["body"] = std::move(parsed);
    if (record_) {
      *record_ << json::serialize(rec) << '\n';
      record_->flush();
    }
    requests_.emplace_back(std::move(rec));
    sizes_.push_back(kept_size(body));
    kept_bytes_ += sizes_.back();
    // Memory stays bounded; the --record file keeps all.
    while (requests_.size() > 1 && (requests_.size() > max_kept_requests || kept_bytes_ > max_kept_bytes_)) {
      requests_.pop_front();
      kept_bytes_ -= sizes_.front();
      sizes_.pop_front();
      ++dropped_;
    }
    usage.cached_tokens = std::min(cache_.lookup_and_remember(canonical), usage.input_tokens);
    fail_now = d.fail && (!d.fail_once || failed_once_.insert(d.instruction_hash).second);
  }
  if (fail_now && *d.fail != fail_kind::disconnect) {
    auto failed = error_reply(render_failure(w, *d.fail, usage.input_tokens));
    failed.recorded_seq = seq;
    return failed;
  }

  if (d.output.call)
    d.output.call->id = (w == wire_format::anthropic ? "toolu_" : "call_") + tether::detail::generate_id_body();
  usage.output_tokens = output_tokens(d.output);
  response_meta meta;
  meta.suffix = tether::detail::generate_id_body();
  meta.model = conv->model.empty() ? "mock" : conv->model;
  meta.created = static_cast<std::int64_t>(std::time(nullptr));

  http_reply r;
  r.recorded_seq = seq;
  if (fail_now) {  // disconnect
    r.disconnect = true;
    r.close = true;
    if (!conv->stream) return r;
    d.output = model_output{std::string(cut_off_text), std::nullopt};
  }
  if (!conv->stream) {
    auto whole = json_reply(200, render_json(w, d.output, usage, meta));
    whole.recorded_seq = seq;
    return whole;
  }
  stream_options opts;
  opts.include_usage = conv->include_usage;
  opts.delta_chars = d.delta_interval.count() > 0 ? 4 : 24;
  r.streaming = true;
  r.content_type = "text/event-stream";
  r.headers.emplace_back("cache-control", "no-cache");
  r.events = render_stream(w, d.output, usage, meta, opts);
  r.delta_interval = d.delta_interval;
  return r;
}

}  // namespace tether::mock
