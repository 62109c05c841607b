#include "runtime/native/providers/classify.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <ctime>

#include <fmt/format.h>
#include <boost/json/parse.hpp>

namespace tether::runtime::native {

namespace json = boost::json;

namespace {

constexpr std::size_t max_message = 500;

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return std::tolower(c); });
  return out;
}

// One line, bounded, so a message fits a log line and a step.failed event.
std::string one_line(std::string_view s) {
  std::string out;
  bool space = false;
  for (const char c : s) {
    if (c == '\n' || c == '\r' || c == '\t' || c == ' ') {
      space = !out.empty();
      continue;
    }
    if (space) out.push_back(' ');
    space = false;
    out.push_back(c);
    if (out.size() >= max_message) {
      out += "…";
      break;
    }
  }
  return out;
}

std::string text_of(const json::value* v) {
  if (v == nullptr) return {};
  if (v->is_string()) return std::string(v->get_string());
  if (v->is_int64()) return std::to_string(v->get_int64());
  return {};
}

// What an error object says: its kind words and its message.
struct error_words {
  std::string type;  // "rate_limit_error", "invalid_request_error", …
  std::string code;  // "insufficient_quota", "context_length_exceeded", "429", …
  std::string message;
  int status = 0;  // OpenRouter-style numeric code
};

error_words words_of(const json::value& v) {
  error_words w;
  if (v.is_string()) {
    w.message = std::string(v.get_string());
    return w;
  }
  if (!v.is_object()) return w;
  const auto& o = v.get_object();
  w.type = text_of(o.if_contains("type"));
  w.code = text_of(o.if_contains("code"));
  w.message = text_of(o.if_contains("message"));
  if (const auto* c = o.if_contains("code"); c != nullptr && c->is_int64()) w.status = static_cast<int>(c->get_int64());
  return w;
}

// The error part of a body: {"error": {...}} (OpenAI, Anthropic, OpenRouter),
// {"type":"error","error":{...}} or a bare {"message": ...}.
std::optional<error_words> words_of_body(std::string_view body) {
  boost::system::error_code ec;
  const auto v = json::parse(body, ec);
  if (ec || !v.is_object()) return std::nullopt;
  const auto& o = v.get_object();
  if (const auto* e = o.if_contains("error")) return words_of(*e);
  if (o.contains("message")) return words_of(v);
  return std::nullopt;
}

std::string text_of_page(std::string_view body) {
  // An HTML page (a proxy's or a load balancer's): its title says most.
  const std::string l = lower(body.substr(0, 64 * 1024));
  if (const auto t = l.find("<title>"); t != std::string::npos) {
    const auto end = l.find("</title>", t);
    if (end != std::string::npos) return one_line(body.substr(t + 7, end - t - 7));
  }
  std::string out;
  bool in_tag = false;
  for (const char c : body.substr(0, 4096)) {
    if (c == '<')
      in_tag = true;
    else if (c == '>') {
      in_tag = false;
      out.push_back(' ');
    } else if (!in_tag)
      out.push_back(c);
  }
  return one_line(out);
}

bool says_quota(const std::string& words) {
  return words.find("insufficient_quota") != std::string::npos ||
         words.find("exceeded your current quota") != std::string::npos ||
         words.find("credit balance is too low") != std::string::npos ||
         words.find("insufficient credits") != std::string::npos;
}

bool says_overflow(const std::string& words) {
  return words.find("context_length_exceeded") != std::string::npos ||
         words.find("prompt is too long") != std::string::npos ||
         words.find("maximum context length") != std::string::npos ||
         words.find("exceeds the context window") != std::string::npos ||
         words.find("context window") != std::string::npos;
}

provider_errc kind_of(int status, const error_words& w) {
  const std::string words = lower(w.type + " " + w.code + " " + w.message);
  if (status == 402 || says_quota(words)) return provider_errc::quota;
  const bool client_side = status == 0 || status == 400 || status == 413 || status == 422;
  if (client_side && says_overflow(words)) return provider_errc::context_overflow;
  const std::string kind = lower(w.type.empty() || w.type == "error" ? w.code : w.type);
  if (status == 429 || kind == "rate_limit_error" || kind == "rate_limit_exceeded") return provider_errc::rate_limited;
  if (status == 529 || status == 503 || kind == "overloaded_error") return provider_errc::overloaded;
  if (status >= 500) return provider_errc::server_error;
  if (status == 408) return provider_errc::timeout;
  if (status == 401 || status == 403 || kind == "authentication_error" || kind == "permission_error" ||
      kind == "invalid_api_key")
    return provider_errc::auth;
  if (status >= 400) return provider_errc::invalid_request;
  if (kind == "invalid_request_error" || kind == "not_found_error" || kind == "request_too_large")
    return provider_errc::invalid_request;
  return provider_errc::server_error;
}

