#include "cli/printer.h"

#include <algorithm>
#include <chrono>
#include <cstdio>

#include <fmt/format.h>
#include <boost/json.hpp>

#include "cli/json_fields.h"
#include "cli/question.h"

namespace tether::cli {

namespace {

namespace json = boost::json;

// The rest of a streamed line: newlines keep the indentation.
std::string indent_rest(std::string_view text) {
  std::string out;
  for (const char c : text) {
    out += c;
    if (c == '\n') out += "    ";
  }
  return out;
}

std::string one_line(std::string_view text, std::size_t max) {
  std::string out;
  for (const char c : text) out += (c == '\n' || c == '\r' || c == '\t') ? ' ' : c;
  if (out.size() > max) out = out.substr(0, max - 3) + "...";
  return out;
}

}  // namespace

output_sink stdout_sink() {
  return [](std::string_view text) {
    std::fwrite(text.data(), 1, text.size(), stdout);
    std::fflush(stdout);
  };
}

std::int64_t wall_clock_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::string indent(std::string_view text) { return "    " + indent_rest(text); }

std::string format_finish(std::string_view outcome, std::string_view error, const model::usage& u,
                          std::optional<std::int64_t> duration_ms) {
  const std::string cost = u.cost_usd ? fmt::format("${:.6f}", *u.cost_usd) : std::string("unavailable");
  return fmt::format("run {}{}{} — {}{} input tokens ({} cached), {} output tokens, cost {} ({})\n", outcome,
                     error.empty() ? "" : ": ", error, duration_ms ? format_duration(*duration_ms) + ", " : "",
                     u.input_tokens, u.cached_input_tokens, u.output_tokens, cost,
                     u.cost_status.empty() ? "not metered" : u.cost_status);
}

live_printer::live_printer(output_sink out, bool status_line) : out_(std::move(out)), status_line_(status_line) {}

void live_printer::clear_status(std::string& out) {
  if (shown_seconds_ < 0) return;
  out += "\r\x1b[2K";  // to the line's start, erase it
  shown_seconds_ = -1;
}

void live_printer::tick(std::int64_t now_ms) {
  if (!status_line_ || tools_.empty()) return;
  const auto& t = tools_.front();
  const std::int64_t seconds = std::max<std::int64_t>(0, now_ms - t.since_ms) / 1000;
  if (seconds < 1 || seconds == shown_seconds_) return;
  shown_seconds_ = seconds;
  out_(fmt::format("\r\x1b[2K    running {}… {}", t.name, format_duration(seconds * 1000)));
}

void live_printer::end_stream(std::string& out) {
  if (!streamed_.empty()) out += "\n";
  streamed_.clear();
}

void live_printer::on(const model::event& e, std::optional<std::int64_t> received_ms) {
  std::string out;
  if (const auto* d = e.as<model::text_delta>()) {
    if (streamed_.empty()) out += "assistant:\n    ";
    out += indent_rest(d->text);
    streamed_ += d->text;
  } else if (const auto* a = e.as<model::input_admitted>()) {
    end_stream(out);
    if (!hidden_inputs_.contains(a->input.str())) out += fmt::format("user:\n{}\n", indent(a->prompt));
  } else if (const auto* t = e.as<model::text_ended>()) {
    if (streamed_.empty()) {
      out += fmt::format("assistant:\n{}\n", indent(t->text));
    } else {
      // Deltas missed at the end (a slow terminal) come from the stored text;
      // a stream joined mid-answer (attach) shows the whole answer again.
      if (t->text.starts_with(streamed_)) {
        out += indent_rest(std::string_view(t->text).substr(streamed_.size()));
        out += "\n";
      } else {
        out += fmt::format("\nassistant (the whole answer):\n{}\n", indent(t->text));
      }
    }
    streamed_.clear();
  } else if (const auto* c = e.as<model::tool_called>()) {
    end_stream(out);
    out += fmt::format("tool call {} {}\n", c->tool, json::serialize(c->input));
    tools_.push_back({c->call.str(), c->tool, received_ms.value_or(e.time)});
  } else if (const auto* ok = e.as<model::tool_succeeded>()) {
    forget_tool(ok->call.str());
    end_stream(out);
    out += fmt::format("tool result:\n{}\n", indent(ok->content));
  } else if (const auto* f = e.as<model::tool_failed>()) {
    forget_tool(f->call.str());
    end_stream(out);
    out += fmt::format("tool failed:\n{}\n", indent(f->error));
  } else if (const auto* q = e.as<model::interaction_requested>()) {
    end_stream(out);
    out += format_question(q->interaction.str(), q->payload);
    question_ = open_question{q->interaction.str(), q->payload};
  } else if (const auto* r = e.as<model::interaction_resolved>()) {
    end_stream(out);
    out += fmt::format("{} ({}): {}\n", r->status, r->interaction.str(), json::serialize(r->result));
    if (question_ && question_->interaction == r->interaction.str()) question_.reset();
  } else if (const auto* s = e.as<model::synthetic>()) {
    end_stream(out);
    out += fmt::format("notice: {}\n", s->text);
  } else if (const auto* rs = e.as<model::session_reset>()) {
    end_stream(out);
    out += fmt::format("session reset (generation {})\n", rs->generation);
  } else if (const auto* fk = e.as<model::session_forked>()) {
    end_stream(out);
    out += fmt::format("forked: {} from {} at seq {}\n", fk->fork.str(), fk->from.str(), fk->at);
  } else if (const auto* r = e.as<model::step_retry_scheduled>()) {
    end_stream(out);
    out += fmt::format("retry {} scheduled: {}\n", r->attempt, r->error);
  } else if (const auto* sf = e.as<model::step_failed>()) {
    end_stream(out);
    out += fmt::format("step failed: {}\n", sf->error);
  } else if (e.as<model::execution_started>() != nullptr) {
    started_at_ = e.time;
  } else if (const auto* x = e.as<model::execution_finished>()) {
    tools_.clear();
    end_stream(out);
    std::optional<std::int64_t> took;
    if (started_at_) took = e.time - *started_at_;
    out += format_finish(model::to_string(x->outcome), x->error, x->usage, took);
    started_at_.reset();
    finished_ = true;
  }
  if (out.empty()) return;
  std::string cleared;
  clear_status(cleared);
  out_(cleared + out);
}

void live_printer::forget_tool(const std::string& call) {
  std::erase_if(tools_, [&call](const running_tool& t) { return t.call == call; });
}

void live_printer::show_question(open_question q) {
  out_(format_question(q.interaction, q.payload));
  question_ = std::move(q);
}

result<model::event> event_from_json(const json::value& v) {
  if (!v.is_object()) return make_error(util_errc::malformed_json, "an event is not an object");
  const auto& o = v.as_object();
  const auto* data = o.if_contains("data");
  if (data == nullptr || !data->is_object()) return make_error(util_errc::malformed_json, "an event has no data");
  const auto version = static_cast<int>(int_of(v, "version"));
  auto body = model::decode(str_of(v, "type"), version == 0 ? 1 : version, data->as_object());
  if (!body) return body.error();
  model::event e;
  e.id = event_id::trusted(str_of(v, "id"));
  e.session = session_id::trusted(str_of(v, "session_id"));
  e.seq = event_seq{int_of(v, "seq")};
  e.time = int_of(v, "time");
  e.body = std::move(*body);
  return e;
}

std::string format_event_line(const json::value& v) {
  const std::string type = str_of(v, "type");
  std::string summary;
  if (v.is_object()) {
    if (const auto* data = v.as_object().if_contains("data")) summary = one_line(json::serialize(*data), 100);
  }
  return fmt::format("{:>5} {:<22} {}\n", int_of(v, "seq"), type, summary);
}

std::string format_duration(std::int64_t ms) {
  if (ms < 0) ms = 0;
  if (ms < 10'000) return fmt::format("{:.1f}s", static_cast<double>(ms) / 1000.0);
  const std::int64_t sec = ms / 1000;
  if (sec < 60) return fmt::format("{}s", sec);
  if (sec < 3600) return fmt::format("{}m{:02}s", sec / 60, sec % 60);
  if (sec < 86'400) return fmt::format("{}h{:02}m", sec / 3600, (sec % 3600) / 60);
  return fmt::format("{}d{:02}h", sec / 86'400, (sec % 86'400) / 3600);
}

std::string format_age(std::int64_t ms) {
  const std::int64_t sec = std::max<std::int64_t>(ms, 0) / 1000;
  if (sec < 60) return fmt::format("{}s", sec);
  if (sec < 3600) return fmt::format("{}m", sec / 60);
  if (sec < 86'400) return fmt::format("{}h", sec / 3600);
  return fmt::format("{}d", sec / 86'400);
}

std::string format_cost(const json::value& usage) {
  const auto& cost = member(usage, "cost_usd");
  const std::string status = str_of(usage, "cost_status");
  if (cost.is_number()) return fmt::format("${:.4f}{}", cost.to_number<double>(), status == "partial" ? "+" : "");
  if (status.empty() || status == "not metered") return "-";
  return status == "unpriced" ? "unpriced" : "n/a";
}

std::string format_session_table(const json::value& sessions, std::int64_t now_ms) {
  const auto* list = array_of(sessions, "sessions");
  if (list == nullptr || list->empty()) return "no sessions\n";
  std::size_t id_w = 2;
  std::size_t profile_w = 7;
  for (const auto& s : *list) {
    id_w = std::max(id_w, str_of(s, "id").size());
    profile_w = std::max(profile_w, str_of(s, "profile").size() + 1 + str_of(s, "runtime").size());
  }
  profile_w = std::min<std::size_t>(profile_w, 28);
  constexpr std::string_view row = "{:<{}}  {:>4}  {:<8}  {:>7}  {:<{}}  {:>9}  {}\n";
  std::string out = fmt::format(fmt::runtime(row), "ID", id_w, "AGE", "STATUS", "PENDING", "PROFILE", profile_w,
                                "COST", "WORKSPACE / TITLE");
  for (const auto& s : *list) {
    const std::string runtime = str_of(s, "runtime");
    const std::string profile = str_of(s, "profile") + (runtime.empty() ? "" : "/" + runtime);
    std::int64_t at = int_of(s, "updated_at");
    if (at == 0) at = int_of(s, "created_at");
    std::string where = str_of(s, "workspace");
    if (const auto t = str_of(s, "title"); !t.empty()) where += (where.empty() ? "" : "  ") + one_line(t, 50);
    out += fmt::format(fmt::runtime(row), str_of(s, "id"), id_w, format_age(now_ms - at), str_of(s, "status"),
                       int_of(s, "pending_inputs"), one_line(profile, profile_w), profile_w,
                       format_cost(member(s, "usage")), where);
  }
  return out;
}

std::string format_runs_table(const json::value& executions) {
  const auto* list = array_of(executions, "executions");
  if (list == nullptr || list->empty()) return "no runs yet\n";
  constexpr std::string_view row = "{:<30}  {:<11}  {:>8}  {:>9}  {:>8}  {:>9}  {}\n";
  std::string out =
      fmt::format(fmt::runtime(row), "RUN", "OUTCOME", "DURATION", "IN TOKENS", "OUT", "COST", "RUNTIME / MODEL");
  for (const auto& x : *list) {
    const auto& usage = member(x, "usage");
    const std::string outcome = str_of(x, "status") == "running" ? "running" : str_of(x, "outcome");
    const auto& finished = member(x, "finished_at");
    const std::string duration =
        finished.is_int64() ? format_duration(finished.as_int64() - int_of(x, "started_at")) : std::string("-");
    std::string what = str_of(x, "runtime");
    if (const auto m = str_of(x, "model"); !m.empty()) what += " / " + m;
    out += fmt::format(fmt::runtime(row), str_of(x, "id"), outcome, duration, int_of(usage, "input_tokens"),
                       int_of(usage, "output_tokens"), format_cost(usage), what);
    if (const auto e = str_of(x, "error"); !e.empty()) out += "    " + one_line(e, 100) + "\n";
  }
  return out;
}

std::string format_session(const json::value& session) {
  const auto* s = session.is_object() ? session.as_object().if_contains("session") : nullptr;
  const json::value& v = s != nullptr ? *s : session;
  std::string out = fmt::format("session {}  ({}, generation {}, last seq {}, {} pending input{})\n", str_of(v, "id"),
                                str_of(v, "status"), int_of(v, "generation"), int_of(v, "last_seq"),
                                int_of(v, "pending_inputs"), int_of(v, "pending_inputs") == 1 ? "" : "s");
  if (const auto t = str_of(v, "title"); !t.empty()) out += fmt::format("title: {}\n", t);
  if (const auto p = str_of(v, "profile"); !p.empty()) out += fmt::format("profile: {}\n", p);
  if (const auto w = str_of(v, "workspace"); !w.empty()) out += fmt::format("workspace: {}\n", w);
  if (const auto& f = member(v, "forked_from"); f.is_object())
    out += fmt::format("forked from: {} at seq {}\n", str_of(f, "session"), int_of(f, "at"));
  return out;
}

std::string format_transcript(const json::value& messages) {
  const auto* list = array_of(messages, "messages");
  if (list == nullptr || list->empty()) return "(no messages yet)\n";
  std::string out;
  std::set<std::string, std::less<>> shown_calls;
  std::int64_t generation = -1;
  for (const auto& m : *list) {
    const auto g = int_of(m, "generation");
    if (generation >= 0 && g != generation) out += fmt::format("--- reset: generation {} ---\n", g);
    generation = g;
    const std::string role = str_of(m, "role");
    const std::string text = str_of(m, "text");
    if (role == "user") {
      out += fmt::format("user:\n{}\n", indent(text));
    } else if (role == "assistant") {
      if (!text.empty()) out += fmt::format("assistant:\n{}\n", indent(text));
      if (const auto* calls = array_of(m, "tool_calls")) {
        for (const auto& c : *calls) {
          shown_calls.insert(str_of(c, "id"));
          std::string input;
          if (c.is_object()) {
            if (const auto* in = c.as_object().if_contains("input")) input = json::serialize(*in);
          }
          out += fmt::format("tool call {} {} — {}\n", str_of(c, "name"), input, str_of(c, "status"));
          if (const auto r = str_of(c, "result"); !r.empty()) out += fmt::format("{}\n", indent(r));
        }
      }
    } else if (role == "tool") {
      const std::string call = str_of(m, "call_id").empty() ? str_of(m, "id") : str_of(m, "call_id");
      if (shown_calls.contains(call)) continue;  // already under its call
      const bool failed = m.is_object() && m.as_object().contains("is_error") &&
                          m.as_object().at("is_error").is_bool() && m.as_object().at("is_error").as_bool();
      out += fmt::format("tool {} {}:\n{}\n", str_of(m, "tool"), failed ? "failed" : "result", indent(text));
    } else if (role == "synthetic") {
      out += fmt::format("notice: {}\n", text);
    } else {
      out += fmt::format("{}:\n{}\n", role, indent(text));
    }
  }
  return out;
}

}  // namespace tether::cli
