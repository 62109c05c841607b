// read: text with numbered lines, paged to stay under the spill limits (a
// read is never spilled: the spill file lies outside the workspace, where
// read cannot follow); images as image parts stored once by sha256.
#include <fcntl.h>
#include <sys/stat.h>

#include <cstdio>
#include <optional>

#include "runtime/native/tools/args.h"
#include "runtime/native/tools/digest.h"
#include "runtime/native/tools/local_tools.h"
#include "runtime/native/tools/paths.h"

namespace tether::runtime::native::tool_detail {

namespace json = boost::json;
namespace fs = std::filesystem;

namespace {

constexpr std::size_t max_line_bytes = 2'000;
constexpr std::size_t footer_room = 200;

struct image_type {
  std::string_view media_type;
};

std::optional<image_type> sniff_image(std::string_view d) {
  if (d.starts_with("\x89PNG\r\n\x1a\n")) return image_type{"image/png"};
  if (d.starts_with("\xFF\xD8\xFF")) return image_type{"image/jpeg"};
  if (d.starts_with("GIF87a") || d.starts_with("GIF89a")) return image_type{"image/gif"};
  if (d.size() >= 12 && d.starts_with("RIFF") && d.substr(8, 4) == "WEBP") return image_type{"image/webp"};
  return std::nullopt;
}

// Stores the bytes as <blob_dir>/<sha256>.<ext> unless that blob exists.
result<fs::path> store_blob(std::string_view data, const image_type& type, const std::string& digest,
                            const fs::path& blob_dir) {
  std::error_code ec;
  fs::create_directories(blob_dir, ec);
  if (ec) return os_error("cannot create " + blob_dir.string(), ec.value());
  unique_fd dir(::open(blob_dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (dir.get() < 0) return os_error("cannot open " + blob_dir.string(), errno);
  const std::string name = blob_file_name(digest, type.media_type);
  struct stat st {};
  const bool present = ::fstatat(dir.get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode) &&
                       static_cast<std::size_t>(st.st_size) == data.size();
  if (!present) TETHER_TRY(replace_file_at(dir.get(), name, data, (blob_dir / name).string()));
  return blob_dir / name;
}

tool_outcome read_image(std::string_view data, const image_type& type, const workspace_path& p,
                        const tool_context& ctx) {
  const std::string digest = sha256_hex(data);
  auto blob = store_blob(data, type, digest, ctx.blob_dir);
  if (!blob) return failed("cannot store the image " + p.shown + ": " + blob.error().message);
  tool_outcome out = succeeded("image '" + p.shown + "' (" + std::string(type.media_type) + ", " +
                               std::to_string(data.size()) + " bytes), stored as blob sha256:" + digest + " at " +
                               blob->string());
  image_part part;
  part.media_type = std::string(type.media_type);
  part.base64 = base64_encode(data);
  out.images.push_back(std::move(part));
  return out;
}

tool_outcome read_text(std::string_view data, std::int64_t offset, std::optional<std::int64_t> limit,
                       const workspace_path& p, const tool_limits& lim) {
  if (data.empty()) return succeeded("(the file '" + p.shown + "' is empty)");
  std::vector<std::string_view> lines;
  for (std::size_t start = 0; start < data.size();) {
    auto nl = data.find('\n', start);
    if (nl == std::string_view::npos) nl = data.size();
    lines.push_back(data.substr(start, nl - start));
    start = nl + 1;
  }
  const auto total = lines.size();
  const auto first = static_cast<std::size_t>(offset);
  if (first > total)
    return failed("offset " + std::to_string(first) + " is past the end of '" + p.shown + "', which has " +
                  std::to_string(total) + " lines");
  // A page stays under the spill limits.
  const std::size_t max_lines = lim.spill_lines > 1 ? lim.spill_lines - 1 : 1;
  const std::size_t max_bytes = lim.spill_bytes > footer_room ? lim.spill_bytes - footer_room : 0;
  const std::size_t wanted = limit ? static_cast<std::size_t>(*limit) : total;
  std::string out;
  std::size_t shown = 0;
  for (std::size_t i = first - 1; i < total && shown < wanted && shown < max_lines; ++i) {
    std::string_view line = lines[i];
    if (line.ends_with('\r')) line.remove_suffix(1);
    char number[32];
    std::snprintf(number, sizeof number, "%6zu\t", i + 1);
    std::string entry = number + sanitize_utf8(clip_line(line, max_line_bytes)) + "\n";
    if (shown > 0 && out.size() + entry.size() > max_bytes) break;
    out += entry;
    ++shown;
  }
  const std::size_t last = first - 1 + shown;
  if (last < total)
    out += "(showing lines " + std::to_string(first) + "-" + std::to_string(last) + " of " + std::to_string(total) +
           "; continue with offset=" + std::to_string(last + 1) + ")\n";
  return succeeded(std::move(out));
}

tool_outcome read_body(const json::value& input, const tool_context& ctx) {
  auto args = tool_args::parse(input, {"path", "offset", "limit"});
  if (!args) return failed(args.error());
  auto path = args->required_string("path");
  if (!path) return failed(path.error());
  auto offset = args->optional_int("offset");
  if (!offset) return failed(offset.error());
  auto limit = args->optional_int("limit");
  if (!limit) return failed(limit.error());
  if (offset.value() && *offset.value() < 1) return failed("argument 'offset' must be 1 or more (line 1 is the first)");
  if (limit.value() && *limit.value() < 1) return failed("argument 'limit' must be 1 or more");

  auto p = resolve(ctx.workspace, *path, path_kind::must_exist);
  if (!p) return failed(p.error());
  auto fd = open_inside(ctx.workspace, *p, O_RDONLY | O_NONBLOCK);
  if (!fd) return failed(fd.error());
  struct stat st {};
  if (::fstat(fd->get(), &st) != 0) return failed(os_error("cannot stat '" + p->shown + "'", errno));
  if (S_ISDIR(st.st_mode)) return failed("'" + p->shown + "' is a directory; use list to see its entries");
  if (!S_ISREG(st.st_mode)) return failed("'" + p->shown + "' is not a regular file");
  auto data = read_all(fd->get(), ctx.limits.read_max_bytes, p->shown);
  if (!data) return failed(data.error());

  if (const auto image = sniff_image(*data)) return read_image(*data, *image, *p, ctx);
  if (looks_binary(*data))
    return failed("binary file, " + std::to_string(data->size()) + " bytes: '" + p->shown +
                  "' is not UTF-8 text and cannot be shown (use bash, e.g. `file` or `xxd | head`, to inspect it)");
  return read_text(*data, offset.value().value_or(1), limit.value(), *p, ctx.limits);
}

tool_spec read_spec() {
  json::object props;
  props["path"] = string_property("File to read: relative to the workspace root, or absolute inside the workspace.");
  props["offset"] = integer_property("First line to show, 1-based. Default 1.", 1);
  props["limit"] = integer_property("Number of lines to show. Default: as many as fit in one page.", 1);
  tool_spec spec;
  spec.name = "read";
  spec.description =
      "Read a file in the workspace. Text comes back with each line prefixed by its line number and a tab, like "
      "`cat -n`; the prefix is not part of the file (leave it out of edit's old_string). Long files come in pages "
      "(about 2000 lines or 50 KiB); the last line says how to continue with offset. Lines over 2000 characters "
      "are cut. Images (PNG, JPEG, GIF, WebP) come back as images. Other binary files are refused.";
  spec.parameters = object_schema(std::move(props), {"path"});
  return spec;
}

}  // namespace

std::unique_ptr<tool> make_read_tool() { return std::make_unique<blocking_file_tool>(read_spec(), &read_body); }

}  // namespace tether::runtime::native::tool_detail
