#include "model/events.h"

#include <array>
#include <cmath>
#include <limits>
#include <utility>

#include <boost/json.hpp>

#include "model/errors.h"

namespace tether::model {

namespace json = boost::json;

namespace {

class model_category_impl final : public std::error_category {
 public:
  const char* name() const noexcept override { return "model"; }
  std::string message(int c) const override {
    return static_cast<model_errc>(c) == model_errc::undecodable ? "undecodable event" : "unknown model error";
  }
};

// Reads typed fields out of a stored payload, remembering the first failure.
class reader {
 public:
  explicit reader(const json::object& o, int version = 1) : o_(o), version_(version) {}

  // The stored row's payload version: a decoder reads every version up to its type's.
  [[nodiscard]] int version() const { return version_; }
  [[nodiscard]] bool has(std::string_view key) const { return o_.if_contains(key) != nullptr; }

  std::string str(std::string_view key, bool required = true) {
    const auto* v = o_.if_contains(key);
    if (v == nullptr || v->is_null()) {
      if (required) fail(key, "missing");
      return {};
    }
    if (!v->is_string()) {
      fail(key, "not a string");
      return {};
    }
    return std::string(v->get_string());
  }
  std::int64_t i64(std::string_view key, bool required = true) {
    const auto* v = o_.if_contains(key);
    if (v == nullptr) {
      if (required) fail(key, "missing");
      return 0;
    }
    if (v->is_int64()) return v->get_int64();
    if (v->is_uint64() && v->get_uint64() <= static_cast<std::uint64_t>(INT64_MAX))
      return static_cast<std::int64_t>(v->get_uint64());
    fail(key, "not an integer");
    return 0;
  }
  std::optional<double> number(std::string_view key) {
    const auto* v = o_.if_contains(key);
    if (v == nullptr || v->is_null()) return std::nullopt;
    if (v->is_double()) {
      // JSON text has no infinity, but a number past a double's range
      // (1e400) parses as one: never written (usage_json drops it), so a
      // row holding one is refused rather than decoded into a cost that
      // cannot be written back.
      if (!std::isfinite(v->get_double())) {
        fail(key, "not a finite number");
        return std::nullopt;
      }
      return v->get_double();
    }
    if (v->is_int64()) return static_cast<double>(v->get_int64());
    if (v->is_uint64()) return static_cast<double>(v->get_uint64());
    fail(key, "not a number");
    return std::nullopt;
  }
  bool boolean(std::string_view key) {
    const auto* v = o_.if_contains(key);
    if (v == nullptr) return false;
    if (!v->is_bool()) {
      fail(key, "not a boolean");
      return false;
    }
    return v->get_bool();
  }
  json::value any(std::string_view key) {
    const auto* v = o_.if_contains(key);
    return v == nullptr ? json::value() : *v;
  }
  template <class Id>
  Id id(std::string_view key, bool required = true) {
    auto s = str(key, required);
    if (s.empty()) return Id();
    auto r = Id::parse(s);
    if (!r) {
      fail(key, "malformed id");
      return Id();
    }
    return *r;
  }
  model::usage usage(std::string_view key) {
    const auto* v = o_.if_contains(key);
    if (v == nullptr) return {};
    if (!v->is_object()) {
      fail(key, "not an object");
      return {};
    }
    reader r(v->get_object());
    model::usage u{r.i64("input_tokens", false), r.i64("output_tokens", false), r.i64("cached_input_tokens", false),
                   r.number("cost_usd"), r.str("cost_status", false)};
    if (!r.error_.empty()) fail(key, r.error_);
    return u;
  }
  void fail(std::string_view key, std::string_view why) {
    if (error_.empty()) error_ = std::string(key) + ": " + std::string(why);
  }
  [[nodiscard]] const std::string& failure() const { return error_; }

