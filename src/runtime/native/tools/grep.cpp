// grep: std::regex (ECMAScript) line search, with a literal fallback when the
// pattern is not a valid regular expression.
//
// libstdc++'s regex matcher recurses once per input character, so a long
// line could overflow the stack: lines are matched on their first 4 KiB
// (literal searches see the whole line).
#include <fcntl.h>
#include <sys/stat.h>

#include <algorithm>
#include <regex>
#include <vector>

#include "runtime/native/tools/args.h"
#include "runtime/native/tools/glob_pattern.h"
#include "runtime/native/tools/local_tools.h"
#include "runtime/native/tools/paths.h"
#include "util/beneath.h"

namespace tether::runtime::native::tool_detail {

namespace json = boost::json;
namespace fs = std::filesystem;

namespace {

constexpr std::size_t regex_line_bytes = 4 * 1024;
constexpr std::size_t shown_line_bytes = 300;

std::string in_quotes(std::string_view s) { return "'" + std::string(s) + "'"; }

char ascii_lower(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; }

std::string lowered(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(), ascii_lower);
  return out;
}

class line_matcher {
 public:
  line_matcher(const std::string& pattern, bool ignore_case) : ignore_case_(ignore_case) {
    try {
      auto flags = std::regex::ECMAScript;
      if (ignore_case) flags |= std::regex::icase;
      regex_.emplace(pattern, flags);
    } catch (const std::regex_error& e) {
      literal_ = ignore_case ? lowered(pattern) : pattern;
      regex_error_ = e.what();
    }
  }

  [[nodiscard]] bool matches(std::string_view line) const {
    if (regex_) {
      const auto head = line.substr(0, regex_line_bytes);
      return std::regex_search(head.begin(), head.end(), *regex_);
    }
    if (!ignore_case_) return line.find(literal_) != std::string_view::npos;
    return lowered(line).find(literal_) != std::string::npos;
  }

  // Empty when the pattern compiled as a regex.
  [[nodiscard]] const std::string& regex_error() const { return regex_error_; }

