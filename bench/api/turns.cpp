#include "api/turns.h"

#include <algorithm>
#include <cstdlib>
#include <sstream>
#include <stdexcept>
#include <unordered_map>

#include <boost/json.hpp>

#include "client/client.h"

namespace tether::bench::api {

namespace json = boost::json;

std::string prompt(const std::string& session, int k) {
  return "Reply with exactly: " + session + " turn " + std::to_string(k);
}

namespace {

// The text of the last user message that holds a "Reply with exactly:" line.
std::string marker_of(const json::value& body) {
  const auto* msgs = body.is_object() ? body.as_object().if_contains("messages") : nullptr;
  if (msgs == nullptr || !msgs->is_array()) return "";
  const auto& arr = msgs->as_array();
  for (auto it = arr.rbegin(); it != arr.rend(); ++it) {
    if (!it->is_object()) continue;
    const auto& m = it->as_object();
    const auto* role = m.if_contains("role");
    if (role == nullptr || !role->is_string() || role->as_string() != "user") continue;
    std::string text;
    if (const auto* c = m.if_contains("content")) {
      if (c->is_string()) {
        text = c->as_string();
      } else if (c->is_array()) {
        for (const auto& part : c->as_array())
          if (part.is_object())
            if (const auto* t = part.as_object().if_contains("text"); t && t->is_string()) text += t->as_string();
      }
    }
    constexpr std::string_view key = "Reply with exactly: ";
    const auto at = text.rfind(key);
    if (at == std::string::npos) continue;
    auto line = text.substr(at + key.size());
    return line.substr(0, line.find('\n'));
  }
  return "";
}

}  // namespace

model_match match_model_requests(unsigned short mock_port, std::size_t* mark, std::vector<turn>& turns,
                                 const std::vector<std::string>& session_ids) {
  model_match m;
  std::unordered_map<std::string, std::size_t> by_marker;
  for (std::size_t i = 0; i < turns.size(); ++i)
    if (turns[i].number > 0) by_marker[session_ids[turns[i].session] + " turn " + std::to_string(turns[i].number)] = i;
  client::client_options o;
  o.server = "http://127.0.0.1:" + std::to_string(mock_port);
  auto r = client::api_client(o).get("/_mock/requests?after=" + std::to_string(*mark));
  if (!r || !r->is_object()) throw std::runtime_error("GET /_mock/requests: " + (r ? std::string("not an object") : r.error().message));
  for (const auto& rec : r->at("requests").as_array()) {
    const auto& o = rec.as_object();
    ++m.requests;
    *mark = std::max<std::size_t>(*mark, static_cast<std::size_t>(o.at("seq").to_number<std::int64_t>()));
    const auto it = by_marker.find(marker_of(o.at("body")));
    if (it == by_marker.end()) {
      ++m.unmatched;
      continue;
    }
    auto& t = turns[it->second];
    const auto received = o.at("received_us").to_number<std::int64_t>();
    const auto* completed = o.if_contains("completed_us");
    if (completed == nullptr) {
      ++m.incomplete;
      continue;
    }
    if (t.model_requests == 0 || received < t.model_received_us) t.model_received_us = received;
    t.model_us += completed->to_number<std::int64_t>() - received;
    t.model_completed_us = std::max(t.model_completed_us, completed->to_number<std::int64_t>());
    ++t.model_requests;
  }
  return m;
}

std::map<std::string, double> server_metrics(unsigned short port, const std::string& token) {
  std::map<std::string, double> out;
  client::client_options o;
  o.server = "http://127.0.0.1:" + std::to_string(port);
  o.token = token;
  auto r = client::api_client(o).raw("GET", "/metrics");
  if (!r || r->status != 200) return out;
  std::istringstream in(r->body);
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#' || line.find("_bucket") != std::string::npos) continue;
    const auto sp = line.rfind(' ');
    if (sp == std::string::npos) continue;
    out[line.substr(0, sp)] = std::strtod(line.c_str() + sp + 1, nullptr);
  }
  return out;
}

double metric(const std::map<std::string, double>& m, const std::string& name) {
  auto it = m.find(name);
  return it == m.end() ? 0 : it->second;
}

}  // namespace tether::bench::api
