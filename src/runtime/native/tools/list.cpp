// list and glob, and the directory walk glob and grep share.
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <vector>

#include "runtime/native/tools/args.h"
#include "runtime/native/tools/glob_pattern.h"
#include "runtime/native/tools/local_tools.h"
#include "runtime/native/tools/paths.h"
#include "util/text.h"

namespace tether::runtime::native::tool_detail {

namespace json = boost::json;
namespace fs = std::filesystem;

namespace {

std::string in_quotes(std::string_view s) { return "'" + std::string(s) + "'"; }

// Sorted, capped lines; the last line says how many were left out.
std::string join_capped(std::vector<std::string> lines, std::size_t cap, std::string_view what) {
  std::sort(lines.begin(), lines.end());
  std::string out;
  const std::size_t n = std::min(cap, lines.size());
  for (std::size_t i = 0; i < n; ++i) out += lines[i] + "\n";
  if (lines.size() > n)
    out += "(" + std::to_string(lines.size() - n) + " more " + std::string(what) + " not shown; narrow the search)\n";
  return out;
}

result<workspace_path> resolve_directory(const tool_context& ctx, std::string_view arg) {
  auto p = resolve(ctx.workspace, arg, path_kind::must_exist);
  if (!p) return p.error();
  std::error_code ec;
  if (!fs::is_directory(fs::symlink_status(p->abs, ec)))
    return tether::error(util_errc::invalid_argument, in_quotes(p->shown) + " is not a directory (use read for files)");
  return p;
}

tool_outcome list_body(const json::value& input, const tool_context& ctx) {
  auto args = tool_args::parse(input, {"path"});
  if (!args) return failed(args.error());
  auto path = args->optional_string("path");
  if (!path) return failed(path.error());
  auto p = resolve_directory(ctx, path->value_or("."));
  if (!p) return failed(p.error());
  auto fd = open_inside(ctx.workspace, *p, O_RDONLY | O_DIRECTORY);
  if (!fd) return failed(fd.error());
  DIR* dir = ::fdopendir(fd->get());
  if (dir == nullptr) return failed(os_error("cannot list " + in_quotes(p->shown), errno));
  fd->release();  // owned by dir now
  std::vector<std::string> entries;
  while (const dirent* e = ::readdir(dir)) {
    const std::string name = e->d_name;
    if (name == "." || name == "..") continue;
    struct stat st {};
    if (::fstatat(::dirfd(dir), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
    std::string shown = sanitize_utf8(name);
    if (S_ISDIR(st.st_mode)) {
      shown += "/";
    } else if (S_ISLNK(st.st_mode)) {
      char target[4096];
      const auto n = ::readlinkat(::dirfd(dir), e->d_name, target, sizeof target - 1);
      if (n > 0) shown += " -> " + sanitize_utf8(std::string_view(target, static_cast<std::size_t>(n)));
    }
    entries.push_back(std::move(shown));
  }
  ::closedir(dir);
  if (entries.empty()) return succeeded("(" + in_quotes(p->shown) + " is empty)");
  return succeeded(join_capped(std::move(entries), ctx.limits.max_results, "entries"));
}

tool_outcome glob_body(const json::value& input, const tool_context& ctx) {
  auto args = tool_args::parse(input, {"pattern", "path"});
  if (!args) return failed(args.error());
  auto pattern = args->required_string("pattern");
  if (!pattern) return failed(pattern.error());
  auto path = args->optional_string("path");
  if (!path) return failed(path.error());
  if (!is_valid_utf8(*pattern)) return failed("the pattern is not valid UTF-8");
  if (pattern->starts_with("/")) return failed("the pattern must be relative; choose where to search with path");
  for (std::size_t start = 0; start <= pattern->size();) {
    auto slash = pattern->find('/', start);
    if (slash == std::string::npos) slash = pattern->size();
    if (pattern->substr(start, slash - start) == "..")
      return failed("the pattern cannot contain '..'; choose where to search with path");
    start = slash + 1;
  }
  auto compiled = glob_pattern::compile(*pattern);
  if (!compiled) return failed(compiled.error());
  auto base = resolve_directory(ctx, path->value_or("."));
  if (!base) return failed(base.error());

  std::vector<std::string> hits;
  const auto visit = [&](const walk_entry& e) {
    if (!compiled->matches(e.relative)) return;
    std::string shown = sanitize_utf8(shown_path(ctx.workspace, e.abs));
    if (e.kind == entry_kind::directory) shown += "/";
    hits.push_back(std::move(shown));
  };
  if (walk_tree(base->abs, ctx.stop, visit) == walk_result::stopped) return interrupted();
  if (hits.empty()) return succeeded("no paths match " + in_quotes(*pattern) + " under " + in_quotes(base->shown));
  return succeeded(join_capped(std::move(hits), ctx.limits.max_results, "matches"));
}

tool_spec list_spec() {
  json::object props;
  props["path"] = string_property("Directory to list, relative to the workspace root. Default: the root.");
  tool_spec spec;
  spec.name = "list";
  spec.description =
      "List the entries of a directory in the workspace, sorted by name: directories end with '/', symbolic links "
      "show their target as 'name -> target'. Not recursive; use glob to search a tree.";
  spec.parameters = object_schema(std::move(props), {});
  return spec;
}

tool_spec glob_spec() {
  json::object props;
  props["pattern"] = string_property(
      "Glob matched against paths relative to path: '**' any number of directories, '*' any characters except "
      "'/', '?' one character, '[a-z]' a set, '{a,b}' alternatives. Example: 'src/**/*.{h,cpp}'.");
  props["path"] = string_property("Directory to search from, relative to the workspace root. Default: the root.");
  tool_spec spec;
  spec.name = "glob";
  spec.description =
      "Find files and directories whose paths match a glob pattern. Returns workspace-relative paths, sorted; "
      "directories end with '/'. Skips .git directories and does not follow symbolic links.";
  spec.parameters = object_schema(std::move(props), {"pattern"});
  return spec;
}

}  // namespace

walk_result walk_tree(const fs::path& base, const std::stop_token& stop,
                      const std::function<void(const walk_entry&)>& visit) {
  struct pending {
    fs::path abs;
    std::string relative;
  };
  std::vector<pending> todo;
  todo.push_back({base, ""});
  while (!todo.empty()) {
    const pending dir = std::move(todo.back());
    todo.pop_back();
    std::error_code ec;
    fs::directory_iterator it(dir.abs, fs::directory_options::skip_permission_denied, ec);
    for (; !ec && it != fs::directory_iterator(); it.increment(ec)) {
      if (stop.stop_requested()) return walk_result::stopped;
      walk_entry e;
      e.abs = it->path();
      const std::string name = e.abs.filename().string();
      e.relative = dir.relative.empty() ? name : dir.relative + "/" + name;
      std::error_code sec;
      const auto st = it->symlink_status(sec);
      if (sec) continue;
      if (fs::is_symlink(st)) {
        e.kind = entry_kind::symlink;
      } else if (fs::is_directory(st)) {
        e.kind = entry_kind::directory;
      } else if (fs::is_regular_file(st)) {
        e.kind = entry_kind::file;
      }
      if (e.kind == entry_kind::directory && name == ".git") continue;
      visit(e);
      if (e.kind == entry_kind::directory) todo.push_back({e.abs, e.relative});
    }
  }
  return walk_result::finished;
}

std::unique_ptr<tool> make_list_tool() { return std::make_unique<blocking_file_tool>(list_spec(), &list_body); }
std::unique_ptr<tool> make_glob_tool() { return std::make_unique<blocking_file_tool>(glob_spec(), &glob_body); }

}  // namespace tether::runtime::native::tool_detail
