// The ACP client's mapping, permission policy and fs confinement (acp_protocol.h).
#include "runtime/agent/acp/protocol.h"


#include <boost/json/serialize.hpp>

#include "model/reported.h"
#include "runtime/agent/json_lines.h"
#include "util/beneath.h"

namespace tether::runtime::agent {

namespace fs = std::filesystem;
namespace json = boost::json;

namespace {

constexpr std::uintmax_t max_read_bytes = 16U << 20U;

// The text of ACP content: a ContentBlock {type:"text", text}, or a tool
// call's content list of {type:"content", content:{…}} (diffs and
// terminals carry no text).
std::string content_text(const json::value* v) {
  if (v == nullptr) return {};
  if (v->is_object()) {
    const auto& o = v->as_object();
    if (str(o, "type") == "text") return str(o, "text");
    if (str(o, "type") == "content") return content_text(o.if_contains("content"));
    return {};
  }
  std::string out;
  if (v->is_array())
    for (const auto& item : v->as_array()) out += content_text(&item);
  return out;
}

tether::error refused(std::string why) { return {std::make_error_code(std::errc::permission_denied), std::move(why)}; }

}  // namespace

void acp_turn::begin() {
  tools_.clear();
  text_.clear();
  cost_at_begin_ = cost_;
}

std::string acp_turn::tool_kind(const std::string& id) const {
  const auto it = tools_.find(id);
  return it == tools_.end() ? std::string() : it->second.kind;
}

void acp_turn::merge(tool& t, const json::object& u) {
  if (auto title = str(u, "title"); !title.empty()) t.title = std::move(title);
  if (auto kind = str(u, "kind"); !kind.empty()) t.kind = std::move(kind);
  if (const auto* input = u.if_contains("rawInput"); input != nullptr && !input->is_null()) t.input = *input;
  t.hidden = dialect::is_tether_tool(t.title);
}

void acp_turn::flush_text(std::vector<agent_event>& out) {
  if (text_.empty()) return;
  out.emplace_back(agent_message{std::move(text_)});
  text_.clear();
}

void acp_turn::start(const std::string& id, tool& t, std::vector<agent_event>& out) {
  if (t.started) return;
  t.started = true;
  if (t.hidden) return;
  flush_text(out);
  out.emplace_back(tool_start{id, t.title.empty() ? t.kind : t.title, t.input});
}

std::vector<agent_event> acp_turn::approved(const std::string& id) {
  std::vector<agent_event> out;
  if (auto it = tools_.find(id); it != tools_.end() && !it->second.ended) start(id, it->second, out);
  return out;
}

std::vector<agent_event> acp_turn::update(const json::object& u) {
  std::vector<agent_event> out;
  const auto kind = str(u, "sessionUpdate");
  if (kind == "agent_message_chunk") {
    auto text = content_text(u.if_contains("content"));
    if (text.empty()) return out;
    text_ += text;
    out.emplace_back(text_piece{std::move(text)});
  } else if (kind == "tool_call" || kind == "tool_call_update") {
    const auto id = str(u, "toolCallId");
    if (id.empty()) return out;
    auto& t = tools_[id];
    merge(t, u);
    const auto status = str(u, "status");
    if (status == "in_progress" || status == "completed" || status == "failed") start(id, t, out);
    if ((status == "completed" || status == "failed") && !t.ended) {
      t.ended = true;
      if (t.hidden) return out;
      auto text = content_text(u.if_contains("content"));
      if (const auto* raw = u.if_contains("rawOutput"); text.empty() && raw != nullptr && !raw->is_null())
        text = raw->is_string() ? std::string(raw->as_string()) : json::serialize(*raw);
      out.emplace_back(tool_end{id, status == "completed", std::move(text)});
    }
  } else if (kind == "usage_update") {
    if (const auto* cost = object_at(u, "cost"))
      if (auto amount = model::cost_at(*cost, "amount")) cost_ = amount;
  }
  return out;
}

std::vector<agent_event> acp_turn::wrap_up() {
  std::vector<agent_event> out;
  flush_text(out);
  for (auto& [id, t] : tools_) {
    if (t.ended || t.hidden) continue;
    start(id, t, out);
    t.ended = true;
    out.emplace_back(tool_end{id, false, "the turn ended before the tool finished"});
  }
  return out;
}

std::vector<agent_event> acp_turn::finish(const json::value& result) {
  auto out = wrap_up();
  const auto* r = result.is_object() ? &result.as_object() : nullptr;
  std::optional<turn_usage> used;
  if (const auto* u = r != nullptr ? object_at(*r, "usage") : nullptr) {
    used.emplace();
    const auto read = model::token_count(*u, "cachedReadTokens");
    used->usage.input_tokens = model::token_count(*u, "inputTokens") + read + model::token_count(*u, "cachedWriteTokens");
    used->usage.cached_input_tokens = read;
    used->usage.output_tokens = model::token_count(*u, "outputTokens") + model::token_count(*u, "thoughtTokens");
  }
  if (cost_ && cost_ != cost_at_begin_) {
    if (!used) used.emplace();
    const double before = cost_at_begin_.value_or(0);
    used->agent_cost_usd = *cost_ >= before ? *cost_ - before : *cost_;
  }
  if (used) out.emplace_back(std::move(*used));
  const auto reason = r != nullptr ? str(*r, "stopReason") : std::string();
  if (reason == "end_turn")
    out.emplace_back(turn_done{});
  else if (reason.empty())
    out.emplace_back(turn_failed{"the agent ended the turn without a stopReason"});
  else
    out.emplace_back(turn_failed{"the agent stopped the turn: " + reason});
  return out;
}

std::vector<agent_event> acp_turn::fail(std::string message) {
  auto out = wrap_up();
  out.emplace_back(turn_failed{std::move(message)});
  return out;
}

std::optional<std::string> pick_permission(agent_permissions policy, std::string_view kind,
                                           const json::array& options) {
  bool allow = policy == agent_permissions::approve_all;
  if (policy == agent_permissions::approve_reads)
    allow = kind == "read" || kind == "search" || kind == "fetch" || kind == "think";
  const std::string once = allow ? "allow_once" : "reject_once";
  const std::string always = allow ? "allow_always" : "reject_always";
  std::optional<std::string> fallback;
  for (const auto& v : options) {
    if (!v.is_object()) continue;
    const auto k = str(v.as_object(), "kind");
    if (k == once) return str(v.as_object(), "optionId");
    if (k == always && !fallback) fallback = str(v.as_object(), "optionId");
  }
  return fallback;
}

result<fs::path> confined_path(const fs::path& workspace, std::string_view path) {
  const fs::path asked(path);
  if (asked.empty()) return refused("an empty path");
  for (const auto& part : asked)
    if (part == "..") return refused("a path with '..' is refused: " + asked.string());
  std::error_code ec;
  const auto root = fs::canonical(workspace, ec);
  if (ec) return tether::error(ec, "the workspace " + workspace.string() + ": " + ec.message());
  const auto full = fs::weakly_canonical(asked.is_absolute() ? asked : root / asked, ec);
  if (ec) return tether::error(ec, asked.string() + ": " + ec.message());
  auto r = root.begin();
  auto f = full.begin();
  for (; r != root.end(); ++r, ++f)
    if (f == full.end() || *f != *r) return refused(asked.string() + " is outside the workspace " + root.string());
  // weakly_canonical resolved every symlink it could; one left is dangling,
  // and following it could create a file anywhere.
  fs::path at = root;
  for (; f != full.end(); ++f) {
    at /= *f;
    if (fs::is_symlink(fs::symlink_status(at, ec)))
      return refused(asked.string() + " goes through a symlink that leads nowhere: " + at.string());
  }
  return full;
}

namespace {

// Where a confined path is opened: a descriptor of the workspace and the
// path beneath it (beneath.h refuses any link swapped in since the check).
struct opened_root {
  unique_fd root;
  std::string rel;
};

result<opened_root> beneath_workspace(const fs::path& workspace, std::string_view path) {
  auto at = confined_path(workspace, path);
  if (!at) return at.error();
  std::error_code ec;
  const auto root = fs::canonical(workspace, ec);
  if (ec) return tether::error(ec, "the workspace " + workspace.string() + ": " + ec.message());
  auto fd = beneath::open_root(root);
  if (!fd) return fd.error();
  return opened_root{std::move(*fd), at->lexically_relative(root).generic_string()};
}

}  // namespace

result<std::string> read_text_file(const fs::path& workspace, std::string_view path, std::optional<std::int64_t> line,
                                   std::optional<std::int64_t> limit) {
  auto at = beneath_workspace(workspace, path);
  if (!at) return at.error();
  auto fd = beneath::open_regular(at->root.get(), at->rel);
  if (!fd) return fd.error();
  auto read = beneath::read_all(fd->get(), max_read_bytes, at->rel);
  if (!read) return read.error();
  auto all = std::move(*read);
  if (!line && !limit) return all;
  const std::int64_t first = line.value_or(1) < 1 ? 1 : line.value_or(1);
  std::string out;
  std::int64_t n = 1;
  std::int64_t taken = 0;
  for (std::size_t pos = 0; pos < all.size();) {
    const auto nl = all.find('\n', pos);
    const auto end = nl == std::string::npos ? all.size() : nl + 1;
    if (n >= first) {
      if (limit && taken >= *limit) break;
      out.append(all, pos, end - pos);
      ++taken;
    }
    ++n;
    pos = end;
  }
  return out;
}

result<void> write_text_file(const fs::path& workspace, agent_permissions policy, std::string_view path,
                             std::string_view content) {
  if (policy != agent_permissions::approve_all)
    return refused("the profile's permissions do not allow writing files");
  auto at = beneath_workspace(workspace, path);
  if (!at) return at.error();
  return beneath::write_file(at->root.get(), at->rel, content, 0644);
}

}  // namespace tether::runtime::agent
