#include "work/fingerprint.h"

#include <algorithm>

#include <boost/json.hpp>

#include "util/sha256.h"

namespace tether::work {

namespace json = boost::json;

namespace {

constexpr std::string_view redacted = "[redacted]";

// `v` in canonical form: keys sorted, volatile keys gone, secrets redacted;
// `presence` turns each member's value into true (one level: the
// environment's names).
json::value canonical(const json::value& v, const fingerprint_rules& rules, bool presence) {
  if (const auto* o = v.if_object()) {
    std::vector<std::string_view> keys;
    for (const auto& kv : *o)
      if (!rules.volatile_keys.contains(kv.key())) keys.push_back(kv.key());
    std::sort(keys.begin(), keys.end());
    json::object out;
    for (const auto k : keys) {
      if (presence)
        out[k] = true;
      else if (secret_key(k, rules))
        out[k] = redacted;
      else
        out[k] = canonical(o->at(k), rules, false);
    }
    return out;
  }
  if (const auto* a = v.if_array()) {
    json::array out;
    for (const auto& el : *a) out.push_back(canonical(el, rules, false));
    return out;
  }
  return v;
}

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() > suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

}  // namespace

const std::vector<std::string_view>& session_categories() {
  static const std::vector<std::string_view> all{category::runtime,        category::runtime_config,
                                                 category::model,          category::instructions,
                                                 category::task_overrides, category::workspace_config,
                                                 category::environment,    category::secrets};
  return all;
}

const std::vector<std::string_view>& workspace_categories() {
  static const std::vector<std::string_view> all{category::mode,         category::project_workspace,
                                                 category::strategy,     category::repositories,
                                                 category::lifecycle_commands, category::environment};
  return all;
}

bool secret_key(std::string_view key, const fingerprint_rules& rules) {
  if (rules.secret_keys.contains(key)) return true;
  return ends_with(key, "_key") || ends_with(key, "_token") || ends_with(key, "_password") ||
         ends_with(key, "_secret");
}

std::string canonical_json(const json::value& v, const fingerprint_rules& rules) {
  return json::serialize(canonical(v, rules, rules.presence_only && v.is_object()));
}

std::string fingerprint(const json::value& v, const fingerprint_rules& rules) {
  return "v1:sha256:" + sha256_hex(canonical_json(v, rules));
}

std::vector<std::string> changed_categories(const fingerprints& before, const fingerprints& now,
                                            const std::vector<std::string_view>& order) {
  std::set<std::string, std::less<>> changed;
  for (const auto& [k, v] : now)
    if (const auto it = before.find(k); it == before.end() || it->second != v) changed.insert(k);
  for (const auto& [k, v] : before)
    if (!now.contains(k)) changed.insert(k);
  std::vector<std::string> out;
  for (const auto c : order)
    if (const auto it = changed.find(c); it != changed.end()) {
      out.push_back(*it);
      changed.erase(it);
    }
  out.insert(out.end(), changed.begin(), changed.end());
  return out;
}

std::string_view to_string(session_decision d) {
  switch (d) {
    case session_decision::fresh:
      return "fresh";
    case session_decision::reuse:
      return "reuse";
    case session_decision::reset:
      return "reset";
  }
  return "fresh";
}

std::string_view to_string(workspace_decision d) {
  switch (d) {
    case workspace_decision::create:
      return "create";
    case workspace_decision::reuse:
      return "reuse";
    case workspace_decision::refresh:
      return "refresh";
    case workspace_decision::replace:
      return "replace";
  }
  return "create";
}

session_freshness decide_session(const std::optional<fingerprints>& before, const fingerprints& now) {
  if (!before) return {session_decision::fresh, {}};
  auto changed = changed_categories(*before, now, session_categories());
  if (changed.empty()) return {session_decision::reuse, {}};
  return {session_decision::reset, std::move(changed)};
}

workspace_freshness decide_workspace(const std::optional<fingerprints>& before, const fingerprints& now) {
  if (!before) return {workspace_decision::create, {}};
  auto changed = changed_categories(*before, now, workspace_categories());
  if (changed.empty()) return {workspace_decision::reuse, {}};
  if (changed.size() == 1 && changed.front() == category::lifecycle_commands)
    return {workspace_decision::refresh, std::move(changed)};
  return {workspace_decision::replace, std::move(changed)};
}

namespace {

json::value set_json(const std::optional<fingerprints>& f) {
  if (!f) return nullptr;
  json::object o;
  for (const auto& [k, v] : *f) o[k] = v;
  return o;
}

json::array reasons_json(const std::vector<std::string>& reasons) {
  json::array out;
  for (const auto& r : reasons) out.emplace_back(r);
  return out;
}

}  // namespace

json::value to_json(const session_freshness& s, const std::optional<fingerprints>& session_before,
                    const fingerprints& session_now, const workspace_freshness& w,
                    const std::optional<fingerprints>& workspace_before, const fingerprints& workspace_now) {
  return json::object{{"session", json::object{{"decision", to_string(s.decision)},
                                               {"reasons", reasons_json(s.reasons)},
                                               {"before", set_json(session_before)},
                                               {"now", set_json(session_now)}}},
                      {"workspace", json::object{{"decision", to_string(w.decision)},
                                                 {"reasons", reasons_json(w.reasons)},
                                                 {"before", set_json(workspace_before)},
                                                 {"now", set_json(workspace_now)}}}};
}

}  // namespace tether::work
