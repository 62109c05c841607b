#include "runtime/native/providers/cassette.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <ctime>
#include <fstream>
#include <memory>
#include <sstream>

#include <boost/asio/io_context.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include "http/client.h"
#include "runtime/native/providers/wire.h"
#include "support/run.h"

namespace tether::runtime::native::testing {

namespace json = boost::json;
namespace asio = boost::asio;

namespace {

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(a[i])) != std::tolower(static_cast<unsigned char>(b[i]))) return false;
  return true;
}

// Splits "name: value" lines up to the first empty line; returns the rest.
std::string_view header_lines(std::string_view text, std::vector<std::pair<std::string, std::string>>& out) {
  while (!text.empty()) {
    const auto eol = text.find('\n');
    std::string_view line = text.substr(0, eol);
    text = eol == std::string_view::npos ? std::string_view() : text.substr(eol + 1);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty()) break;
    const auto colon = line.find(':');
    std::string_view value = line.substr(colon + 1);
    while (!value.empty() && value.front() == ' ') value.remove_prefix(1);
    out.emplace_back(std::string(line.substr(0, colon)), std::string(value));
  }
  return text;
}

std::string first_line(std::string_view& text) {
  const auto eol = text.find('\n');
  std::string line(text.substr(0, eol));
  text = eol == std::string_view::npos ? std::string_view() : text.substr(eol + 1);
  if (!line.empty() && line.back() == '\r') line.pop_back();
  return line;
}

bool recording_enabled() {
  const char* v = std::getenv("TETHER_RECORD");
  return v != nullptr && std::string_view(v) == "1";
}

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v == nullptr ? std::string() : std::string(v);
}

asio::awaitable<stream_outcome> drive(std::shared_ptr<provider> p, model_request request,
                                      std::shared_ptr<std::vector<std::string>> events) {
  stream_sink sink = [events](const stream_event& e) { events->push_back(describe(e)); };
  auto outcome = co_await p->stream(std::move(request), std::move(sink), std::stop_token());
  co_return outcome;
}

}  // namespace

void cassette_recorder::on_request(const http::http_request& r) {
  method_ = r.method;
  const auto scheme = r.url.find("://");
  const auto slash = r.url.find('/', scheme == std::string::npos ? 0 : scheme + 3);
  path_ = slash == std::string::npos ? "/" : r.url.substr(slash);
  host_ = r.url.substr(0, slash);
  headers_.clear();
  for (const auto& h : r.headers) {
    const bool secret = iequals(h.name, "authorization") || iequals(h.name, "x-api-key");
    headers_ += h.name + ": " + (secret ? std::string("[redacted]") : h.value) + "\n";
  }
  body_ = r.body;
}

void cassette_recorder::on_head(const http::http_response_head& h) {
  head_ = "HTTP/1.1 " + std::to_string(h.status) + " " + h.reason + "\n";
  for (const auto& x : h.headers) {
    if (iequals(x.name, "set-cookie") || iequals(x.name, "openai-organization")) continue;
    head_ += x.name + ": " + x.value + "\n";
  }
}

void cassette_recorder::on_body(std::string_view bytes) { response_.append(bytes); }

void cassette_recorder::write(const std::filesystem::path& file) const {
  std::ofstream out(file, std::ios::binary | std::ios::trunc);
  const std::time_t now = std::time(nullptr);
  char date[32];
  std::strftime(date, sizeof date, "%Y-%m-%d", std::gmtime(&now));
  out << "# Recorded from " << host_ << " with TETHER_RECORD=1 on " << date << ".\n";
  out << "### request\n" << method_ << " " << path_ << "\n" << headers_ << "\n" << body_ << "\n";
  out << "### response\n" << head_ << "\n" << response_;
}

std::filesystem::path recordings_dir() {
  // Set by CMake: __FILE__ is relative under ccache's base_dir rewriting.
  return std::filesystem::path(TETHER_RECORDINGS_DIR);
}

cassette load_cassette(const std::string& name) { return load_cassette_file(recordings_dir() / (name + ".http")); }

