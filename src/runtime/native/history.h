// The conversation a step sends, built from the session's transcript, and
// the compaction arithmetic. Pure functions: no I/O but reading image blobs.
//
// build_history() maps transcript rows to chat messages:
//   summary      -> user "Summary of the conversation so far: …"
//   user, notice -> user
//   assistant    -> assistant text; the tool calls that follow it join it
//   tool_call    -> a call of the current assistant message (hosted flag kept)
//   tool_result  -> hosted: the call's hosted result, kept exactly (JSON);
//                   local: a tool_result message placed right after the
//                   assistant message that made the call, whatever came in
//                   between (wire formats require it). A local call with no
//                   result yet gets a placeholder result saying so.
// A tool result in which `read` names a stored image ("… (image/png, N
// bytes), stored as blob sha256:HEX at …") carries that image again, read
// from the blob directory: the transcript stores the bytes once.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "runtime/native/providers/types.h"
#include "store/types.h"

namespace tether::runtime::native {

std::vector<chat_message> build_history(const std::vector<store::message_row>& transcript,
                                        const std::filesystem::path& blob_dir);

// Rough size of a request in tokens: characters / 4 of every text, call input
// and tool schema, plus a flat 1,000 per image.
std::int64_t estimate_tokens(const model_request& r);

// Where to cut the transcript for a compaction: the index of the first row
// kept verbatim, or nothing when there is nothing worth summarizing. The cut
// never separates a local call from its result, keeps at least `keep_recent`
// rows (fewer only if the transcript is shorter), always keeps the last user
// message, and leaves at least one row to summarize.
std::optional<std::size_t> compaction_cut(const std::vector<store::message_row>& transcript, std::size_t keep_recent);

// The request that asks the model for a summary of rows [0, cut): the rows as
// a quoted plain-text transcript (media described, never embedded), then the
// fixed template. Tools are disabled.
model_request summary_request(const std::vector<store::message_row>& transcript, std::size_t cut,
                              std::string model);

}  // namespace tether::runtime::native
