#include "runtime/native/history.h"

#include <fstream>
#include <iterator>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include <boost/json.hpp>

#include "runtime/native/tools/digest.h"

namespace tether::runtime::native {

namespace {

namespace json = boost::json;
namespace fs = std::filesystem;
using store::message_role;
using store::message_row;

constexpr std::string_view pending_result = "(no result: this call was interrupted or is still waiting for an answer)";

// The images a read result names, loaded from the blob directory. A blob
// that is gone is described instead of failing the request.
std::vector<image_part> images_of(const std::string& text, const fs::path& blob_dir, std::string& note) {
  static const std::regex named(R"(\((image/[a-z0-9.+-]+), [0-9]+ bytes\), stored as blob sha256:([0-9a-f]{64}))");
  std::vector<image_part> out;
  for (auto it = std::sregex_iterator(text.begin(), text.end(), named); it != std::sregex_iterator(); ++it) {
    const std::string media = (*it)[1];
    const std::string digest = (*it)[2];
    // Read straight from its known name: no directory scan per image per step.
    std::ifstream in(blob_dir / tool_detail::blob_file_name(digest, media), std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (in.is_open() && !in.bad()) {
      out.push_back(image_part{media, tool_detail::base64_encode(bytes)});
    } else {
      note += "\n(the image blob " + digest + " is no longer stored)";
    }
  }
  return out;
}

json::value hosted_content(const std::string& text) {
  boost::system::error_code ec;
  auto v = json::parse(text, ec);
  if (ec) return json::value(text);
  return v;
}

}  // namespace

std::vector<chat_message> build_history(const std::vector<message_row>& transcript, const fs::path& blob_dir) {
  std::vector<chat_message> out;
  // Results of local calls, by call id; placed after their assistant message.
  std::map<std::string, const message_row*> results;
  std::set<std::string> hosted_calls;
  for (const auto& r : transcript) {
    if (r.role == message_role::tool_result && r.call_kind != model::tool_kind::hosted) results[r.id] = &r;
  }

  // Index in `out` of the assistant message the next call joins, if any.
  std::optional<std::size_t> current;
  // Local calls of `current`, in order, whose results follow it.
  std::vector<std::string> open_calls;
  auto flush_results = [&] {
    for (const auto& id : open_calls) {
      chat_message m;
      m.role = chat_role::tool_result;
      m.call_id = id;
      const auto it = results.find(id);
      if (it == results.end()) {
        m.text = std::string(pending_result);
      } else {
        m.text = it->second->text;
        m.is_error = it->second->is_error;
        std::string note;
        if (!m.is_error) m.images = images_of(m.text, blob_dir, note);
        m.text += note;
      }
      out.push_back(std::move(m));
    }
    open_calls.clear();
    current.reset();
  };

  for (const auto& r : transcript) {
    switch (r.role) {
      case message_role::summary:
      case message_role::user:
      case message_role::notice: {
        flush_results();
        chat_message m;
        m.role = chat_role::user;
        m.text = r.role == message_role::summary ? "Summary of the conversation so far:\n" + r.text : r.text;
        out.push_back(std::move(m));
        break;
      }
      case message_role::assistant: {
        flush_results();
        chat_message m;
        m.role = chat_role::assistant;
        m.source_id = r.id;
        m.text = r.text;
        out.push_back(std::move(m));
        current = out.size() - 1;
        break;
      }
      case message_role::tool_call: {
        if (!current) {
          flush_results();
          chat_message m;
          m.role = chat_role::assistant;
          m.source_id = r.id;
          out.push_back(std::move(m));
          current = out.size() - 1;
        }
        tool_use call;
        call.id = r.id;
        call.name = r.tool;
        call.input = r.input.is_null() ? json::value(json::object()) : r.input;
        call.hosted = r.call_kind == model::tool_kind::hosted;
        out[*current].calls.push_back(std::move(call));
        if (r.call_kind == model::tool_kind::hosted) {
          hosted_calls.insert(r.id);
        } else {
          open_calls.push_back(r.id);
        }
        break;
      }
      case message_role::tool_result: {
        if (r.call_kind != model::tool_kind::hosted) break;  // placed by flush_results()
        // A hosted result belongs to the assistant message that made the call.
        for (auto it = out.rbegin(); it != out.rend(); ++it) {
          if (it->role != chat_role::assistant) continue;
          const bool mine = std::any_of(it->calls.begin(), it->calls.end(),
                                        [&r](const tool_use& c) { return c.id == r.id; });
          if (!mine) continue;
          it->hosted_results.push_back(hosted_result{r.id, hosted_content(r.text)});
          break;
        }
        break;
      }
    }
  }
  flush_results();
  return out;
}

std::int64_t estimate_tokens(const model_request& r) {
  std::size_t chars = 0;
  std::int64_t images = 0;
  for (const auto& m : r.messages) {
    chars += m.text.size() + m.reasoning.size();
    for (const auto& c : m.calls) chars += c.name.size() + json::serialize(c.input).size();
    for (const auto& h : m.hosted_results) chars += json::serialize(h.content).size();
    images += static_cast<std::int64_t>(m.images.size());
  }
  if (r.tools_enabled)
    for (const auto& t : r.tools) chars += t.name.size() + t.description.size() + json::serialize(t.parameters).size();
  return static_cast<std::int64_t>((chars + 3) / 4) + images * 1'000;
}

std::optional<std::size_t> compaction_cut(const std::vector<message_row>& transcript, std::size_t keep_recent) {
  const std::size_t n = transcript.size();
  if (n < 2) return std::nullopt;
  std::size_t last_user = n;
  for (std::size_t i = n; i-- > 0;) {
    if (transcript[i].role == message_role::user) {
      last_user = i;
      break;
    }
  }
  // A cut at i is valid when every local call before i has its result
  // before i, and row i is not a result.
  std::set<std::string> unsettled;
  std::vector<bool> valid(n + 1, false);
  for (std::size_t i = 0; i < n; ++i) {
    valid[i] = unsettled.empty() && transcript[i].role != message_role::tool_result;
    const auto& r = transcript[i];
    if (r.role == message_role::tool_call && r.call_kind != model::tool_kind::hosted) unsettled.insert(r.id);
    if (r.role == message_role::tool_result) unsettled.erase(r.id);
  }
  const std::size_t want = n > keep_recent ? n - keep_recent : 0;
  std::size_t cut = std::min(want, last_user);
  while (cut > 0 && !valid[cut]) --cut;
  if (cut == 0) return std::nullopt;
  return cut;
}

model_request summary_request(const std::vector<message_row>& transcript, std::size_t cut, std::string model) {
  // Quoted line by line, so nothing in the history reads as an instruction.
  std::ostringstream text;
  auto quote = [&text](std::string_view who, std::string_view body) {
    text << who << ":\n";
    std::size_t start = 0;
    while (start <= body.size()) {
      const auto end = body.find('\n', start);
      const auto line = body.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start);
      text << "| " << line << "\n";
      if (end == std::string_view::npos) break;
      start = end + 1;
    }
  };
  static const std::regex image_named(R"(stored as blob sha256:[0-9a-f]{64} at \S+)");
  for (std::size_t i = 0; i < cut && i < transcript.size(); ++i) {
    const auto& r = transcript[i];
    switch (r.role) {
      case message_role::summary: quote("Earlier summary", r.text); break;
      case message_role::user: quote("User", r.text); break;
      case message_role::notice: quote("Notice", r.text); break;
      case message_role::assistant: quote("Assistant", r.text); break;
      case message_role::tool_call:
        quote("Tool call " + r.tool + ((r.call_kind == model::tool_kind::hosted) ? " (hosted)" : ""),
              json::serialize(r.input));
        break;
      case message_role::tool_result: {
        // Media are described, never embedded.
        const std::string described = std::regex_replace(r.text, image_named, "(an image; its bytes are omitted)");
        quote(r.is_error ? "Tool error" : "Tool result", described);
        break;
      }
    }
  }
  model_request req;
  req.model = std::move(model);
  req.tools_enabled = false;
  chat_message system;
  system.role = chat_role::system;
  system.text =
      "You compress the history of a coding agent's conversation so that the agent can continue the work "
      "without it. Be faithful and specific; keep names, paths, numbers and decisions exactly.";
  req.messages.push_back(std::move(system));
  chat_message ask;
  ask.role = chat_role::user;
  ask.text = "Here is the conversation so far, quoted:\n\n" + text.str() +
             "\nSummarize it with exactly these sections:\n"
             "Objective: what the user wants overall.\n"
             "Important details: facts, constraints, names, values and decisions to keep.\n"
             "Work state: what is done and what is not, with results of commands and edits.\n"
             "Next move: the next concrete action.\n"
             "Relevant files: the paths involved, each with one line on why.";
  req.messages.push_back(std::move(ask));
  return req;
}

}  // namespace tether::runtime::native
