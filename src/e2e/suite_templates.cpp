#include "e2e/suite.h"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "util/random.h"

namespace tether::e2e {

namespace {

// Walks a template: on_literal(text) for literal runs, on_name(name) for each
// `{name}`. See suite.h for the brace rules.
template <class Literal, class Name>
void scan_template(std::string_view text, Literal on_literal, Name on_name) {
  std::size_t i = 0;
  while (i < text.size()) {
    const char c = text[i];
    if ((c == '{' || c == '}') && i + 1 < text.size() && text[i + 1] == c) {
      on_literal(text.substr(i, 1));
      i += 2;
      continue;
    }
    const auto close = c == '{' ? text.find_first_of("{}", i + 1) : std::string_view::npos;
    if (close != std::string_view::npos && text[close] == '}') {
      on_name(text.substr(i + 1, close - i - 1));
      i = close + 1;
      continue;
    }
    on_literal(text.substr(i, 1));
    ++i;
  }
}

std::optional<std::string> template_value(std::string_view name, const template_values& v) {
  if (name == "nonce") return v.nonce;
  if (name == "marker") return "MARK-" + v.nonce;
  if (name == "phrase") return "phrase-" + v.nonce;
  if (name == "cell") return v.cell;
  if (name == "runtime") return v.runtime;
  if (name == "environment") return v.environment;
  if (name == "repos") return v.repos;
  if (name.size() == 7 && name.starts_with("marker") && name[6] >= '1' && name[6] <= '9')
    return "MARK" + std::string(1, name[6]) + "-" + v.nonce;
  return std::nullopt;
}

}  // namespace

result<std::string> expand(std::string_view text, const template_values& v) {
  std::string out;
  std::optional<std::string> unknown;
  scan_template(
      text, [&](std::string_view lit) { out += lit; },
      [&](std::string_view name) {
        auto value = template_value(name, v);
        if (value)
          out += *value;
        else if (!unknown)
          unknown = std::string(name);
      });
  if (unknown) return make_error(e2e_errc::invalid_definition, fmt::format("unknown template name {{{}}}", *unknown));
  return out;
}

std::vector<std::string> unknown_template_names(std::string_view text) {
  std::vector<std::string> unknown;
  const template_values probe;
  scan_template(
      text, [](std::string_view) {},
      [&](std::string_view name) {
        if (!template_value(name, probe) && std::find(unknown.begin(), unknown.end(), name) == unknown.end())
          unknown.emplace_back(name);
      });
  return unknown;
}

namespace {

result<void> expand_in_place(std::string& text, const template_values& v) {
  auto e = expand(text, v);
  if (!e) return e.error();
  text = std::move(*e);
  return ok();
}

}  // namespace

result<step> expand_step(const step& s, const template_values& v) {
  step out = s;
  for (auto* field : {&out.text, &out.option, &out.other, &out.path, &out.name, &out.project, &out.reason})
    TETHER_TRY(expand_in_place(*field, v));
  for (auto& r : out.repositories) TETHER_TRY(expand_in_place(r.content, v));
  for (auto& c : out.setup) TETHER_TRY(expand_in_place(c, v));
  return out;
}

result<matcher_spec> expand_matcher(const matcher_spec& m, const template_values& v) {
  matcher_spec out = m;
  for (auto* field : {&out.text, &out.path, &out.content, &out.value}) TETHER_TRY(expand_in_place(*field, v));
  for (auto& t : out.texts) TETHER_TRY(expand_in_place(t, v));
  return out;
}

std::string make_nonce(int attempt) { return random_hex(6) + "-" + std::to_string(attempt); }
}  // namespace tether::e2e