cassette load_cassette_file(const std::filesystem::path& file) {
  const std::string name = file.filename().string();
  std::ifstream in(file, std::ios::binary);
  if (!in) throw std::runtime_error("no cassette " + file.string());
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string text = ss.str();
  const auto req_at = text.find("### request\n");
  const auto resp_at = text.find("### response\n");
  if (req_at == std::string::npos || resp_at == std::string::npos) throw std::runtime_error("bad cassette " + name);
  cassette c;
  std::string_view req = std::string_view(text).substr(req_at + 12, resp_at - req_at - 12);
  const std::string line = first_line(req);
  c.method = line.substr(0, line.find(' '));
  c.path = line.substr(line.find(' ') + 1);
  c.request_body = std::string(header_lines(req, c.request_headers));
  std::string_view resp = std::string_view(text).substr(resp_at + 13);
  c.status_line = first_line(resp);
  std::vector<std::pair<std::string, std::string>> headers;
  c.body = std::string(header_lines(resp, headers));
  for (auto& h : headers) {
    if (iequals(h.first, "content-length") || iequals(h.first, "transfer-encoding") || iequals(h.first, "connection"))
      continue;
    c.response_headers.push_back(std::move(h));
  }
  return c;
}

std::string response_head(const cassette& c) {
  std::string head = c.status_line + "\r\n";
  for (const auto& [k, v] : c.response_headers) head += k + ": " + v + "\r\n";
  return head;
}

std::string json_subset_mismatch(const json::value& actual, const json::value& expected, const std::string& path) {
  if (expected.is_object()) {
    if (!actual.is_object()) return path + " is not an object";
    for (const auto& [k, v] : expected.get_object()) {
      const auto* a = actual.get_object().if_contains(k);
      const std::string sub = path + "." + std::string(k);
      if (a == nullptr) return sub + " is missing";
      if (auto m = json_subset_mismatch(*a, v, sub); !m.empty()) return m;
    }
    return {};
  }
  if (expected.is_array()) {
    if (!actual.is_array()) return path + " is not an array";
    const auto& a = actual.get_array();
    const auto& e = expected.get_array();
    if (a.size() != e.size())
      return path + " has " + std::to_string(a.size()) + " elements, expected " + std::to_string(e.size());
    for (std::size_t i = 0; i < e.size(); ++i)
      if (auto m = json_subset_mismatch(a[i], e[i], path + "[" + std::to_string(i) + "]"); !m.empty()) return m;
    return {};
  }
  if (actual != expected) return path + " is " + json::serialize(actual) + ", expected " + json::serialize(expected);
  return {};
}

std::string describe(const stream_event& e) {
  return std::visit(
      [](const auto& ev) -> std::string {
        using T = std::decay_t<decltype(ev)>;
        if constexpr (std::is_same_v<T, text_delta_event>)
          return "text " + json::serialize(json::value(ev.text));
        else if constexpr (std::is_same_v<T, reasoning_delta_event>)
          return "reasoning " + json::serialize(json::value(ev.text));
        else if constexpr (std::is_same_v<T, tool_input_delta_event>)
          return "tool_delta " + std::to_string(ev.index) + " " + ev.id + " " + ev.name + " " +
                 json::serialize(json::value(ev.json_fragment));
        else if constexpr (std::is_same_v<T, tool_call_event>)
          return std::string(ev.call.hosted ? "hosted_call " : "call ") + ev.call.id + " " + ev.call.name + " " +
                 json::serialize(ev.call.input);
        else if constexpr (std::is_same_v<T, hosted_result_event>)
          return "hosted_result " + ev.result.call_id + " " + json::serialize(ev.result.content);
        else
          return "reasoning_state " + ev.state.provider + " " + ev.state.model + " " + json::serialize(ev.state.data);
      },
      e);
}

play_result run_stream(provider_options options, model_request request) {
  asio::io_context io;
  auto events = std::make_shared<std::vector<std::string>>();
  std::shared_ptr<provider> p = make_provider(std::move(options));
  play_result out;
  out.outcome = tether::test::run_sync(io, drive(p, std::move(request), events));
  out.events = *events;
  return out;
}