std::string_view kind_name(provider_errc k) {
  switch (k) {
    case provider_errc::rate_limited:
      return "rate_limited";
    case provider_errc::overloaded:
      return "overloaded";
    case provider_errc::server_error:
      return "server_error";
    case provider_errc::transport:
      return "transport";
    case provider_errc::incomplete_stream:
      return "incomplete_stream";
    case provider_errc::timeout:
      return "timeout";
    case provider_errc::auth:
      return "auth";
    case provider_errc::quota:
      return "quota";
    case provider_errc::invalid_request:
      return "invalid_request";
    case provider_errc::context_overflow:
      return "context_overflow";
    case provider_errc::bad_response:
      return "bad_response";
    case provider_errc::cancelled:
      return "cancelled";
  }
  return "error";
}

std::optional<double> number(std::string_view s) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  double v = 0;
  const auto* end = s.data() + s.size();
  auto [p, ec] = std::from_chars(s.data(), end, v);
  if (s.empty() || ec != std::errc{} || p != end) return std::nullopt;
  return v;
}

std::optional<std::chrono::system_clock::time_point> http_date(const std::string& s) {
  std::tm tm{};
  // IMF-fixdate, the only form servers send today: "Sun, 06 Nov 1994 08:49:37 GMT".
  const char* end = strptime(s.c_str(), "%a, %d %b %Y %H:%M:%S GMT", &tm);
  if (end == nullptr) return std::nullopt;
  return std::chrono::system_clock::from_time_t(timegm(&tm));
}

}  // namespace

std::optional<std::chrono::milliseconds> parse_retry_after(const http::http_response_head& head,
                                                           std::chrono::system_clock::time_point now) {
  using std::chrono::milliseconds;
  const auto clamp = [](double ms) { return milliseconds(static_cast<std::int64_t>(std::max(ms, 0.0))); };
  if (const auto ms = number(head.header("retry-after-ms")); ms && *ms < 1e12) return clamp(*ms);
  const std::string ra = head.header("retry-after");
  if (ra.empty()) return std::nullopt;
  if (const auto s = number(ra)) return *s < 1e9 ? clamp(*s * 1000) : milliseconds(0);
  if (const auto at = http_date(ra))
    return std::max(std::chrono::duration_cast<milliseconds>(*at - now), milliseconds(0));
  return std::nullopt;
}

failure_info classify_http_error(const http::http_response_head& head, std::string_view body,
                                 std::chrono::system_clock::time_point now) {
  failure_info f;
  f.http_status = head.status;
  f.request_sent = true;
  error_words w;
  if (auto parsed = words_of_body(body))
    w = std::move(*parsed);
  else
    w.message = text_of_page(body);
  f.kind = kind_of(head.status, w);
  f.retry_after = parse_retry_after(head, now);
  f.provider_message = one_line(w.message);
  f.message = fmt::format("HTTP {} {}: {}", head.status, kind_name(f.kind),
                          f.provider_message.empty() ? head.reason : f.provider_message);
  return f;
}

failure_info classify_error_object(const boost::json::value& error) {
  failure_info f;
  f.request_sent = true;
  const error_words w = words_of(error);
  const int status = w.status >= 400 && w.status <= 599 ? w.status : 0;
  f.kind = kind_of(status, w);
  f.provider_message = one_line(w.message);
  const std::string label = w.type.empty() ? w.code : w.type;
  f.message =
      fmt::format("stream error {}{}{}: {}", kind_name(f.kind), label.empty() ? "" : " ", label, f.provider_message);
  return f;
}

void redact(std::string& text, std::string_view secret) {
  if (secret.empty()) return;
  for (auto pos = text.find(secret); pos != std::string::npos; pos = text.find(secret, pos))
    text.replace(pos, secret.size(), "[redacted]");
}

}  // namespace tether::runtime::native
