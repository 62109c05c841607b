// What the local tools hand back to the model (internal): outcomes, text
// hygiene, and the spill of large outputs.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include <boost/asio/awaitable.hpp>
#include <boost/json/value.hpp>

#include "runtime/native/tools/tool.h"
#include "util/result.h"

namespace tether::runtime::native::tool_detail {

tool_outcome succeeded(std::string content);
tool_outcome failed(std::string message);
tool_outcome failed(const tether::error& e);  // its message
tool_outcome interrupted();                   // failed("interrupted")

// Replaces every invalid UTF-8 sequence with U+FFFD: the transcript only
// carries valid text.
std::string sanitize_utf8(std::string_view s);

// A NUL byte or invalid UTF-8 in the first 8 KiB (a multi-byte sequence cut
// at the 8 KiB mark does not count).
bool looks_binary(std::string_view bytes);

// `line` cut to at most about `max_bytes` on a character boundary, with
// "… [+N bytes]" appended when cut.
std::string clip_line(std::string_view line, std::size_t max_bytes);

// Number of lines: '\n'-terminated pieces, plus an unterminated last one.
std::size_t count_lines(std::string_view s);

// Spill (blocking): when out.content is over ctx.limits.spill_lines lines or
// spill_bytes bytes, writes it whole to ctx.spill_dir/<call_id>.txt and
// replaces it by a head/tail preview, kept under spill_bytes, whose middle
// line reads "… N lines (M bytes) omitted; full output in PATH …", and sets
// out.output_path. If the file cannot be written the preview says so and
// output_path stays empty.
void spill_if_large(tool_outcome& out, const tool_context& ctx);

// A file tool's body: plain blocking code, given the raw input.
using blocking_tool = tool_outcome (*)(const boost::json::value& input, const tool_context& ctx);

// Runs `body` then the spill on ctx.blocking and resumes the caller on its
// own executor. Exceptions become failed outcomes; a stop requested before
// the start is failed("interrupted").
boost::asio::awaitable<tool_outcome> run_blocking(boost::json::value input, tool_context ctx, blocking_tool body);

// The spill alone, on ctx.blocking (for bash, whose work is asynchronous).
boost::asio::awaitable<tool_outcome> spill_on_blocking(tool_outcome out, tool_context ctx);

}  // namespace tether::runtime::native::tool_detail
