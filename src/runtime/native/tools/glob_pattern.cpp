#include "runtime/native/tools/glob_pattern.h"

#include "util/errors.h"
#include "util/text.h"

namespace tether::runtime::native::tool_detail {

namespace {

constexpr std::size_t max_alternatives = 256;

tether::error bad(std::string message) { return {util_errc::invalid_argument, std::move(message)}; }

struct decoded {
  char32_t cp = 0;
  std::size_t len = 1;
};

// One code point; a byte that starts no well-formed sequence stands for itself.
decoded next_char(std::string_view s, std::size_t i) {
  char32_t cp = 0;
  const std::size_t len = utf8_sequence(s, i, &cp);
  if (len == 0) return {static_cast<unsigned char>(s[i]), 1};
  return {cp, len};
}

// A pattern character at p: '\x' is x.
decoded pattern_char(std::string_view pat, std::size_t p) {
  if (pat[p] == '\\' && p + 1 < pat.size()) {
    auto d = next_char(pat, p + 1);
    d.len += 1;
    return d;
  }
  return next_char(pat, p);
}

// The length of the class starting at pat[p] == '[', or 0 if unterminated.
std::size_t class_length(std::string_view pat, std::size_t p) {
  std::size_t j = p + 1;
  if (j < pat.size() && (pat[j] == '!' || pat[j] == '^')) ++j;
  bool first = true;
  while (j < pat.size()) {
    if (pat[j] == ']' && !first) return j + 1 - p;
    j += pattern_char(pat, j).len;
    first = false;
  }
  return 0;
}

bool class_matches(std::string_view pat, std::size_t p, std::size_t len, char32_t c) {
  std::size_t j = p + 1;
  const std::size_t end = p + len - 1;  // the closing ']'
  bool negate = false;
  if (pat[j] == '!' || pat[j] == '^') {
    negate = true;
    ++j;
  }
  bool hit = false;
  while (j < end) {
    const auto lo = pattern_char(pat, j);
    j += lo.len;
    char32_t hi = lo.cp;
    if (j + 1 < end && pat[j] == '-') {
      const auto h = pattern_char(pat, j + 1);
      hi = h.cp;
      j += 1 + h.len;
    }
    hit = hit || (c >= lo.cp && c <= hi);
  }
  return hit != negate;
}

bool match_segment(std::string_view pat, std::string_view s) {
  std::size_t p = 0;
  std::size_t i = 0;
  std::size_t star_p = std::string_view::npos;
  std::size_t star_i = 0;
  while (i < s.size()) {
    if (p < pat.size()) {
      if (pat[p] == '*') {
        while (p < pat.size() && pat[p] == '*') ++p;
        star_p = p;
        star_i = i;
        continue;
      }
      const auto sc = next_char(s, i);
      if (pat[p] == '?') {
        ++p;
        i += sc.len;
        continue;
      }
      if (pat[p] == '[') {
        const std::size_t len = class_length(pat, p);
        if (len > 0 && class_matches(pat, p, len, sc.cp)) {
          p += len;
          i += sc.len;
          continue;
        }
      } else {
        const auto pc = pattern_char(pat, p);
        if (pc.cp == sc.cp) {
          p += pc.len;
          i += sc.len;
          continue;
        }
      }
    }
    if (star_p == std::string_view::npos) return false;
    star_i += next_char(s, star_i).len;  // the star takes one more character
    i = star_i;
    p = star_p;
  }
  while (p < pat.size() && pat[p] == '*') ++p;
  return p == pat.size();
}

bool match_segments(const std::vector<std::string>& pat, std::size_t pi, const std::vector<std::string_view>& path,
                    std::size_t si) {
  if (pi == pat.size()) return si == path.size();
  if (pat[pi] == "**") {
    for (std::size_t k = si; k <= path.size(); ++k)
      if (match_segments(pat, pi + 1, path, k)) return true;
    return false;
  }
  if (si == path.size()) return false;
  return match_segment(pat[pi], path[si]) && match_segments(pat, pi + 1, path, si + 1);
}

// Expands the first {a,b,...} group (nesting handled by recursion).
result<void> expand_braces(const std::string& p, std::vector<std::string>& out) {
  for (std::size_t i = 0; i < p.size(); ++i) {
    if (p[i] == '\\') {
      ++i;
      continue;
    }
    if (p[i] != '{') continue;
    std::vector<std::size_t> commas;
    int depth = 1;
    std::size_t j = i + 1;
    for (; j < p.size(); ++j) {
      if (p[j] == '\\') {
        ++j;
      } else if (p[j] == '{') {
        ++depth;
      } else if (p[j] == '}') {
        if (--depth == 0) break;
      } else if (p[j] == ',' && depth == 1) {
        commas.push_back(j);
      }
    }
    if (j >= p.size() || commas.empty()) continue;  // not a group: literal braces
    const std::string prefix = p.substr(0, i);
    const std::string suffix = p.substr(j + 1);
    std::size_t start = i + 1;
    commas.push_back(j);
    for (const std::size_t c : commas) {
      TETHER_TRY(expand_braces(prefix + p.substr(start, c - start) + suffix, out));
      start = c + 1;
    }
    return ok();
  }
  if (out.size() >= max_alternatives)
    return bad("the pattern expands to more than " + std::to_string(max_alternatives) + " alternatives");
  out.push_back(p);
  return ok();
}

std::vector<std::string_view> split_path(std::string_view s) {
  std::vector<std::string_view> parts;
  std::size_t start = 0;
  while (start <= s.size()) {
    auto slash = s.find('/', start);
    if (slash == std::string_view::npos) slash = s.size();
    const auto part = s.substr(start, slash - start);
    if (!part.empty() && part != ".") parts.push_back(part);
    start = slash + 1;
  }
  return parts;
}

}  // namespace

result<glob_pattern> glob_pattern::compile(std::string_view pattern) {
  if (pattern.empty()) return bad("the pattern is empty");
  for (std::size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] == '\\') {
      ++i;
    } else if (pattern[i] == '[' && class_length(pattern, i) == 0) {
      return bad("the pattern '" + std::string(pattern) + "' has an unterminated '['");
    }
  }
  std::vector<std::string> expanded;
  TETHER_TRY(expand_braces(std::string(pattern), expanded));
  glob_pattern out;
  for (const auto& alt : expanded) {
    std::vector<std::string> segments;
    for (const auto part : split_path(alt)) segments.emplace_back(part);
    out.single_segment_ = out.single_segment_ && segments.size() <= 1;
    out.alternatives_.push_back(std::move(segments));
  }
  return out;
}

bool glob_pattern::matches(std::string_view relative_path) const {
  const auto path = split_path(relative_path);
  for (const auto& alt : alternatives_)
    if (match_segments(alt, 0, path, 0)) return true;
  return false;
}

}  // namespace tether::runtime::native::tool_detail
