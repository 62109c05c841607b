#include "mock/usage.h"

#include <algorithm>
#include <iterator>

#include <boost/json/serialize.hpp>

namespace tether::mock {

namespace {

constexpr std::uint64_t fnv_offset = 1469598103934665603ULL;
constexpr std::uint64_t fnv_prime = 1099511628211ULL;

std::uint64_t code_points(std::string_view s) {
  std::uint64_t n = 0;
  for (const unsigned char ch : s)
    if ((ch & 0xC0U) != 0x80U) ++n;
  return n;
}

std::uint64_t tokens_of(std::uint64_t chars) { return (chars + 3) / 4; }

}  // namespace

std::uint64_t count_tokens(std::string_view text) { return tokens_of(code_points(text)); }

std::vector<std::string> canonical_messages(const conversation& c) {
  std::vector<std::string> out;
  out.reserve(c.messages.size());
  for (const auto& m : c.messages) {
    std::string s(to_string(m.role));
    if (m.role == role::tool_result) s += " " + m.call_id + (m.is_error ? " error" : "");
    s += "\n";
    s += m.text;
    for (const auto& call : m.calls) s += "\ncall " + call.id + " " + call.name + " " + call.arguments;
    s += "\n\n";
    out.push_back(std::move(s));
  }
  return out;
}

std::string canonical_tools(const conversation& c) {
  std::string s;
  for (const auto& t : c.tools) {
    s += "tool " + t.name + "\n" + t.description + "\n";
    if (!t.schema.empty()) s += boost::json::serialize(t.schema);
    s += "\n\n";
  }
  return s;
}

std::vector<std::string> canonical_segments(const conversation& c) {
  auto messages = canonical_messages(c);
  std::vector<std::string> out;
  out.reserve(messages.size() + 1);
  out.push_back(canonical_tools(c));
  std::move(messages.begin(), messages.end(), std::back_inserter(out));
  return out;
}

std::uint64_t input_tokens(const conversation& c) {
  std::uint64_t chars = code_points(canonical_tools(c));
  for (const auto& m : canonical_messages(c)) chars += code_points(m);
  return tokens_of(chars);
}

std::uint64_t output_tokens(const model_output& out) {
  if (out.call) return tokens_of(code_points(out.call->name) + code_points(out.call->arguments));
  return count_tokens(out.text);
}

std::uint64_t prompt_cache::lookup_and_remember(const std::vector<std::string>& canonical) {
  std::uint64_t hash = fnv_offset;
  std::uint64_t chars = 0;
  std::uint64_t cached_chars = 0;
  std::vector<std::pair<std::uint64_t, std::uint64_t>> boundaries;
  boundaries.reserve(canonical.size());
  for (const auto& m : canonical) {
    for (const unsigned char ch : m) {
      hash ^= ch;
      hash *= fnv_prime;
    }
    chars += code_points(m);
    boundaries.emplace_back(hash, chars);
    if (const auto it = prefixes_.find(hash); it != prefixes_.end() && it->second == chars) cached_chars = chars;
  }
  for (const auto& [h, n] : boundaries) {
    if (!prefixes_.emplace(h, n).second) continue;
    order_.push_back(h);
    if (order_.size() > max_) {
      prefixes_.erase(order_.front());
      order_.pop_front();
    }
  }
  return tokens_of(cached_chars);
}

}  // namespace tether::mock