play_result play(const std::string& name, wire_api api, model_request request, play_options opts) {
  const cassette c = load_cassette(name);
  provider_options o;
  o.api = api;
  o.model = request.model;
  o.max_response_bytes = opts.max_response_bytes;
  o.http_proxy = o.https_proxy = o.no_proxy = std::string();  // never a proxy from the test's environment

  if (recording_enabled() && opts.record == recordable::yes) {
    const bool anthropic = api == wire_api::anthropic;
    const std::string key = env(anthropic ? "ANTHROPIC_API_KEY" : "OPENAI_API_KEY");
    if (!key.empty()) {
      o.api_key = key;
      o.base_url = env(anthropic ? "ANTHROPIC_BASE_URL" : "OPENAI_BASE_URL");
      o.http_proxy = o.https_proxy = o.no_proxy = std::nullopt;  // live: the environment's proxies
      auto tap = std::make_shared<cassette_recorder>();
      o.tap = tap;
      play_result out = run_stream(std::move(o), std::move(request));
      tap->write(recordings_dir() / (name + ".http"));
      out.recorded = true;
      return out;
    }
  }

  response_plan plan;
  plan.head = response_head(c);
  plan.body = c.body;
  plan.frame = opts.frame;
  plan.piece = opts.piece;
  plan.cut_after = opts.cut_after;
  loopback_server server(plan);
  const std::string_view suffix = api == wire_api::openai_chat        ? "/chat/completions"
                                  : api == wire_api::openai_responses ? "/responses"
                                                                      : "/messages";
  o.base_url = server.url(std::string_view(c.path).substr(0, c.path.size() - suffix.size()));
  o.api_key = opts.api_key;
  play_result out = run_stream(std::move(o), std::move(request));
  const auto seen = server.requests();
  if (seen.empty()) return out;
  out.request = seen.front();
  const auto& r = *out.request;
  EXPECT_EQ(r.method, c.method) << name;
  EXPECT_EQ(r.target, c.path) << name;
  for (const auto& [k, v] : c.request_headers) {
    if (iequals(k, "authorization") || iequals(k, "x-api-key")) {
      EXPECT_TRUE(r.has_header(k)) << name << ": no " << k;
      continue;
    }
    EXPECT_EQ(r.header(k), v) << name << ": header " << k;
  }
  if (c.request_body.find_first_not_of(" \n\r\t") != std::string::npos) {
    boost::system::error_code ec;
    const auto expected = json::parse(c.request_body, ec);
    EXPECT_FALSE(ec) << name << ": the cassette's request JSON does not parse";
    const auto actual = json::parse(r.body, ec);
    EXPECT_FALSE(ec) << name << ": the client sent a body that is not JSON";
    if (!ec) {
      EXPECT_EQ(json_subset_mismatch(actual, expected), "") << name;
    }
  }
  return out;
}

json::object build_body(wire_api api, const model_request& request, provider_options options) {
  options.api = api;
  auto mapper = make_wire_mapper(std::move(options), stream_sink());
  const auto req = mapper->build(request);
  return json::parse(req.body).as_object();
}

fed_stream feed_mapper(wire_api api, std::string_view body, const std::vector<std::size_t>& cuts, std::string model) {
  provider_options o;
  o.api = api;
  o.model = std::move(model);
  fed_stream out;
  auto mapper = make_wire_mapper(o, [&out](const stream_event& e) { out.events.push_back(describe(e)); });
  sse_parser sse;
  std::size_t at = 0;
  std::vector<std::size_t> ends = cuts;
  ends.push_back(body.size());
  for (const auto end : ends) {
    for (const auto& ev : sse.feed(body.substr(at, end - at))) {
      if (out.failure || mapper->ended()) break;
      out.failure = mapper->on_event(ev);
    }
    at = end;
  }
  sse.finish();
  out.ended = mapper->ended();
  out.output_seen = mapper->output_seen();
  out.done = mapper->take();
  return out;
}

}  // namespace tether::runtime::native::testing
