// write and edit: whole-file atomic replacement (temp file + rename), so a
// crash or a concurrent reader never sees half a file.
#include <fcntl.h>
#include <sys/stat.h>

#include "runtime/native/tools/args.h"
#include "runtime/native/tools/local_tools.h"
#include "runtime/native/tools/paths.h"

namespace tether::runtime::native::tool_detail {

namespace json = boost::json;

namespace {

std::string in_quotes(std::string_view s) { return "'" + std::string(s) + "'"; }

std::size_t count_occurrences(std::string_view text, std::string_view needle) {
  std::size_t n = 0;
  for (auto pos = text.find(needle); pos != std::string_view::npos; pos = text.find(needle, pos + needle.size())) ++n;
  return n;
}

std::string replace_occurrences(std::string_view text, std::string_view from, std::string_view to, bool all) {
  std::string out;
  std::size_t start = 0;
  for (auto pos = text.find(from); pos != std::string_view::npos; pos = text.find(from, start)) {
    out.append(text.substr(start, pos - start));
    out.append(to);
    start = pos + from.size();
    if (!all) break;
  }
  out.append(text.substr(start));
  return out;
}

std::string with_crlf(std::string_view s) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\n' && (i == 0 || s[i - 1] != '\r')) out += '\r';
    out += s[i];
  }
  return out;
}

constexpr const char* read_only_workspace = "the workspace is read-only (the profile's sandbox is \"read-only\")";

tool_outcome write_body(const json::value& input, const tool_context& ctx) {
  if (ctx.sandbox.mode == sandbox_mode::read_only) return failed(read_only_workspace);
  auto args = tool_args::parse(input, {"path", "content"});
  if (!args) return failed(args.error());
  auto path = args->required_string("path");
  if (!path) return failed(path.error());
  auto content = args->required_string("content");
  if (!content) return failed(content.error());

  auto p = resolve(ctx.workspace, *path, path_kind::may_be_missing);
  if (!p) return failed(p.error());
  struct stat st {};
  const bool existed = ::lstat(p->abs.c_str(), &st) == 0;
  if (existed && S_ISDIR(st.st_mode)) return failed(in_quotes(p->shown) + " is a directory");
  if (auto w = write_atomic(ctx.workspace, *p, *content); !w) return failed(w.error());
  return succeeded("wrote " + std::to_string(content->size()) + " bytes to " + in_quotes(p->shown) +
                   (existed ? " (replaced its previous content)" : " (new file)"));
}

tool_outcome edit_body(const json::value& input, const tool_context& ctx) {
  if (ctx.sandbox.mode == sandbox_mode::read_only) return failed(read_only_workspace);
  auto args = tool_args::parse(input, {"path", "old_string", "new_string", "replace_all"});
  if (!args) return failed(args.error());
  auto path = args->required_string("path");
  if (!path) return failed(path.error());
  auto old_string = args->required_string("old_string");
  if (!old_string) return failed(old_string.error());
  auto new_string = args->required_string("new_string");
  if (!new_string) return failed(new_string.error());
  auto replace_all = args->optional_bool("replace_all");
  if (!replace_all) return failed(replace_all.error());
  if (old_string->empty()) return failed("old_string is empty; to create a file or replace all of it, use write");
  if (*old_string == *new_string) return failed("old_string and new_string are the same; nothing would change");

  auto p = resolve(ctx.workspace, *path, path_kind::must_exist);
  if (!p) return failed(p.error());
  auto fd = open_inside(ctx.workspace, *p, O_RDONLY | O_NONBLOCK);
  if (!fd) return failed(fd.error());
  struct stat st {};
  if (::fstat(fd->get(), &st) != 0) return failed(os_error("cannot stat " + in_quotes(p->shown), errno));
  if (!S_ISREG(st.st_mode)) return failed(in_quotes(p->shown) + " is not a regular file");
  auto data = read_all(fd->get(), ctx.limits.read_max_bytes, p->shown);
  if (!data) return failed(data.error());
  if (looks_binary(*data)) return failed("binary file, " + std::to_string(data->size()) + " bytes: cannot edit " +
                                         in_quotes(p->shown) + " as text");

  std::string from = std::move(old_string.value());
  std::string to = std::move(new_string.value());
  std::size_t matches = count_occurrences(*data, from);
  if (matches == 0 && from.find('\n') != std::string::npos && data->find("\r\n") != std::string::npos) {
    // The file has CRLF line ends; the model wrote LF.
    const std::string crlf_from = with_crlf(from);
    if (const auto n = count_occurrences(*data, crlf_from); n > 0) {
      matches = n;
      from = crlf_from;
      to = with_crlf(to);
    }
  }
  if (matches == 0)
    return failed("old_string not found in " + in_quotes(p->shown) +
                  " (it must match exactly, including whitespace and indentation; read the file again to copy "
                  "the current text)");
  const bool all = replace_all->value_or(false);
  if (matches > 1 && !all)
    return failed("old_string matches " + std::to_string(matches) + " times in " + in_quotes(p->shown) +
                  "; include more surrounding lines to make it unique, or set replace_all to true");
  const std::string updated = replace_occurrences(*data, from, to, all);
  if (auto w = write_atomic(ctx.workspace, *p, updated); !w) return failed(w.error());
  const std::size_t replaced = all ? matches : 1;
  return succeeded("replaced " + std::to_string(replaced) + (replaced == 1 ? " occurrence" : " occurrences") +
                   " in " + in_quotes(p->shown));
}

tool_spec write_spec() {
  json::object props;
  props["path"] = string_property("File to write: relative to the workspace root, or absolute inside the workspace.");
  props["content"] = string_property("The complete new content of the file.");
  tool_spec spec;
  spec.name = "write";
  spec.description =
      "Create a file or replace its whole content. Missing parent directories are created. To change part of an "
      "existing file, prefer edit.";
  spec.parameters = object_schema(std::move(props), {"path", "content"});
  return spec;
}

tool_spec edit_spec() {
  json::object props;
  props["path"] = string_property("File to edit: relative to the workspace root, or absolute inside the workspace.");
  props["old_string"] = string_property(
      "Exact text to replace, including whitespace and indentation (without read's line-number prefixes). Must "
      "occur exactly once unless replace_all is true.");
  props["new_string"] = string_property("Text to put in its place.");
  props["replace_all"] = boolean_property("Replace every occurrence instead of exactly one. Default false.");
  tool_spec spec;
  spec.name = "edit";
  spec.description =
      "Replace exact text in an existing file. Fails if old_string is not found, or is found more than once "
      "without replace_all; include enough surrounding lines to make it unique.";
  spec.parameters = object_schema(std::move(props), {"path", "old_string", "new_string"});
  return spec;
}

}  // namespace

std::unique_ptr<tool> make_write_tool() { return std::make_unique<blocking_file_tool>(write_spec(), &write_body); }
std::unique_ptr<tool> make_edit_tool() { return std::make_unique<blocking_file_tool>(edit_spec(), &edit_body); }

}  // namespace tether::runtime::native::tool_detail
