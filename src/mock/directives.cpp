#include "mock/directives.h"

#include <cctype>
#include <charconv>

#include <boost/json/parse.hpp>

namespace tether::mock {

namespace {

char lower(char c) { return static_cast<char>(std::tolower(static_cast<unsigned char>(c))); }

std::string to_lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = lower(c);
  return out;
}

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v'; }

// Drops one list marker ("- ", "* ", "+ ", "• ", ">", "12. ", "3) ") if the
// line starts with one; returns whether it did.
bool drop_marker(std::string_view& s) {
  static constexpr std::string_view bullet = "\xE2\x80\xA2";
  auto followed_by_space = [&](std::size_t n) { return s.size() == n || is_space(s[n]); };
  if (s.starts_with('>')) {
    s.remove_prefix(1);
    return true;
  }
  if ((s.starts_with('-') || s.starts_with('*') || s.starts_with('+')) && followed_by_space(1)) {
    s.remove_prefix(1);
    return true;
  }
  if (s.starts_with(bullet) && followed_by_space(bullet.size())) {
    s.remove_prefix(bullet.size());
    return true;
  }
  std::size_t digits = 0;
  while (digits < s.size() && digits < 4 && std::isdigit(static_cast<unsigned char>(s[digits])) != 0) ++digits;
  if (digits > 0 && digits < s.size() && (s[digits] == '.' || s[digits] == ')') && followed_by_space(digits + 1)) {
    s.remove_prefix(digits + 1);
    return true;
  }
  return false;
}

// The argument after a "Keyword:" prefix, trimmed.
std::string_view after(std::string_view line, std::string_view prefix) { return trim(line.substr(prefix.size())); }

// "Recall the phrase", "Recall the phrase." — nothing else may follow.
bool bare(std::string_view line, std::string_view prefix) {
  if (!starts_with_nocase(line, prefix)) return false;
  const auto rest = after(line, prefix);
  return rest.empty() || rest == "." || rest == "!";
}

std::vector<std::string> split(std::string_view s, char sep) {
  std::vector<std::string> out;
  for (;;) {
    const auto pos = s.find(sep);
    const auto part = trim(s.substr(0, pos));
    if (!part.empty()) out.emplace_back(part);
    if (pos == std::string_view::npos) break;
    s.remove_prefix(pos + 1);
  }
  return out;
}

std::string unescape_newlines(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 1 < s.size() && s[i + 1] == 'n') {
      out.push_back('\n');
      ++i;
    } else {
      out.push_back(s[i]);
    }
  }
  return out;
}

directive invalid(std::string message) {
  directive d;
  d.kind = directive_kind::invalid;
  d.text = std::move(message);
  return d;
}

directive simple(directive_kind k, std::string_view text = {}) {
  directive d;
  d.kind = k;
  d.text = std::string(text);
  return d;
}

directive parse_write_file(std::string_view rest) {
  // "PATH: CONTENT", or "PATH:" for an empty file.
  std::string_view path;
  std::string_view content;
  if (const auto pos = rest.find(": "); pos != std::string_view::npos) {
    path = trim(rest.substr(0, pos));
    content = rest.substr(pos + 2);
    while (!content.empty() && content.front() == ' ') content.remove_prefix(1);
  } else if (rest.ends_with(':')) {
    path = trim(rest.substr(0, rest.size() - 1));
  }
  if (path.empty()) return invalid("cannot read directive: Write file PATH: CONTENT");
  directive d = simple(directive_kind::write_file, unescape_newlines(content));
  d.path = std::string(path);
  return d;
}

directive parse_append_line(std::string_view rest) {
  const auto pos = rest.rfind(" to ");
  if (pos == std::string_view::npos || trim(rest.substr(pos + 4)).empty())
    return invalid("cannot read directive: Append line TEXT to PATH");
  directive d = simple(directive_kind::append_line, rest.substr(0, pos));
  d.path = std::string(trim(rest.substr(pos + 4)));
  return d;
}

directive parse_ask(std::string_view rest) {
  auto parts = split(rest, '|');
  if (parts.empty()) return invalid("cannot read directive: Ask: QUESTION | OPTION | OPTION");
  directive d = simple(directive_kind::ask, parts.front());
  d.items.assign(std::make_move_iterator(parts.begin() + 1), std::make_move_iterator(parts.end()));
  return d;
}

directive parse_tool(std::string_view rest) {
  std::size_t end = 0;
  while (end < rest.size() && !is_space(rest[end]) && rest[end] != '{') ++end;
  const auto name = rest.substr(0, end);
  if (name.empty()) return invalid("cannot read directive: Tool: NAME {JSON}");
  const auto json_text = trim(rest.substr(end));
  directive d = simple(directive_kind::tool);
  d.name = std::string(name);
  if (json_text.empty()) {
    d.input = boost::json::object();
    return d;
  }
  boost::system::error_code ec;
  d.input = boost::json::parse(json_text, ec);
  if (ec) return invalid("cannot read directive: Tool: " + d.name + " has invalid JSON input (" + ec.message() + ")");
  return d;
}

