// The API client verbs: new, sessions, show, runs, send, attach, stop, reset, fork, answer, events
// (commands.h lists them). Each builds a client from the common options,
// makes its requests, and prints text or, with --json, the server's JSON.
#include <unistd.h>

#include <charconv>
#include <filesystem>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <boost/json.hpp>

#include "cli/client.h"
#include "cli/commands.h"
#include "cli/common.h"
#include "cli/follow.h"
#include "cli/json_fields.h"
#include "cli/printer.h"
#include "cli/question.h"
#include "cli/session_ref.h"

namespace tether::cli {

namespace {

namespace json = boost::json;
using namespace std::chrono_literals;

std::string join(const std::vector<std::string>& words) {
  std::string out;
  for (const auto& w : words) out += (out.empty() ? "" : " ") + w;
  return out;
}

std::string session_path(std::string_view id) { return "/v1/sessions/" + path_segment(id); }

// ---- new, sessions, show ----

struct new_args {
  common_args common;
  std::string id;
  std::string title;
  std::string profile;
  std::string workspace;
};

int run_new(const new_args& args) {
  client c(resolve_client_options(args.common));
  json::object body;
  if (!args.id.empty()) body["id"] = args.id;
  if (!args.title.empty()) body["title"] = args.title;
  if (!args.profile.empty()) body["profile"] = args.profile;
  // Relative to here, not to wherever the server was started.
  if (!args.workspace.empty()) body["workspace"] = std::filesystem::absolute(args.workspace).string();
  auto r = c.post("/v1/sessions", body);
  if (!r) return report(r.error());
  if (args.common.json) {
    print_json_line(*r);
  } else {
    fmt::print("{}\n", str_of(member(*r, "session"), "id"));  // alone, for s=$(tether new)
  }
  return exit_ok;
}

int run_sessions(const common_args& args) {
  client c(resolve_client_options(args));
  auto r = c.get("/v1/sessions");
  if (!r) return report(r.error());
  if (args.json) {
    print_json_line(*r);
  } else {
    fmt::print("{}", format_session_table(*r, wall_clock_ms()));
  }
  return exit_ok;
}

std::string format_pending_questions(const json::value& interactions) {
  std::string out;
  const auto& list = member(interactions, "interactions");
  if (!list.is_array()) return out;
  for (const auto& i : list.as_array()) {
    if (str_of(i, "status") != "pending") continue;
    out += format_question(str_of(i, "id"), member(i, "payload"));
    out += fmt::format("    answer with: tether answer {} OPTION\n", str_of(i, "id"));
  }
  return out;
}

// A verb on one session, run once SESSION is resolved (session_ref.h).
using session_verb = int (*)(client& c, const common_args& args, const std::string& session);
int on_session(const common_args& args, const std::string& given, session_verb verb) {
  client c(resolve_client_options(args));
  auto resolved = resolve_session(c, given);
  if (!resolved) return report(resolved.error());
  return verb(c, args, *resolved);
}

int run_show(client& c, const common_args& args, const std::string& session) {
  auto s = c.get(session_path(session));
  if (!s) return report(s.error());
  auto m = c.get(session_path(session) + "/messages");
  if (!m) return report(m.error());
  auto i = c.get(session_path(session) + "/interactions");
  if (!i) return report(i.error());
  if (args.json) {
    json::object doc;
    doc["session"] = member(*s, "session");
    doc["messages"] = member(*m, "messages");
    doc["interactions"] = member(*i, "interactions");
    print_json_line(doc);
    return exit_ok;
  }
  fmt::print("{}\n{}", format_session(*s), format_transcript(*m));
  fmt::print("{}", format_pending_questions(*i));
  return exit_ok;
}

int run_runs(client& c, const common_args& args, const std::string& session) {
  auto r = c.get(session_path(session) + "/executions");
  if (!r) return report(r.error());
  if (args.json) {
    print_json_line(*r);
  } else {
    fmt::print("{}", format_runs_table(*r));
  }
  return exit_ok;
}

// ---- send ----

struct send_args {
  common_args common;
  std::string session;
  std::vector<std::string> text;
  bool queue = false;
  bool no_resume = false;
  bool detach = false;
};

}  // namespace

int follow_turn(client& c, session_follower& f, const std::string& session, output_format format,
                std::int64_t replayed_until) {
  live_printer printer(stdout_sink(), format != output_format::json && ::isatty(STDOUT_FILENO) == 1);
  int seen_sigints = sigint_count();
  bool interrupted = false;
  while (!f.turn_over()) {
    auto r = f.poll(200ms, [&](const json::value& v, const model::event* e) {
      if (format == output_format::json) {
        print_json_line(v);
      } else if (e != nullptr) {
        printer.on(*e, e->seq.value > replayed_until || e->seq.value == 0 ? std::optional(wall_clock_ms()) : std::nullopt);
      }
    });
    printer.tick(wall_clock_ms());
    if (!r && r.error() == client_errc::unreachable) {
      fmt::print(stderr,
                 "\ntether: lost the server mid-turn. What was admitted is durable: the turn resumes when the "
                 "server is back. Follow it again with: tether attach {}\n",
                 session);
      return report(r.error());
    }
    if (!r) return report(r.error());
    if (sigint_count() != seen_sigints) {
      if (interrupted) return exit_interrupted;
      interrupted = true;
      seen_sigints = sigint_count();
      fmt::print(stderr, "\ntether: interrupting the session (Ctrl-C again to leave now)\n");
      if (auto i = c.post(session_path(session) + "/interrupt", json::object{}); !i) return report(i.error());
    }
  }
  if (interrupted) return exit_interrupted;
  if (f.outcome() == turn_end::cancelled) {
    fmt::print(stderr, "tether: the input was cancelled before it ran\n");
    return exit_failed;
  }
  if (f.outcome() == turn_end::waiting && format == output_format::text && printer.question()) {
    fmt::print("waiting for an answer: tether answer {} OPTION…\n", printer.question()->interaction);
  }
  return exit_code_for(f.outcome());
}

namespace {

}  // namespace

int send_and_follow(client& c, const std::string& session_id, const std::string& target, const std::string& text,
                    const send_options& o) {
  auto s = c.get(session_path(session_id));
  if (!s) return report(s.error());
  const auto& session = member(*s, "session");
  // A --no-resume input to an idle session only waits in the queue: nothing to follow.
  const bool follow = !o.detach && !(o.no_resume && str_of(session, "status") == "idle");
  session_follower f(c, session_id);
  if (follow) {
    if (auto r = f.open(int_of(session, "last_seq")); !r) return report(r.error());
  }
  json::object body{{"text", text}, {"delivery", o.queue ? "queue" : "steer"}, {"resume", !o.no_resume}};
  auto in = c.post(target, body);
  if (!in) return report(in.error());
  if (o.format == output_format::json) print_json_line(*in);
  const auto& input = member(*in, "input");
  if (!follow) {
    if (o.format != output_format::json)
      fmt::print("admitted {} ({}, {})\n", str_of(input, "id"), str_of(input, "delivery"), str_of(input, "status"));
    return exit_ok;
  }
  f.watch_input(*in);
  return follow_turn(c, f, session_id, o.format);
}

namespace {

int run_send(const send_args& args) {
  const std::string text = join(args.text);
  if (text.empty()) return usage_error("send: give the text to send");
  install_sigint_handler();
  client c(resolve_client_options(args.common));
  auto resolved = resolve_session(c, args.session);
  if (!resolved) return report(resolved.error());
  return send_and_follow(c, *resolved, session_path(*resolved) + "/inputs", text,
                         {args.queue, args.no_resume, args.detach, args.common.format()});
}

// ---- attach ----

int run_attach(client& c, const common_args& args, const std::string& session) {
  install_sigint_handler();
  auto s = c.get(session_path(session));
  if (!s) return report(s.error());
  const std::string status = str_of(member(*s, "session"), "status");
  if (status != "running") {
    if (status == "waiting") {
      auto i = c.get(session_path(session) + "/interactions");
      if (i && !args.json) fmt::print("{}", format_pending_questions(*i));
      return exit_waiting;
    }
    if (!args.json) fmt::print("session {} is {}: no turn is running (tether show {})\n", session, status, session);
    return exit_ok;
  }
  auto exes = c.get(session_path(session) + "/executions");
  if (!exes) return report(exes.error());
  std::string running;
  std::int64_t from = int_of(member(*s, "session"), "last_seq");
  if (const auto* list = array_of(*exes, "executions")) {
    for (const auto& x : *list) {
      if (str_of(x, "status") != "running") continue;
      running = str_of(x, "id");
      from = std::max<std::int64_t>(0, int_of(x, "started_seq") - 1);  // the turn from its start
    }
  }
  session_follower f(c, session);
  if (auto r = f.open(from); !r) return report(r.error());
  if (running.empty()) return exit_ok;  // it finished meanwhile
  f.watch_execution(running);
  return follow_turn(c, f, session, args.format(), int_of(member(*s, "session"), "last_seq"));
}

// ---- stop, reset ----

int run_stop(client& c, const common_args& args, const std::string& session) {
  auto r = c.post(session_path(session) + "/interrupt", json::object{});
  if (!r) return report(r.error());
  if (args.json) {
    print_json_line(*r);
  } else {
    const auto& i = member(*r, "interrupted");
    fmt::print("{}\n", i.is_bool() && i.as_bool() ? "interrupted the running turn" : "nothing was running");
  }
  return exit_ok;
}

int run_reset(client& c, const common_args& args, const std::string& session) {
  auto r = c.post(session_path(session) + "/reset", json::object{});
  if (!r) return report(r.error());
  if (args.json) {
    print_json_line(*r);
  } else {
    fmt::print("session {} reset: generation {}\n", session, int_of(*r, "generation"));
  }
  return exit_ok;
}

// ---- fork ----

struct fork_args {
  common_args common;
  std::string session;
  std::string at;  // a seq, or "latest"
  std::string id;
  std::string title;
};

int run_fork(const fork_args& args) {
  client c(resolve_client_options(args.common));
  auto resolved = resolve_session(c, args.session);
  if (!resolved) return report(resolved.error());
  json::object body;
  if (!args.at.empty() && args.at != "latest") {
    std::int64_t seq = 0;
    const auto* end = args.at.data() + args.at.size();
    if (auto [p, ec] = std::from_chars(args.at.data(), end, seq); ec != std::errc{} || p != end || seq < 1) {
      fmt::print(stderr, "tether: --at must be a seq (1 or more) or `latest`, not \"{}\"\n", args.at);
      return exit_usage;
    }
    body["at"] = seq;
  }
  if (!args.id.empty()) body["id"] = args.id;
  if (!args.title.empty()) body["title"] = args.title;
  auto r = c.post(session_path(*resolved) + "/fork", body);
  if (!r) return report(r.error());
  if (args.common.json) {
    print_json_line(*r);
  } else {
    fmt::print("{}\n", str_of(member(*r, "session"), "id"));  // alone, for f=$(tether fork s)
  }
  return exit_ok;
}

// ---- answer ----

struct answer_args {
  common_args common;
  std::string interaction;
  std::vector<std::string> options;
  std::string question;
  std::string other;
  bool detach = false;
};

// The API has no GET /v1/interactions/{id}: the interaction is looked up in
// the sessions' lists, waiting sessions first.
std::optional<json::value> find_interaction(client& c, const std::string& id) {
  auto sessions = c.get("/v1/sessions");
  if (!sessions) return std::nullopt;
  const auto& list = member(*sessions, "sessions");
  if (!list.is_array()) return std::nullopt;
  for (const bool waiting : {true, false}) {
    for (const auto& s : list.as_array()) {
      if ((str_of(s, "status") == "waiting") != waiting) continue;
      auto is = c.get(session_path(str_of(s, "id")) + "/interactions");
      if (!is) continue;
      const auto& items = member(*is, "interactions");
      if (!items.is_array()) continue;
      for (const auto& i : items.as_array())
        if (str_of(i, "id") == id) return i;
    }
  }
  return std::nullopt;
}

int run_answer(const answer_args& args) {
  if (args.options.empty() && args.other.empty()) return usage_error("answer: give an option id (or --other TEXT)");
  client c(resolve_client_options(args.common));
  answer_choice choice;
  if (!args.question.empty()) choice.question_id = args.question;
  choice.options = args.options;
  if (!args.other.empty()) choice.other_text = args.other;
  json::value body;
  const auto found = find_interaction(c, args.interaction);
  if (found) {
    auto built = build_answer(member(*found, "payload"), choice);
    if (!built) return report(built.error());
    body = std::move(*built);
  } else {
    // Not found in the listed sessions: send it as given and let the server judge.
    json::array ids;
    for (const auto& o : args.options) ids.emplace_back(o);
    json::object a{{"question_id", args.question.empty() ? "q1" : args.question}, {"option_ids", std::move(ids)}};
    if (!args.other.empty()) a["other_text"] = args.other;
    body = json::object{{"answers", json::array{std::move(a)}}};
  }
  // The rest of the turn is followed from before the answer, so nothing it
  // starts is missed (unless --detach).
  std::optional<session_follower> f;
  if (found && !args.detach) {
    const std::string session = str_of(*found, "session");
    if (auto s = c.get(session_path(session)); s) {
      f.emplace(c, session);
      if (auto opened = f->open(int_of(member(*s, "session"), "last_seq")); !opened) f.reset();
    }
  }
  auto r = c.post("/v1/interactions/" + path_segment(args.interaction) + "/answer", body);
  if (!r) return report(r.error());
  if (args.common.json) {
    print_json_line(*r);
  } else {
    const auto& i = member(*r, "interaction");
    fmt::print("{} {} ({})\n", str_of(i, "status").empty() ? "answered" : str_of(i, "status"), args.interaction,
               json::serialize(member(body, "answers")));
  }
  if (!f) return exit_ok;
  install_sigint_handler();
  f->watch_next_execution();
  return follow_turn(c, *f, f->session(), args.common.format());
}

// ---- events ----

struct events_args {
  common_args common;
  std::string session;
  std::int64_t after = 0;
  std::int64_t limit = 0;
  bool follow = false;
};

int run_events(const events_args& args) {
  client c(resolve_client_options(args.common));
  auto resolved = resolve_session(c, args.session);
  if (!resolved) return report(resolved.error());
  const std::string& session = *resolved;
  if (!args.follow) {
    std::string target = fmt::format("{}/events?after={}", session_path(session), args.after);
    if (args.limit > 0) target += fmt::format("&limit={}", args.limit);
    auto r = c.get(target);
    if (!r) return report(r.error());
    if (args.common.json) {
      print_json_line(*r);
      return exit_ok;
    }
    std::int64_t last = args.after;
    const auto& events = member(*r, "events");
    if (events.is_array()) {
      for (const auto& e : events.as_array()) {
        fmt::print("{}", format_event_line(e));
        last = std::max(last, int_of(e, "seq"));
      }
    }
    const auto& more = member(*r, "more");
    if (more.is_bool() && more.as_bool()) fmt::print("(more: tether events {} --after {})\n", session, last);
    return exit_ok;
  }
  install_sigint_handler();
  session_follower f(c, session);
  if (auto r = f.open(args.after); !r) return report(r.error());
  const int baseline = sigint_count();
  while (sigint_count() == baseline) {
    auto r = f.poll(500ms, [&](const json::value& v, const model::event*) {
      if (args.common.json) {
        print_json_line(v);
      } else {
        fmt::print("{}", format_event_line(v));
        std::fflush(stdout);
      }
    });
    if (!r) return report(r.error());
  }
  return exit_interrupted;
}

}  // namespace

void add_client_commands(CLI::App& app, int& exit_code) {
  {
    auto args = std::make_shared<new_args>();
    auto* cmd = app.add_subcommand("new", "Create a session and print its id");
    add_common_options(*cmd, args->common);
    cmd->add_option("--id", args->id, "the session id (default: the server picks one)");
    cmd->add_option("--title", args->title, "a title");
    cmd->add_option("--profile", args->profile, "the profile to run (default: the server's default)");
    cmd->add_option("--workspace", args->workspace, "the agent's working directory on the server");
    cmd->callback([args, &exit_code] { exit_code = run_new(*args); });
  }
  {
    auto args = std::make_shared<common_args>();
    auto* cmd = app.add_subcommand("sessions", "List the server's sessions (most recent first)");
    add_common_options(*cmd, *args);
    cmd->callback([args, &exit_code] { exit_code = run_sessions(*args); });
  }
  {
    auto args = std::make_shared<common_args>();
    auto session = std::make_shared<std::string>();
    auto* cmd = app.add_subcommand("show", "Show a session and its transcript");
    add_common_options(*cmd, *args);
    cmd->add_option("session", *session, "the session: its id, a unique prefix of it, or `last`")->required();
    cmd->callback([args, session, &exit_code] { exit_code = on_session(*args, *session, run_show); });
  }
  {
    auto args = std::make_shared<common_args>();
    auto session = std::make_shared<std::string>();
    auto* cmd = app.add_subcommand("runs", "List a session's runs: outcome, duration, tokens, cost and model");
    add_common_options(*cmd, *args);
    cmd->add_option("session", *session, "the session: its id, a unique prefix of it, or `last`")->required();
    cmd->callback([args, session, &exit_code] { exit_code = on_session(*args, *session, run_runs); });
  }
  {
    auto args = std::make_shared<send_args>();
    auto* cmd = app.add_subcommand("send", "Send input to a session and print the turn as it runs");
    add_common_options(*cmd, args->common);
    cmd->add_option("session", args->session, "the session: its id, a unique prefix of it, or `last`")->required();
    cmd->add_option("text", args->text, "the input (the words are joined with spaces)")->required();
    cmd->add_flag("--queue", args->queue, "deliver after the running turn instead of steering it");
    cmd->add_flag("--no-resume", args->no_resume, "only admit the input; do not start a turn");
    cmd->add_flag("--detach", args->detach, "return once admitted; do not print the turn");
    cmd->callback([args, &exit_code] { exit_code = run_send(*args); });
  }
  {
    auto args = std::make_shared<common_args>();
    auto session = std::make_shared<std::string>();
    auto* cmd = app.add_subcommand("attach", "Follow a session's running turn from its start until it ends");
    add_common_options(*cmd, *args);
    cmd->add_option("session", *session, "the session: its id, a unique prefix of it, or `last`")->required();
    cmd->callback([args, session, &exit_code] { exit_code = on_session(*args, *session, run_attach); });
  }
  {
    auto args = std::make_shared<common_args>();
    auto session = std::make_shared<std::string>();
    auto* cmd = app.add_subcommand("stop", "Interrupt a session's running turn");
    add_common_options(*cmd, *args);
    cmd->add_option("session", *session, "the session: its id, a unique prefix of it, or `last`")->required();
    cmd->callback([args, session, &exit_code] { exit_code = on_session(*args, *session, run_stop); });
  }
  {
    auto args = std::make_shared<common_args>();
    auto session = std::make_shared<std::string>();
    auto* cmd = app.add_subcommand("reset", "Start a new context generation in a session");
    add_common_options(*cmd, *args);
    cmd->add_option("session", *session, "the session: its id, a unique prefix of it, or `last`")->required();
    cmd->callback([args, session, &exit_code] { exit_code = on_session(*args, *session, run_reset); });
  }
  {
    auto args = std::make_shared<fork_args>();
    auto* cmd = app.add_subcommand(
        "fork", "Fork a session whole at the end of a turn: transcript, workspace and agent session; print its id");
    add_common_options(*cmd, args->common);
    cmd->add_option("session", args->session, "the session: its id, a unique prefix of it, or `last`")->required();
    cmd->add_option("--at", args->at, "the seq of the turn's end (execution.finished); default: the last turn");
    cmd->add_option("--id", args->id, "the fork's id (ses_…); generated when absent");
    cmd->add_option("--title", args->title, "the fork's title; default: the source's with \" (fork)\"");
    cmd->callback([args, &exit_code] { exit_code = run_fork(*args); });
  }
  {
    auto args = std::make_shared<answer_args>();
    auto* cmd = app.add_subcommand("answer", "Answer an agent's question");
    add_common_options(*cmd, args->common);
    cmd->add_option("interaction", args->interaction, "the interaction id (int_…)")->required();
    cmd->add_option("options", args->options, "the chosen option ids, or their numbers as printed");
    cmd->add_option("--question", args->question, "the question id (default: the only question)");
    cmd->add_option("--other", args->other, "an answer in your own words");
    cmd->add_flag("--detach", args->detach, "return once answered; do not print the rest of the turn");
    cmd->callback([args, &exit_code] { exit_code = run_answer(*args); });
  }
  {
    auto args = std::make_shared<events_args>();
    auto* cmd = app.add_subcommand("events", "Print a session's events (a page, or live with --follow)");
    add_common_options(*cmd, args->common);
    cmd->add_option("session", args->session, "the session: its id, a unique prefix of it, or `last`")->required();
    cmd->add_option("--after", args->after, "only events with a greater seq")->capture_default_str();
    cmd->add_option("--limit", args->limit, "at most this many events (default: the server's page size)");
    cmd->add_flag("--follow", args->follow, "keep printing new events until Ctrl-C");
    cmd->callback([args, &exit_code] { exit_code = run_events(*args); });
  }
}

}  // namespace tether::cli