 private:
  const json::object& o_;
  int version_ = 1;
  std::string error_;
};

json::object usage_json(const usage& u) {
  json::object o{{"input_tokens", u.input_tokens},
                 {"output_tokens", u.output_tokens},
                 {"cached_input_tokens", u.cached_input_tokens}};
  // A cost that is not finite would be written as `Infinity` (not JSON);
  // parsers never make one (model/reported.h), and none is stored.
  if (u.cost_usd && std::isfinite(*u.cost_usd)) o["cost_usd"] = *u.cost_usd;
  if (!u.cost_status.empty()) o["cost_status"] = u.cost_status;
  return o;
}

// encode_one / decode_one per payload type.
json::object encode_one(const session_created& p) {
  json::object o{{"title", p.title}, {"workspace", p.workspace}, {"profile", p.profile}};
  if (!p.metadata.empty()) o["metadata"] = p.metadata;
  return o;
}
json::object encode_one(const session_updated& p) { return {{"title", p.title}}; }
json::object encode_one(const session_reset& p) { return {{"generation", p.generation}}; }
json::object encode_one(const session_forked& p) {
  return {{"from", p.from.str()}, {"fork", p.fork.str()}, {"at", p.at}, {"snapshot", p.snapshot}};
}
json::object encode_one(const input_admitted& p) {
  return {
      {"input_id", p.input.str()}, {"prompt", p.prompt}, {"delivery", to_string(p.delivery)}, {"resume", p.resume}};
}
json::object encode_one(const input_promoted& p) {
  return {{"input_id", p.input.str()}, {"execution_id", p.execution.str()}};
}
json::object encode_one(const input_cancelled& p) { return {{"input_id", p.input.str()}, {"reason", p.reason}}; }
json::object encode_one(const input_returned& p) {
  return {{"input_id", p.input.str()}, {"execution_id", p.execution.str()}, {"reason", p.reason}, {"returns", p.returns}};
}
json::object encode_one(const execution_started& p) {
  return {{"execution_id", p.execution.str()}, {"node", p.node}, {"runtime", p.runtime}, {"model", p.model}};
}
json::object encode_one(const execution_recovered& p) {
  return {{"execution_id", p.execution.str()}, {"node", p.node}, {"attempt", p.attempt}};
}
json::object encode_one(const execution_finished& p) {
  json::object o{
      {"execution_id", p.execution.str()}, {"outcome", to_string(p.outcome)}, {"usage", usage_json(p.usage)}};
  if (!p.reason.empty()) o["reason"] = p.reason;
  if (!p.error.empty()) o["error"] = p.error;
  return o;
}
json::object encode_one(const step_started& p) { return {{"execution_id", p.execution.str()}, {"step", p.step}}; }
json::object encode_one(const step_ended& p) {
  json::object o{{"finish", p.finish}, {"usage", usage_json(p.usage)}};
  if (p.agent_cost_usd && std::isfinite(*p.agent_cost_usd)) o["agent_cost_usd"] = *p.agent_cost_usd;
  return o;
}
json::object encode_one(const step_failed& p) { return {{"error", p.error}}; }
json::object encode_one(const step_retry_scheduled& p) {
  return {{"attempt", p.attempt}, {"at", p.at_ms}, {"error", p.error}};
}
json::object encode_one(const text_delta& p) { return {{"text", p.text}}; }
json::object encode_one(const text_ended& p) { return {{"message_id", p.message.str()}, {"text", p.text}}; }
json::object encode_one(const reasoning_delta& p) { return {{"text", p.text}}; }
json::object encode_one(const reasoning_ended& p) { return {{"text", p.text}}; }
json::object encode_one(const tool_called& p) {
  return {{"call_id", p.call.str()}, {"name", p.tool}, {"input", p.input}, {"kind", to_string(p.kind)}};
}
json::object encode_one(const tool_progress& p) { return {{"call_id", p.call.str()}, {"text", p.text}}; }
json::object encode_one(const tool_succeeded& p) {
  json::object o{{"call_id", p.call.str()}, {"content", p.content}};
  if (!p.output_path.empty()) o["output_path"] = p.output_path;
  return o;
}
json::object encode_one(const tool_failed& p) { return {{"call_id", p.call.str()}, {"error", p.error}}; }
json::object encode_one(const interaction_requested& p) {
  json::object o{{"interaction_id", p.interaction.str()}, {"kind", p.kind}, {"payload", p.payload}};
  if (!p.call.empty()) o["call_id"] = p.call.str();
  return o;
}
json::object encode_one(const interaction_resolved& p) {
  return {{"interaction_id", p.interaction.str()}, {"status", p.status}, {"result", p.result}};
}
json::object encode_one(const runtime_bound& p) {
  json::object o{{"runtime", p.runtime},
                 {"external_session_id", p.external_session_id},
                 {"last_seen_seq", p.last_seen_seq},
                 {"state", p.state}};
  if (p.generation) o["generation"] = *p.generation;
  return o;
}
json::object encode_one(const synthetic& p) { return {{"text", p.text}, {"reason", p.reason}}; }
json::object encode_one(const compaction_ended& p) {
  return {{"summary", p.summary}, {"kept_from_seq", p.kept_from_seq}};
}
json::object encode_one(const env_lease_requested& p) {
  return {{"environment", p.environment}, {"key", p.key}, {"name", p.provider_name}, {"labels", p.labels}};
}
json::object encode_one(const env_lease_acquired& p) {
  return {{"environment", p.environment}, {"provider_id", p.provider_id}, {"outcome", p.outcome},
          {"warm", p.warm},               {"workspace", p.workspace}};
}
json::object encode_one(const env_lease_released& p) {
  return {{"environment", p.environment}, {"provider_id", p.provider_id}, {"reason", p.reason}};
}
json::object encode_one(const env_workspace_synced& p) {
  return {{"direction", p.direction}, {"tree_sha256", p.tree_sha256}, {"bytes", p.bytes},
          {"entries", p.entries},     {"dropped", p.dropped},         {"cleared", p.cleared}};
}
json::object encode_one(const agent_state_saved& p) {
  json::array files;
  for (const auto& f : p.manifest) {
    json::array chunks;
    for (const auto& c : f.chunks) chunks.emplace_back(c);
    files.push_back(json::object{{"path", f.path}, {"size", f.size}, {"mode", f.mode}, {"chunks", std::move(chunks)}});
  }
  return {{"kind", p.kind},       {"agent_session", p.agent_session}, {"generation", p.generation},
          {"workspace", p.workspace}, {"manifest", std::move(files)},  {"bytes", p.bytes},
          {"stored", p.stored}};
}
json::object encode_one(const agent_state_unavailable& p) {
  return {{"kind", p.kind}, {"agent_session", p.agent_session}, {"reason", p.reason}};
}

json::object encode_one(const task_created& p) {
  json::object o{{"task_id", p.task.str()}, {"title", p.title},         {"description", p.description},
                 {"status", to_string(p.status)}, {"mode", to_string(p.mode)}, {"priority", p.priority},
                 {"actor", p.actor}};
  if (!p.project.empty()) o["project_id"] = p.project.str();
  if (!p.parent.empty()) o["parent_task_id"] = p.parent.str();
  return o;
}
json::object encode_one(const task_updated& p) {
  json::object o{{"actor", p.actor}};
  if (p.title) o["title"] = *p.title;
  if (p.description) o["description"] = *p.description;
  if (p.priority) o["priority"] = *p.priority;
  if (p.mode) o["mode"] = to_string(*p.mode);
  if (p.project) o["project_id"] = p.project->str();  // "" clears it
  return o;
}
json::object encode_one(const task_status_changed& p) {
  json::object o{{"from", to_string(p.from)}, {"to", to_string(p.to)}, {"actor", p.actor}};
  if (!p.reason.empty()) o["reason"] = p.reason;
  return o;
}
json::object encode_one(const task_commented& p) {
  return {{"comment_id", p.comment.str()}, {"author", p.author}, {"text", p.text}};
}
json::object encode_one(const document_revised& p) {
  json::object o{
      {"document", p.document}, {"revision_id", p.revision.str()}, {"content", p.content}, {"author", p.author}};
  if (!p.base.empty()) o["base_revision_id"] = p.base.str();
  return o;
}
json::object encode_one(const task_prepared& p) { return {{"record", p.record}}; }
json::object encode_one(const document_accepted& p) {
  return {{"document", p.document}, {"revision_id", p.revision.str()}, {"actor", p.actor}};
}

void decode_one(reader& r, session_created& p) {
  p.title = r.str("title", false);
  p.workspace = r.str("workspace", false);
  p.profile = r.str("profile", false);
  auto metadata = r.any("metadata");
  if (metadata.is_object())
    p.metadata = std::move(metadata.as_object());
  else if (!metadata.is_null())
    r.fail("metadata", "not an object");
}
void decode_one(reader& r, session_updated& p) { p.title = r.str("title"); }
void decode_one(reader& r, session_reset& p) { p.generation = r.i64("generation", false); }
void decode_one(reader& r, session_forked& p) {
  p.from = r.id<session_id>("from");
  p.fork = r.id<session_id>("fork");
  p.at = r.i64("at");
  if (p.at < 1) r.fail("at", "not a seq");
  p.snapshot = r.str("snapshot", false);
}
void decode_one(reader& r, input_admitted& p) {
  p.input = r.id<input_id>("input_id");
  p.prompt = r.str("prompt");
  const auto d = parse_delivery(r.str("delivery"));
  if (!d)
    r.fail("delivery", "unknown");
  else
    p.delivery = *d;
  if (r.version() >= 2) {
    if (!r.has("resume")) r.fail("resume", "missing");
    p.resume = r.boolean("resume");
  }
}
void decode_one(reader& r, input_promoted& p) {
  p.input = r.id<input_id>("input_id");
  p.execution = r.id<execution_id>("execution_id");
}
void decode_one(reader& r, input_cancelled& p) {
  p.input = r.id<input_id>("input_id");
  p.reason = r.str("reason", false);
}
void decode_one(reader& r, input_returned& p) {
  p.input = r.id<input_id>("input_id");
  p.execution = r.id<execution_id>("execution_id");
  p.reason = r.str("reason", false);
  p.returns = r.i64("returns");
}
void decode_one(reader& r, execution_started& p) {
  p.execution = r.id<execution_id>("execution_id");
  p.node = r.str("node");
  p.runtime = r.version() >= 2 ? r.str("runtime") : std::string("native");
  if (r.version() >= 3) p.model = r.str("model", false);
}
void decode_one(reader& r, execution_recovered& p) {
  p.execution = r.id<execution_id>("execution_id");
  p.node = r.str("node");
  p.attempt = r.i64("attempt");
}
void decode_one(reader& r, execution_finished& p) {
  p.execution = r.id<execution_id>("execution_id");
  const auto o = parse_outcome(r.str("outcome"));
  if (!o)
    r.fail("outcome", "unknown");
  else
    p.outcome = *o;
  p.reason = r.str("reason", false);
  p.error = r.str("error", false);
  p.usage = r.usage("usage");
}
void decode_one(reader& r, step_started& p) {
  p.execution = r.id<execution_id>("execution_id");
  p.step = r.i64("step");
}
void decode_one(reader& r, step_ended& p) {
  p.finish = r.str("finish");
  p.usage = r.usage("usage");
  p.agent_cost_usd = r.number("agent_cost_usd");
}
void decode_one(reader& r, step_failed& p) { p.error = r.str("error"); }
void decode_one(reader& r, step_retry_scheduled& p) {
  p.attempt = r.i64("attempt");
  p.at_ms = r.i64("at");
  p.error = r.str("error", false);
}
void decode_one(reader& r, text_delta& p) { p.text = r.str("text"); }
void decode_one(reader& r, text_ended& p) {
  p.message = r.id<message_id>("message_id");
  p.text = r.str("text");
}
void decode_one(reader& r, reasoning_delta& p) { p.text = r.str("text"); }
void decode_one(reader& r, reasoning_ended& p) { p.text = r.str("text"); }
void decode_one(reader& r, tool_called& p) {
  p.call = r.id<call_id>("call_id");
  p.tool = r.str("name");
  p.input = r.any("input");
  if (r.version() < 2) {
    p.kind = r.boolean("hosted") ? tool_kind::hosted : tool_kind::local;
    return;
  }
  const auto kind = parse_tool_kind(r.str("kind"));
  if (!kind)
    r.fail("kind", "not local, hosted or agent");
  else
    p.kind = *kind;
}
void decode_one(reader& r, tool_progress& p) {
  p.call = r.id<call_id>("call_id");
  p.text = r.str("text");
}
void decode_one(reader& r, tool_succeeded& p) {
  p.call = r.id<call_id>("call_id");
  p.content = r.str("content");
  p.output_path = r.str("output_path", false);
}
void decode_one(reader& r, tool_failed& p) {
  p.call = r.id<call_id>("call_id");
  p.error = r.str("error");
}
void decode_one(reader& r, interaction_requested& p) {
  p.interaction = r.id<interaction_id>("interaction_id");
  p.call = r.id<call_id>("call_id", false);
  p.kind = r.str("kind");
  p.payload = r.any("payload");
}
void decode_one(reader& r, interaction_resolved& p) {
  p.interaction = r.id<interaction_id>("interaction_id");
  p.status = r.str("status");
  p.result = r.any("result");
}
void decode_one(reader& r, runtime_bound& p) {
  p.runtime = r.str("runtime");
  p.external_session_id = r.str("external_session_id", false);
  if (r.version() < 2) return;  // no generation: see runtime_bound
  if (r.has("generation")) p.generation = r.i64("generation");
  p.last_seen_seq = r.i64("last_seen_seq", false);
  p.state = r.str("state", false);
  if (p.state.size() > runtime_bound::max_state_bytes)
    r.fail("state", "larger than " + std::to_string(runtime_bound::max_state_bytes) + " bytes");
}
void decode_one(reader& r, synthetic& p) {
  p.text = r.str("text");
  p.reason = r.str("reason", false);
}
void decode_one(reader& r, compaction_ended& p) {
  p.summary = r.str("summary");
  p.kept_from_seq = r.i64("kept_from_seq");
}
void decode_one(reader& r, env_lease_requested& p) {
  p.environment = r.str("environment");
  p.key = r.str("key");
  p.provider_name = r.str("name");
  auto labels = r.any("labels");
  if (labels.is_object()) {
    for (const auto& [k, v] : labels.as_object()) {
      if (!v.is_string()) r.fail("labels", "a label that is not a string");
    }
    p.labels = std::move(labels.as_object());
  } else if (!labels.is_null()) {
    r.fail("labels", "not an object");
  }
}
void decode_one(reader& r, env_lease_acquired& p) {
  p.environment = r.str("environment");
  p.provider_id = r.str("provider_id");
  p.outcome = r.str("outcome");
  if (p.outcome != "created" && p.outcome != "resumed" && p.outcome != "replaced") r.fail("outcome", "unknown");
  p.warm = r.boolean("warm");
  p.workspace = r.str("workspace", false);
}
void decode_one(reader& r, env_lease_released& p) {
  p.environment = r.str("environment");
  p.provider_id = r.str("provider_id");
  p.reason = r.str("reason");
}
void decode_one(reader& r, env_workspace_synced& p) {
  p.direction = r.str("direction");
  if (p.direction != "up" && p.direction != "down") r.fail("direction", "neither up nor down");
  p.tree_sha256 = r.str("tree_sha256");
  p.bytes = r.i64("bytes");
  p.entries = r.i64("entries");
  p.dropped = r.i64("dropped", false);
  p.cleared = r.i64("cleared", false);
}
namespace {
bool is_sha256_hex(std::string_view s) {
  return s.size() == 64 && s.find_first_not_of("0123456789abcdef") == std::string_view::npos;
}
// A path under the agent's home: relative, no empty, "." or ".." part, no NUL.
bool is_home_path(std::string_view p) {
  if (p.empty() || p.front() == '/' || p.find('\0') != std::string_view::npos) return false;
  for (;;) {  // each part, the one after a trailing '/' included
    const auto slash = p.find('/');
    const auto part = p.substr(0, slash);
    if (part.empty() || part == "." || part == "..") return false;
    if (slash == std::string_view::npos) return true;
    p.remove_prefix(slash + 1);
  }
}
void decode_state_file(reader& r, const json::value& v, state_file& f) {
  if (!v.is_object()) return r.fail("manifest", "an entry is not an object");
  reader e(v.get_object());
  f.path = e.str("path");
  f.size = e.i64("size");
  f.mode = e.i64("mode");
  const auto chunks = e.any("chunks");
  if (!e.failure().empty()) return r.fail("manifest", e.failure());
  if (!is_home_path(f.path)) return r.fail("manifest", "a path leaves the agent's home: " + f.path);
  if (f.size < 0 || f.mode < 0 || f.mode > 07777) return r.fail("manifest", "a size or mode out of range");
  if (!chunks.is_array()) return r.fail("manifest", "chunks is not an array");
  for (const auto& c : chunks.get_array()) {
    if (!c.is_string() || !is_sha256_hex(c.get_string())) return r.fail("manifest", "a chunk is not a SHA-256");
    f.chunks.emplace_back(c.get_string());
  }
  const auto per = static_cast<std::int64_t>(state_file::chunk_bytes);
  if (std::cmp_not_equal(f.chunks.size(), (f.size + per - 1) / per))
    return r.fail("manifest", "the chunks of " + f.path + " cannot hold its size");
}
}  // namespace
void decode_one(reader& r, agent_state_saved& p) {
  p.kind = r.str("kind");
  p.agent_session = r.str("agent_session");
  p.generation = r.i64("generation");
  p.workspace = r.str("workspace", false);
  p.bytes = r.i64("bytes");
  p.stored = r.i64("stored", false);
  const auto files = r.any("manifest");
  if (!files.is_array()) return r.fail("manifest", "not an array");
  for (const auto& v : files.get_array()) decode_state_file(r, v, p.manifest.emplace_back());
}
void decode_one(reader& r, agent_state_unavailable& p) {
  p.kind = r.str("kind");
  p.agent_session = r.str("agent_session", false);
  p.reason = r.str("reason");
}
template <class Enum>
Enum enum_field(reader& r, std::string_view key, std::optional<Enum> (*parse)(std::string_view), Enum fallback) {
  const auto v = parse(r.str(key));
  if (!v) r.fail(key, "unknown");
  return v.value_or(fallback);
}
void decode_one(reader& r, task_created& p) {
  p.task = r.id<task_id>("task_id");
  p.title = r.str("title");
  p.description = r.str("description", false);
  p.status = enum_field(r, "status", parse_task_status, task_status::todo);
  p.mode = enum_field(r, "mode", parse_work_mode, work_mode::standard);
  p.priority = r.i64("priority", false);
  p.project = r.id<project_id>("project_id", false);
  p.parent = r.id<task_id>("parent_task_id", false);
  p.actor = r.str("actor", false);
}
void decode_one(reader& r, task_updated& p) {
  if (r.has("title")) p.title = r.str("title");
  if (r.has("description")) p.description = r.str("description");
  if (r.has("priority")) p.priority = r.i64("priority");
  if (r.has("mode")) p.mode = enum_field(r, "mode", parse_work_mode, work_mode::standard);
  if (r.has("project_id")) p.project = r.id<project_id>("project_id", false);
  p.actor = r.str("actor", false);
}
void decode_one(reader& r, task_status_changed& p) {
  p.from = enum_field(r, "from", parse_task_status, task_status::todo);
  p.to = enum_field(r, "to", parse_task_status, task_status::todo);
  p.actor = r.str("actor", false);
  p.reason = r.str("reason", false);
}
void decode_one(reader& r, task_commented& p) {
  p.comment = r.id<comment_id>("comment_id");
  p.author = r.str("author", false);
  p.text = r.str("text");
}
void decode_one(reader& r, document_revised& p) {
  p.document = r.str("document");
  p.revision = r.id<revision_id>("revision_id");
  p.base = r.id<revision_id>("base_revision_id", false);
  p.content = r.str("content");
  p.author = r.str("author", false);
}
void decode_one(reader& r, task_prepared& p) {
  auto v = r.any("record");
  if (v.is_object())
    p.record = std::move(v.as_object());
  else
    r.fail("record", "not an object");
}
void decode_one(reader& r, document_accepted& p) {
  p.document = r.str("document");
  p.revision = r.id<revision_id>("revision_id");
  p.actor = r.str("actor", false);
}

template <std::size_t I = 0>
result<payload> decode_by_name(std::string_view type, int version, const json::object& data) {
  if constexpr (I == std::variant_size_v<payload>) {
    return make_error(model_errc::undecodable, "unknown event type '" + std::string(type) + "'");
  } else {
    using T = std::variant_alternative_t<I, payload>;
    if (T::name != type) return decode_by_name<I + 1>(type, version, data);
    // Stored rows keep their version: decode_one reads every version from 1
    // up to the current one (input.admitted v1 has no `resume`).
    if (version < 1 || version > T::version)
      return make_error(model_errc::undecodable,
                        std::string(type) + " version " + std::to_string(version) + " is not supported");
    T out;
    reader r(data, version);
    decode_one(r, out);
    if (!r.failure().empty()) return make_error(model_errc::undecodable, std::string(type) + ": " + r.failure());
    return payload(std::move(out));
  }
}

}  // namespace

const std::error_category& model_category() {
  static const model_category_impl c;
  return c;
}

std::string_view to_string(delivery d) { return d == delivery::steer ? "steer" : "queue"; }
std::optional<delivery> parse_delivery(std::string_view s) {
  if (s == "steer") return delivery::steer;
  if (s == "queue") return delivery::queue;
  return std::nullopt;
}

std::string_view to_string(outcome o) {
  switch (o) {
    case outcome::succeeded:
      return "succeeded";
    case outcome::failed:
      return "failed";
    case outcome::interrupted:
      return "interrupted";
    case outcome::waiting:
      return "waiting";
  }
  return "failed";
}
std::optional<outcome> parse_outcome(std::string_view s) {
  for (auto o : {outcome::succeeded, outcome::failed, outcome::interrupted, outcome::waiting})
    if (to_string(o) == s) return o;
  return std::nullopt;
}

std::string_view to_string(tool_kind k) {
  switch (k) {
    case tool_kind::local:
      return "local";
    case tool_kind::hosted:
      return "hosted";
    case tool_kind::agent:
      return "agent";
  }
  return "local";
}
std::optional<tool_kind> parse_tool_kind(std::string_view s) {
  for (auto k : {tool_kind::local, tool_kind::hosted, tool_kind::agent})
    if (to_string(k) == s) return k;
  return std::nullopt;
}

boost::json::object encode_usage(const usage& u) { return usage_json(u); }

result<usage> decode_usage(const boost::json::value& v) {
  json::object wrapper;
  wrapper["usage"] = v;
  reader r(wrapper);
  auto u = r.usage("usage");
  if (!r.failure().empty()) return make_error(model_errc::undecodable, r.failure());
  return u;
}

namespace {
// Token counts come from stored rows and provider replies: a sum that would
// overflow stops at the type's bounds instead of being undefined.
std::int64_t saturating_add(std::int64_t a, std::int64_t b) {
  std::int64_t sum = 0;
  if (!__builtin_add_overflow(a, b, &sum)) return sum;
  return b > 0 ? std::numeric_limits<std::int64_t>::max() : std::numeric_limits<std::int64_t>::min();
}
}  // namespace

usage& usage::operator+=(const usage& o) {
  input_tokens = saturating_add(input_tokens, o.input_tokens);
  output_tokens = saturating_add(output_tokens, o.output_tokens);
  cached_input_tokens = saturating_add(cached_input_tokens, o.cached_input_tokens);
  if (o.cost_usd) cost_usd = cost_usd.value_or(0.0) + *o.cost_usd;
  // Statuses combine from the most to the least certain.
  if (cost_status.empty() || cost_status == o.cost_status) {
    cost_status = o.cost_status;
  } else if (!o.cost_status.empty()) {
    const bool some_unpriced = cost_status == "unpriced" || o.cost_status == "unpriced" || cost_status == "partial" ||
                               o.cost_status == "partial";
    cost_status = some_unpriced ? "partial" : "estimated";
  }
  return *this;
}

std::string_view type_name(const payload& p) {
  return std::visit([](const auto& v) { return std::decay_t<decltype(v)>::name; }, p);
}
int type_version(const payload& p) {
  return std::visit([](const auto& v) { return std::decay_t<decltype(v)>::version; }, p);
}
durability type_durability(const payload& p) {
  return std::visit([](const auto& v) { return std::decay_t<decltype(v)>::storage; }, p);
}
bool is_known_type(std::string_view name) {
  return [&]<std::size_t... I>(std::index_sequence<I...>) {
    return ((std::variant_alternative_t<I, payload>::name == name) || ...);
  }
  (std::make_index_sequence<std::variant_size_v<payload>>{});
}

json::object encode(const payload& p) {
  return std::visit([](const auto& v) { return encode_one(v); }, p);
}

result<payload> decode(std::string_view type, int version, const json::object& data) {
  return decode_by_name(type, version, data);
}

json::object to_json(const event& e) {
  return {{"id", e.id.str()},      {"session_id", e.session.str()},   {"seq", e.seq.value},
          {"type", e.type()},      {"version", type_version(e.body)}, {"time", e.time},
          {"data", encode(e.body)}};
}

}  // namespace tether::model