directive parse_stream_slowly(std::string_view rest) {
  if (rest.ends_with("ms") || rest.ends_with("MS")) rest = trim(rest.substr(0, rest.size() - 2));
  long ms = 0;
  const auto [ptr, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), ms);
  if (ec != std::errc() || ptr != rest.data() + rest.size() || ms < 0 || ms > 60'000)
    return invalid("cannot read directive: Stream slowly: MS (0 to 60000)");
  directive d = simple(directive_kind::stream_slowly);
  d.interval = std::chrono::milliseconds(ms);
  return d;
}

directive parse_fail(std::string_view rest) {
  while (!rest.empty() && rest.back() == '.') rest.remove_suffix(1);
  auto words = split(to_lower(rest), ' ');
  std::optional<fail_kind> kind;
  if (!words.empty()) kind = parse_fail_kind(words[0]);
  const bool once = words.size() == 2 && words[1] == "once";
  if (!kind || words.size() > 2 || (words.size() == 2 && !once))
    return invalid(
        "cannot read directive: Fail with: KIND [once], KIND one of rate_limit, server_error, "
        "overloaded, auth, overflow, disconnect");
  directive d = simple(directive_kind::fail);
  d.fail = *kind;
  d.once = once;
  return d;
}

std::optional<directive> parse_line(std::string_view raw) {
  const auto line = trim(strip_line_prefix(raw));
  auto rest_of = [&](std::string_view prefix) { return after(line, prefix); };
  if (starts_with_nocase(line, "reply with exactly:")) {
    const auto text = rest_of("reply with exactly:");
    if (text.empty()) return invalid("cannot read directive: Reply with exactly: TEXT (TEXT is empty)");
    return simple(directive_kind::reply_exactly, text);
  }
  if (starts_with_nocase(line, "remember the phrase:"))
    return simple(directive_kind::remember, rest_of("remember the phrase:"));
  if (bare(line, "recall the phrase")) return simple(directive_kind::recall);
  if (bare(line, "reply with the answer")) return simple(directive_kind::reply_answer);
  if (starts_with_nocase(line, "run:")) {
    const auto cmd = rest_of("run:");
    if (cmd.empty()) return invalid("cannot read directive: Run: COMMAND (COMMAND is empty)");
    return simple(directive_kind::run, cmd);
  }
  if (starts_with_nocase(line, "write file ")) return parse_write_file(rest_of("write file "));
  if (starts_with_nocase(line, "append line ")) return parse_append_line(rest_of("append line "));
  if (starts_with_nocase(line, "ask:")) return parse_ask(rest_of("ask:"));
  if (starts_with_nocase(line, "plan:")) {
    directive d = simple(directive_kind::plan);
    d.items = split(rest_of("plan:"), ';');
    if (d.items.empty()) return invalid("cannot read directive: Plan: STEP ; STEP (no steps)");
    return d;
  }
  if (starts_with_nocase(line, "tool:")) return parse_tool(rest_of("tool:"));
  if (starts_with_nocase(line, "wait for file ")) {
    directive d = simple(directive_kind::wait_for_file);
    d.path = std::string(rest_of("wait for file "));
    if (d.path.empty()) return invalid("cannot read directive: Wait for file PATH");
    return d;
  }
  if (starts_with_nocase(line, "stream slowly:")) return parse_stream_slowly(rest_of("stream slowly:"));
  if (starts_with_nocase(line, "fail with:")) return parse_fail(rest_of("fail with:"));
  return std::nullopt;
}

}  // namespace

bool is_action(directive_kind k) {
  switch (k) {
    case directive_kind::run:
    case directive_kind::write_file:
    case directive_kind::append_line:
    case directive_kind::ask:
    case directive_kind::plan:
    case directive_kind::tool:
    case directive_kind::wait_for_file:
      return true;
    default:
      return false;
  }
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (is_space(s.front()) || s.front() == '\n')) s.remove_prefix(1);
  while (!s.empty() && (is_space(s.back()) || s.back() == '\n')) s.remove_suffix(1);
  return s;
}

bool starts_with_nocase(std::string_view s, std::string_view prefix) {
  if (s.size() < prefix.size()) return false;
  for (std::size_t i = 0; i < prefix.size(); ++i)
    if (lower(s[i]) != lower(prefix[i])) return false;
  return true;
}

std::string_view strip_line_prefix(std::string_view line) {
  for (;;) {
    while (!line.empty() && is_space(line.front())) line.remove_prefix(1);
    if (!drop_marker(line)) return line;
  }
}

std::vector<directive> parse_directives(std::string_view text) {
  std::vector<directive> out;
  while (!text.empty()) {
    const auto nl = text.find('\n');
    if (auto d = parse_line(text.substr(0, nl))) out.push_back(std::move(*d));
    if (nl == std::string_view::npos) break;
    text.remove_prefix(nl + 1);
  }
  return out;
}

}  // namespace tether::mock
