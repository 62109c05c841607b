#include "api/views.h"

#include <map>
#include <string>

#include <boost/json/parse.hpp>

namespace tether::api {

namespace json = boost::json;

json::object usage_view(const model::usage& u) {
  json::object o;
  o["input_tokens"] = u.input_tokens;
  o["output_tokens"] = u.output_tokens;
  o["cached_input_tokens"] = u.cached_input_tokens;
  if (u.cost_usd)
    o["cost_usd"] = *u.cost_usd;
  else
    o["cost_usd"] = nullptr;
  o["cost_status"] = u.cost_status;
  return o;
}

json::object input_view(const store::input_row& in) {
  json::object o;
  o["id"] = in.id.str();
  o["session"] = in.session.str();
  o["status"] = std::string(store::to_string(in.status));
  o["delivery"] = std::string(model::to_string(in.delivery));
  o["text"] = in.prompt;
  o["admitted_seq"] = in.admitted_seq.value;
  if (in.promoted_seq)
    o["promoted_seq"] = in.promoted_seq->value;
  else
    o["promoted_seq"] = nullptr;
  if (in.execution) o["execution"] = in.execution->str();
  return o;
}

json::object execution_view(const store::execution_row& x) {
  json::object o;
  o["id"] = x.id.str();
  o["session"] = x.session.str();
  o["node"] = x.node;
  o["runtime"] = x.runtime;
  o["model"] = x.model;
  o["status"] = x.status == store::execution_status::running ? "running" : "finished";
  if (x.outcome)
    o["outcome"] = std::string(model::to_string(*x.outcome));
  else
    o["outcome"] = nullptr;
  o["reason"] = x.reason;
  o["error"] = x.error;
  o["started_seq"] = x.started_seq.value;
  o["started_at"] = x.started_at;
  if (x.finished_at)
    o["finished_at"] = *x.finished_at;
  else
    o["finished_at"] = nullptr;
  o["usage"] = usage_view(x.usage);
  // Which agent process ran it (agent runtimes): {"pid","started_ms"}.
  o["agent_process"] = nullptr;
  if (!x.agent_state.empty()) {
    std::error_code ec;
    auto state = json::parse(x.agent_state, ec);
    if (!ec && state.is_object()) o["agent_process"] = std::move(state);
  }
  return o;
}

json::object interaction_view(const store::interaction_row& i) {
  json::object o;
  o["id"] = i.id.str();
  o["session"] = i.session.str();
  if (i.call)
    o["call_id"] = i.call->str();
  else
    o["call_id"] = nullptr;
  o["kind"] = i.kind;
  o["payload"] = i.payload;
  switch (i.status) {
    case store::interaction_status::pending:
      o["status"] = "pending";
      break;
    case store::interaction_status::answered:
      o["status"] = "answered";
      break;
    case store::interaction_status::cancelled:
      o["status"] = "cancelled";
      break;
  }
  o["result"] = i.result;
  return o;
}

namespace {

json::object message_base(const store::message_row& r, std::string_view role) {
  json::object o;
  o["id"] = r.id;
  o["role"] = role;
  o["seq"] = r.seq.value;
  o["generation"] = r.generation;
  o["text"] = r.text;
  return o;
}

}  // namespace

json::array messages_view(const std::vector<store::message_row>& rows) {
  // Results first, so each call can show how it ended.
  std::map<std::string, const store::message_row*, std::less<>> results;
  for (const auto& r : rows)
    if (r.role == store::message_role::tool_result) results[r.id] = &r;

  json::array out;
  // Index in `out` of the assistant message tool calls attach to: the one
  // just before them, with nothing else in between.
  std::optional<std::size_t> assistant;
  std::map<std::string, std::string, std::less<>> call_tools;
  for (const auto& r : rows) {
    switch (r.role) {
      case store::message_role::user:
        out.push_back(message_base(r, "user"));
        assistant.reset();
        break;
      case store::message_role::assistant:
        out.push_back(message_base(r, "assistant"));
        out.back().as_object()["tool_calls"] = json::array();
        assistant = out.size() - 1;
        break;
      case store::message_role::tool_call: {
        if (!assistant) {  // calls without text: an assistant message of their own
          store::message_row bare = r;
          bare.text.clear();
          out.push_back(message_base(bare, "assistant"));
          out.back().as_object()["tool_calls"] = json::array();
          assistant = out.size() - 1;
        }
        json::object call;
        call["id"] = r.id;
        call["name"] = r.tool;
        call["input"] = r.input;
        call["hosted"] = r.call_kind == model::tool_kind::hosted;
        call["kind"] = std::string(model::to_string(r.call_kind));
        const auto it = results.find(r.id);
        if (it == results.end()) {
          call["status"] = "running";
          call["result"] = "";
        } else {
          call["status"] = it->second->is_error ? "failed" : "succeeded";
          call["result"] = it->second->text;
        }
        out[*assistant].as_object()["tool_calls"].as_array().push_back(std::move(call));
        call_tools[r.id] = r.tool;
        break;
      }
      case store::message_role::tool_result: {
        auto o = message_base(r, "tool");
        o["call_id"] = r.id;
        const auto it = call_tools.find(r.id);
        o["tool"] = it == call_tools.end() ? std::string() : it->second;
        o["is_error"] = r.is_error;
        out.push_back(std::move(o));
        assistant.reset();
        break;
      }
      case store::message_role::notice:
        out.push_back(message_base(r, "synthetic"));
        assistant.reset();
        break;
      case store::message_role::summary:  // never stored; context() only
        break;
    }
  }
  return out;
}

json::object session_view(const session::session_summary& s, const std::filesystem::path& data_dir) {
  const auto& row = s.session;
  json::object o;
  o["id"] = row.id.str();
  o["title"] = row.title;
  o["workspace"] = row.workspace.empty() && !data_dir.empty() ? (data_dir / "workspaces" / row.id.str()).string()
                                                              : row.workspace;
  o["profile"] = row.profile.empty() ? std::string("default") : row.profile;
  o["runtime"] = row.runtime;
  o["metadata"] = row.metadata;
  o["status"] = std::string(session::to_string(s.status));
  o["generation"] = row.generation;
  // The external agent session the next turn resumes (absent after a reset).
  if (row.binding) {
    o["binding"] = json::object{{"runtime", row.binding->runtime},
                                {"external_session_id", row.binding->external_session_id},
                                {"generation", row.binding->generation},
                                {"last_seen_seq", row.binding->last_seen_seq.value}};
  } else {
    o["binding"] = nullptr;
  }
  o["last_seq"] = row.last_seq.value;
  o["pending_inputs"] = s.pending_inputs;
  o["created_at"] = row.created_at;
  o["updated_at"] = row.updated_at;
  o["usage"] = usage_view(s.usage);
  if (row.forked_from)
    o["forked_from"] = json::object{{"session", row.forked_from->session.str()}, {"at", row.forked_from->at}};
  else
    o["forked_from"] = nullptr;
  return o;
}

}  // namespace tether::api