 private:
  std::optional<std::regex> regex_;
  std::string literal_;
  std::string regex_error_;
  bool ignore_case_;
};

struct search_stats {
  std::size_t binary = 0;
  std::size_t too_large = 0;
  std::size_t unreadable = 0;
  bool capped = false;
};

// Appends "file:line: text" for each matching line of one file.
// Opened beneath the workspace's descriptor `root`: a directory on the way
// swapped for a link since the walk saw it is not followed (beneath.h).
void search_file(int root, const fs::path& abs, const std::string& shown, const line_matcher& m,
                 const tool_context& ctx, std::vector<std::string>& hits, search_stats& stats) {
  auto fd = beneath::open_regular(root, abs.lexically_relative(ctx.workspace).string());
  struct stat st {};
  if (!fd || ::fstat(fd->get(), &st) != 0) {
    ++stats.unreadable;
    return;
  }
  if (static_cast<std::size_t>(st.st_size) > ctx.limits.read_max_bytes) {
    ++stats.too_large;
    return;
  }
  auto data = read_all(fd->get(), ctx.limits.read_max_bytes, shown);
  if (!data) {
    ++stats.unreadable;
    return;
  }
  if (looks_binary(*data)) {
    ++stats.binary;
    return;
  }
  const std::string_view text = *data;
  std::size_t number = 0;
  for (std::size_t start = 0; start < text.size();) {
    auto nl = text.find('\n', start);
    if (nl == std::string_view::npos) nl = text.size();
    auto line = text.substr(start, nl - start);
    start = nl + 1;
    ++number;
    if (line.ends_with('\r')) line.remove_suffix(1);
    if (!m.matches(line)) continue;
    if (hits.size() >= ctx.limits.max_results) {
      stats.capped = true;
      return;
    }
    hits.push_back(shown + ":" + std::to_string(number) + ": " + sanitize_utf8(clip_line(line, shown_line_bytes)));
  }
}

tool_outcome grep_body(const json::value& input, const tool_context& ctx) {
  auto args = tool_args::parse(input, {"pattern", "path", "glob", "ignore_case"});
  if (!args) return failed(args.error());
  auto pattern = args->required_string("pattern");
  if (!pattern) return failed(pattern.error());
  auto path = args->optional_string("path");
  if (!path) return failed(path.error());
  auto glob = args->optional_string("glob");
  if (!glob) return failed(glob.error());
  auto ignore_case = args->optional_bool("ignore_case");
  if (!ignore_case) return failed(ignore_case.error());
  if (pattern->empty()) return failed("the pattern is empty");
  std::optional<glob_pattern> filter;
  if (glob->has_value()) {
    auto compiled = glob_pattern::compile(**glob);
    if (!compiled) return failed(compiled.error());
    filter = std::move(compiled.value());
  }
  auto base = resolve(ctx.workspace, path->value_or("."), path_kind::must_exist);
  if (!base) return failed(base.error());

  // The files to search, in path order.
  std::vector<std::pair<std::string, fs::path>> files;
  std::error_code ec;
  if (fs::is_regular_file(fs::symlink_status(base->abs, ec))) {
    files.emplace_back(base->shown, base->abs);
  } else {
    const auto visit = [&](const walk_entry& e) {
      if (e.kind != entry_kind::file) return;
      if (filter) {
        const std::string name = filter->single_segment() ? e.abs.filename().string() : e.relative;
        if (!filter->matches(name)) return;
      }
      files.emplace_back(sanitize_utf8(shown_path(ctx.workspace, e.abs)), e.abs);
    };
    if (walk_tree(base->abs, ctx.stop, visit) == walk_result::stopped) return interrupted();
    std::sort(files.begin(), files.end());
  }

  auto root = beneath::open_root(ctx.workspace);
  if (!root) return failed(root.error());
  const line_matcher matcher(*pattern, ignore_case->value_or(false));
  std::vector<std::string> hits;
  search_stats stats;
  for (const auto& [shown, abs] : files) {
    if (ctx.stop.stop_requested()) return interrupted();
    search_file(root->get(), abs, shown, matcher, ctx, hits, stats);
    if (stats.capped) break;
  }

  std::string out;
  for (const auto& h : hits) out += h + "\n";
  if (hits.empty()) out = "no matches for " + in_quotes(*pattern) + " under " + in_quotes(base->shown) + "\n";
  if (!matcher.regex_error().empty())
    out += "(the pattern is not a valid regular expression (" + matcher.regex_error() +
           "); it was searched for as literal text)\n";
  if (stats.capped)
    out += "(stopped after " + std::to_string(hits.size()) + " matches; narrow the search with path or glob)\n";
  if (stats.binary + stats.too_large > 0)
    out += "(skipped " + std::to_string(stats.binary) + " binary files and " + std::to_string(stats.too_large) +
           " files over " + std::to_string(ctx.limits.read_max_bytes) + " bytes)\n";
  return succeeded(std::move(out));
}

tool_spec grep_spec() {
  json::object props;
  props["pattern"] = string_property(
      "Regular expression (ECMAScript syntax, as in JavaScript) searched in each line. An invalid expression is "
      "searched for as literal text.");
  props["path"] = string_property("File or directory to search, relative to the workspace root. Default: the root.");
  props["glob"] = string_property(
      "Only search files matching this glob, e.g. '*.py' (matched against file names) or 'src/**/*.ts' "
      "(matched against paths relative to path).");
  props["ignore_case"] = boolean_property("Match case-insensitively. Default false.");
  tool_spec spec;
  spec.name = "grep";
  spec.description =
      "Search file contents for a pattern. Returns matching lines as 'file:line: text', files in path order. Skips "
      "binary files and .git directories and does not follow symbolic links.";
  spec.parameters = object_schema(std::move(props), {"pattern"});
  return spec;
}

}  // namespace

std::unique_ptr<tool> make_grep_tool() { return std::make_unique<blocking_file_tool>(grep_spec(), &grep_body); }

}  // namespace tether::runtime::native::tool_detail
