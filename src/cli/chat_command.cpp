// `tether chat [SESSION]`: an interactive session on a running server.
//
// Each line typed is sent as a steer and the turn is printed as it runs;
// lines typed while a turn runs steer it. Several lines pasted at once are
// one message; a line of """ opens a message of several lines, the next
// """ line sends it. Commands: /new (a new session),
// /stop (interrupt the turn), /queue TEXT (deliver after the turn), /quit.
// While a question is open, a line of option numbers answers it. Ctrl-C
// interrupts a running turn; with nothing running (or pressed twice) it
// leaves with 130.
//
// When stdin is not a terminal the lines are read one turn at a time (the
// next line is sent once the previous turn is over), so a script gets one
// turn per line; at the end of input chat waits for the turn and exits with
// its outcome (0, 1, 3), like send.
#include <poll.h>

#include <chrono>
#include <deque>
#include <optional>
#include <set>
#include <string>

#include <fmt/format.h>
#include <boost/json.hpp>

#include "cli/client.h"
#include "cli/commands.h"
#include "cli/common.h"
#include "cli/follow.h"
#include "cli/json_fields.h"
#include "cli/line_editor.h"
#include "cli/printer.h"
#include "cli/question.h"
#include "cli/session_ref.h"

namespace tether::cli {

namespace {

namespace json = boost::json;
using namespace std::chrono_literals;

struct chat_args {
  common_args common;
  std::string session;
  std::string title;
};

class chat {
 public:
  explicit chat(const chat_args& args)
      : args_(args),
        client_(resolve_client_options(args.common)),
        editor_("you> "),
        printer_(std::make_unique<live_printer>(sink())) {}

  int run() {
    if (auto r = attach(args_.session); !r) return report(r.error());
    if (editor_.interactive())
      say("type a message (\"\"\" for several lines); /new, /stop, /queue TEXT, /quit; Ctrl-C interrupts the turn\n");
    int seen_sigints = sigint_count();
    bool stdin_open = true;
    for (;;) {
      // A script's next line waits for the turn; a person may steer it.
      while (!lines_.empty() && (editor_.interactive() || !turn_running())) {
        const std::string line = std::move(lines_.front());
        lines_.pop_front();
        if (auto r = on_line(line); !r) {
          if (r.error() == client_errc::unreachable) return report(r.error());
          say(fmt::format("tether: {}\n", r.error().message));
        }
        if (quit_) return exit_ok;
      }
      const bool busy = turn_running();
      editor_.set_prompt_visible(!busy);
      if (!stdin_open && lines_.empty() && !busy)
        return follower_->watching() ? exit_code_for(follower_->outcome()) : exit_ok;
      pollfd fds[2] = {{follower_->fd(), POLLIN, 0}, {stdin_open ? line_editor::fd() : -1, POLLIN, 0}};
      ::poll(fds, 2, 200);
      if (auto r = follower_->poll(0ms, [this](const json::value& v, const model::event* e) { on_event(v, e); }); !r)
        return report(r.error());
      if (sigint_count() != seen_sigints) {
        seen_sigints = sigint_count();
        if (!turn_running() || interrupting_) return exit_interrupted;
        interrupting_ = true;
        say("interrupting the turn (Ctrl-C again to leave)\n");
        if (auto r = client_.post(session_path() + "/interrupt", json::object{}); !r) return report(r.error());
      }
      if (stdin_open && (fds[1].revents & (POLLIN | POLLHUP | POLLERR)) != 0) {
        auto in = editor_.read_available();
        if (editor_.interactive() && in.lines.size() > 1 && !block_) {
          // Several lines at once on a terminal are a paste: one message.
          std::string pasted;
          for (auto& line : in.lines) pasted += (pasted.empty() ? "" : "\n") + line;
          lines_.push_back(std::move(pasted));
        } else {
          for (auto& line : in.lines) lines_.push_back(std::move(line));
        }
        if (in.eof) stdin_open = false;
      }
    }
  }

 private:
  output_sink sink() {
    return [this](std::string_view text) {
      if (!args_.common.json) editor_.print(text);
    };
  }
  void say(std::string_view text) {
    if (args_.common.json) return;
    editor_.print(text);
  }
  std::string session_path() const { return "/v1/sessions/" + path_segment(session_); }

  bool turn_running() const {
    return (follower_->watching() && !follower_->turn_over()) || !running_executions_.empty() ||
           std::chrono::steady_clock::now() < resuming_until_;
  }

  // The last messages of a session joined, so the conversation reads on.
  void show_recent(const std::string& id) {
    constexpr std::size_t shown = 10;
    auto got = client_.get("/v1/sessions/" + path_segment(id) + "/messages");
    if (!got) return;
    const auto* all = array_of(*got, "messages");
    if (all == nullptr || all->empty()) return;
    json::array recent;
    const std::size_t from = all->size() > shown ? all->size() - shown : 0;
    for (std::size_t i = from; i < all->size(); ++i) recent.push_back((*all)[i]);
    if (from > 0) say(fmt::format("({} earlier messages: tether show {})\n", from, id));
    say(format_transcript(json::object{{"messages", std::move(recent)}}));
    say("---\n");
  }

