#include "runtime/native/tools/output.h"

#include <fcntl.h>

#include <algorithm>
#include <exception>
#include <vector>

#include <boost/asio/cancellation_state.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "runtime/native/tools/paths.h"
#include "util/check.h"
#include "util/text.h"

namespace tether::runtime::native::tool_detail {

namespace asio = boost::asio;
namespace fs = std::filesystem;
namespace json = boost::json;
using asio::awaitable;

namespace {

constexpr std::size_t binary_probe_bytes = 8 * 1024;
constexpr std::string_view replacement = "\xEF\xBF\xBD";  // U+FFFD

std::string spill_name(std::string_view call_id) {
  std::string name;
  for (const char c : call_id) {
    const bool safe = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
                      c == '-' || c == '.';
    name += safe ? c : '_';
  }
  if (name.empty() || name.find_first_not_of('.') == std::string::npos) name = "call";
  return name.substr(0, 200) + ".txt";
}

std::vector<std::string_view> split_lines(std::string_view s) {
  std::vector<std::string_view> lines;
  std::size_t start = 0;
  while (start < s.size()) {
    const auto nl = s.find('\n', start);
    if (nl == std::string_view::npos) {
      lines.push_back(s.substr(start));
      break;
    }
    lines.push_back(s.substr(start, nl - start));
    start = nl + 1;
  }
  return lines;
}

result<std::string> write_spill(const std::string& content, const tool_context& ctx) {
  std::error_code ec;
  fs::create_directories(ctx.spill_dir, ec);
  if (ec) return os_error("cannot create " + ctx.spill_dir.string(), ec.value());
  unique_fd dir(::open(ctx.spill_dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (dir.get() < 0) return os_error("cannot open " + ctx.spill_dir.string(), errno);
  const std::string name = spill_name(ctx.call_id);
  const fs::path path = ctx.spill_dir / name;
  TETHER_TRY(replace_file_at(dir.get(), name, content, path.string()));
  return path.string();
}

awaitable<tool_outcome> blocking_body(json::value input, tool_context ctx, blocking_tool body) {
  tool_outcome out;
  try {
    if (ctx.stop.stop_requested()) co_return interrupted();
    out = body(input, ctx);
    spill_if_large(out, ctx);
  } catch (const std::exception& e) {
    out = failed(std::string("internal error: ") + e.what());
  }
  co_return out;
}

awaitable<tool_outcome> spill_body(tool_outcome out, tool_context ctx) {
  try {
    spill_if_large(out, ctx);
  } catch (const std::exception& e) {
    out = failed(std::string("internal error: ") + e.what());
  }
  co_return out;
}

}  // namespace

tool_outcome succeeded(std::string content) {
  tool_outcome out;
  out.status = tool_status::succeeded;
  out.content = std::move(content);
  return out;
}

tool_outcome failed(std::string message) {
  tool_outcome out;
  out.status = tool_status::failed;
  out.content = std::move(message);
  return out;
}

tool_outcome failed(const tether::error& e) { return failed(e.message.empty() ? e.code.message() : e.message); }

tool_outcome interrupted() { return failed(std::string("interrupted")); }

std::string sanitize_utf8(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  std::size_t i = 0;
  while (i < s.size()) {
    const std::size_t len = utf8_sequence(s, i);
    if (len == 0) {
      out += replacement;
      ++i;
    } else {
      out.append(s.substr(i, len));
      i += len;
    }
  }
  return out;
}

bool looks_binary(std::string_view bytes) {
  const std::size_t end = std::min(bytes.size(), binary_probe_bytes);
  std::size_t i = 0;
  while (i < end) {
    if (bytes[i] == '\0') return true;
    // Sequences are read from the whole buffer, so one that starts before
    // the probe's end and finishes after it is still whole.
    const std::size_t len = utf8_sequence(bytes, i);
    if (len == 0) return true;
    i += len;
  }
  return false;
}

std::string clip_line(std::string_view line, std::size_t max_bytes) {
  if (line.size() <= max_bytes) return std::string(line);
  std::size_t cut = max_bytes;
  while (cut > 0 && (static_cast<unsigned char>(line[cut]) & 0xC0U) == 0x80U) --cut;
  return std::string(line.substr(0, cut)) + "… [+" + std::to_string(line.size() - cut) + " bytes]";
}

std::size_t count_lines(std::string_view s) {
  const auto n = static_cast<std::size_t>(std::count(s.begin(), s.end(), '\n'));
  return n + ((!s.empty() && s.back() != '\n') ? 1 : 0);
}

void spill_if_large(tool_outcome& out, const tool_context& ctx) {
  const auto& lim = ctx.limits;
  if (out.status == tool_status::waiting) return;
  const std::size_t total_lines = count_lines(out.content);
  const std::size_t total_bytes = out.content.size();
  if (total_lines <= lim.spill_lines && total_bytes <= lim.spill_bytes) return;

  std::string where;
  auto saved = write_spill(out.content, ctx);
  if (saved) {
    where = "full output in " + saved.value();
    out.output_path = saved.value();
  } else {
    where = "the full output could not be saved (" + saved.error().message + ")";
  }

  const auto lines = split_lines(out.content);
  std::size_t head = std::min(lim.preview_lines, lines.size());
  std::size_t tail = std::min(lim.preview_lines, lines.size() - head);
  // Room for the marker line, then an even share per shown line; fewer lines
  // when the shares would be too thin to read.
  const std::size_t marker_room = where.size() + 96;
  const std::size_t budget = lim.spill_bytes > marker_room ? lim.spill_bytes - marker_room : 0;
  constexpr std::size_t min_share = 48;
  constexpr std::size_t clip_suffix = 24;  // "… [+N bytes]"
  while (head + tail > 0 && budget / (head + tail) < min_share) {
    if (tail >= head && tail > 0) {
      --tail;
    } else {
      --head;
    }
  }
  const std::size_t share = head + tail > 0 ? budget / (head + tail) - clip_suffix : 0;

  std::string preview;
  std::size_t shown_bytes = 0;
  const auto add = [&](std::string_view line) {
    preview += clip_line(line, share);
    preview += '\n';
    shown_bytes += std::min(line.size(), share) + 1;
  };
  for (std::size_t i = 0; i < head; ++i) add(lines[i]);
  const std::size_t omitted_lines = lines.size() - head - tail;
  const std::size_t omitted_bytes = total_bytes > shown_bytes ? total_bytes - shown_bytes : 0;
  preview += "… " + std::to_string(omitted_lines) + " lines (" + std::to_string(omitted_bytes) +
             " bytes) omitted; " + where + " …\n";
  for (std::size_t i = lines.size() - tail; i < lines.size(); ++i) add(lines[i]);
  out.content = sanitize_utf8(preview);
}

awaitable<tool_outcome> run_blocking(json::value input, tool_context ctx, blocking_tool body) {
  // The blocking step cannot be abandoned half-way; a cancelled caller still
  // gets its outcome rather than an exception (interrupts use ctx.stop).
  co_await asio::this_coro::reset_cancellation_state(asio::disable_cancellation());
  if (ctx.stop.stop_requested()) co_return interrupted();
  TETHER_CHECK(static_cast<bool>(ctx.blocking), "tool_context::blocking is not set");
  auto ex = ctx.blocking;
  auto work = blocking_body(std::move(input), std::move(ctx), body);
  tool_outcome out;
  try {
    out = co_await asio::co_spawn(ex, std::move(work), asio::use_awaitable);
  } catch (const std::exception& e) {
    out = failed(std::string("internal error: ") + e.what());
  }
  co_return out;
}

awaitable<tool_outcome> spill_on_blocking(tool_outcome out, tool_context ctx) {
  co_await asio::this_coro::reset_cancellation_state(asio::disable_cancellation());
  if (count_lines(out.content) <= ctx.limits.spill_lines && out.content.size() <= ctx.limits.spill_bytes)
    co_return out;
  TETHER_CHECK(static_cast<bool>(ctx.blocking), "tool_context::blocking is not set");
  auto ex = ctx.blocking;
  auto work = spill_body(std::move(out), std::move(ctx));
  tool_outcome spilled;
  try {
    spilled = co_await asio::co_spawn(ex, std::move(work), asio::use_awaitable);
  } catch (const std::exception& e) {
    spilled = failed(std::string("internal error: ") + e.what());
  }
  co_return spilled;
}

}  // namespace tether::runtime::native::tool_detail