  // Joins `id` (session_ref.h), or creates a session when it is empty.
  result<void> attach(const std::string& id) {
    json::value session;
    if (id.empty()) {
      json::object body;
      if (!args_.title.empty()) body["title"] = args_.title;
      auto created = client_.post("/v1/sessions", body);
      if (!created) return created.error();
      session = member(*created, "session");
      say(fmt::format("session {} (new)\n", str_of(session, "id")));
    } else {
      auto resolved = resolve_session(client_, id);
      if (!resolved) return resolved.error();
      auto got = client_.get("/v1/sessions/" + path_segment(*resolved));
      if (!got) return got.error();
      session = member(*got, "session");
      say(fmt::format("session {} ({}, last seq {})\n", str_of(session, "id"), str_of(session, "status"),
                      int_of(session, "last_seq")));
      if (!args_.common.json) show_recent(*resolved);
    }
    if (args_.common.json) print_json_line(session);
    session_ = str_of(session, "id");
    follower_ = std::make_unique<session_follower>(client_, session_);
    printer_ = std::make_unique<live_printer>(sink());
    running_executions_.clear();
    interrupting_ = false;
    if (str_of(session, "status") == "running") {
      // Joined mid-turn: that execution's end is what the prompt waits for.
      if (auto exes = client_.get(session_path() + "/executions")) {
        const auto& list = member(*exes, "executions");
        if (list.is_array()) {
          for (const auto& x : list.as_array())
            if (str_of(x, "status") == "running") running_executions_.insert(str_of(x, "id"));
        }
      }
    }
    if (str_of(session, "status") == "waiting") {
      if (auto asked = client_.get(session_path() + "/interactions")) {
        const auto& list = member(*asked, "interactions");
        if (list.is_array()) {
          for (const auto& i : list.as_array())
            if (str_of(i, "status") == "pending") printer_->show_question({str_of(i, "id"), member(i, "payload")});
        }
        if (printer_->question()) say("type an option's number to answer\n");
      }
    }
    return follower_->open(int_of(session, "last_seq"));
  }

  void on_event(const json::value& v, const model::event* e) {
    if (args_.common.json) print_json_line(v);
    if (e == nullptr) return;
    printer_->on(*e);
    if (const auto* s = e->as<model::execution_started>()) {
      running_executions_.insert(s->execution.str());
      resuming_until_ = {};
    }
    if (const auto* s = e->as<model::execution_recovered>()) running_executions_.insert(s->execution.str());
    if (const auto* f = e->as<model::execution_finished>()) {
      running_executions_.erase(f->execution.str());
      interrupting_ = false;
      if (f->outcome == model::outcome::waiting && printer_->question()) say("type an option's number to answer\n");
    }
  }

  result<void> send_input(const std::string& text, std::string_view delivery) {
    json::object body{{"text", text}, {"delivery", delivery}};
    auto in = client_.post(session_path() + "/inputs", body);
    if (!in) return in.error();
    printer_->hide_input(str_of(member(*in, "input"), "id"));
    if (delivery == "steer" || !turn_running()) follower_->watch_input(*in);
    return ok();
  }

  result<void> on_line(const std::string& line) {
    // A """ line opens a multi-line message; the next one sends it.
    if (block_) {
      if (line != "\"\"\"") {
        *block_ += (block_->empty() ? "" : "\n") + line;
        return ok();
      }
      std::string text = std::move(*block_);
      block_.reset();
      if (text.empty()) return ok();
      return send_input(text, "steer");
    }
    if (line == "\"\"\"") {
      block_.emplace();
      say("(several lines: end them with \"\"\" on a line of its own)\n");
      return ok();
    }
    if (line.empty()) return ok();
    if (line == "/quit" || line == "/exit") {
      quit_ = true;
      return ok();
    }
    if (line == "/new") return attach("");
    if (line == "/stop") {
      auto r = client_.post(session_path() + "/interrupt", json::object{});
      if (!r) return r.error();
      const auto& i = member(*r, "interrupted");
      say(i.is_bool() && i.as_bool() ? "interrupting the turn\n" : "nothing is running\n");
      return ok();
    }
    if (line.starts_with("/queue")) {
      const auto text = line.size() > 7 ? line.substr(7) : std::string();
      if (text.empty()) return make_error(util_errc::invalid_argument, "/queue TEXT: give the text to queue");
      TETHER_TRY(send_input(text, "queue"));
      say("queued\n");
      return ok();
    }
    if (line.starts_with('/') && line.find(' ') == std::string::npos) {
      return make_error(util_errc::invalid_argument,
                        fmt::format("unknown command {} (/new, /stop, /queue TEXT, /quit)", line));
    }
    if (const auto& q = printer_->question()) {
      if (auto answer = answer_from_line(q->payload, line)) {
        auto r = client_.post("/v1/interactions/" + path_segment(q->interaction) + "/answer", *answer);
        if (!r) return r.error();
        // The answer wakes the session; its run counts as the turn once it starts.
        resuming_until_ = std::chrono::steady_clock::now() + 10s;
        return ok();
      }
    }
    return send_input(line, "steer");
  }

  const chat_args& args_;
  client client_;
  line_editor editor_;
  std::unique_ptr<live_printer> printer_;
  std::unique_ptr<session_follower> follower_;
  std::string session_;
  std::set<std::string, std::less<>> running_executions_;
  std::deque<std::string> lines_;                         // read, not yet handled
  std::chrono::steady_clock::time_point resuming_until_;  // an answer was sent; its run has not started yet
  std::optional<std::string> block_;                      // the lines of an open """ block
  bool interrupting_ = false;
  bool quit_ = false;
};

}  // namespace

void add_chat_command(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<chat_args>();
  auto* cmd = app.add_subcommand("chat", "Talk to a session interactively (a new one when none is given)");
  add_common_options(*cmd, args->common);
  cmd->add_option("session", args->session, "the session: its id, a unique prefix, or `last` (default: a new one)");
  cmd->add_option("--title", args->title, "the title of a session created here");
  cmd->callback([args, &exit_code] {
    install_sigint_handler();
    chat c(*args);
    exit_code = c.run();
  });
}

}  // namespace tether::cli
