#include "cli/follow.h"

#include <thread>

#include <fmt/format.h>
#include <boost/json.hpp>

#include "cli/common.h"
#include "cli/json_fields.h"
#include "cli/printer.h"

namespace tether::cli {

namespace {

namespace json = boost::json;
using namespace std::chrono_literals;

turn_end from_outcome(model::outcome o) {
  switch (o) {
    case model::outcome::succeeded:
      return turn_end::succeeded;
    case model::outcome::failed:
      return turn_end::failed;
    case model::outcome::interrupted:
      return turn_end::interrupted;
    case model::outcome::waiting:
      return turn_end::waiting;
  }
  return turn_end::failed;
}

}  // namespace

int exit_code_for(turn_end end) {
  switch (end) {
    case turn_end::succeeded:
      return 0;
    case turn_end::waiting:
      return 3;
    default:
      return 1;
  }
}

session_follower::session_follower(client& c, std::string session) : client_(c), session_(std::move(session)) {}

result<void> session_follower::open(std::int64_t after) {
  last_seq_ = std::max(last_seq_, after);
  auto s = client_.open_events(fmt::format("/v1/sessions/{}/events?after={}", path_segment(session_), last_seq_));
  if (!s) return s.error();
  stream_ = std::move(*s);
  return ok();
}

int session_follower::fd() const { return stream_ ? stream_->fd() : -1; }

void session_follower::watch_execution(std::string execution) {
  input_ = execution;  // no input has this id: only the execution's end is watched
  execution_ = std::move(execution);
  next_execution_ = false;
  end_ = turn_end::running;
}

void session_follower::watch_next_execution() {
  input_ = "(the next execution)";  // no input has this id
  execution_.clear();
  next_execution_ = true;
  end_ = turn_end::running;
}

void session_follower::watch_input(const json::value& input) {
  const json::value* in = &input;
  if (input.is_object()) {
    if (const auto* inner = input.as_object().if_contains("input")) in = inner;
  }
  input_ = str_of(*in, "id");
  execution_ = str_of(*in, "execution");
  end_ = turn_end::running;
  if (str_of(*in, "status") == "cancelled") end_ = turn_end::cancelled;
}

void session_follower::track(const model::event& e) {
  if (input_.empty() || end_ != turn_end::running) return;
  if (const auto* st = e.as<model::execution_started>()) {
    if (next_execution_ && execution_.empty()) execution_ = st->execution.str();
  } else if (const auto* p = e.as<model::input_promoted>()) {
    if (p->input.str() == input_) execution_ = p->execution.str();
  } else if (const auto* c = e.as<model::input_cancelled>()) {
    if (c->input.str() == input_) end_ = turn_end::cancelled;
  } else if (const auto* r = e.as<model::input_returned>()) {
    // Given back to pending: the failed execution's end is not the input's;
    // the execution it is promoted into next answers it.
    if (r->input.str() == input_ && r->execution.str() == execution_) execution_.clear();
  } else if (const auto* f = e.as<model::execution_finished>()) {
    if (execution_.empty() && !next_execution_) {
      // Promotion not seen: ask where the input went.
      auto inputs = client_.get(fmt::format("/v1/sessions/{}/inputs", path_segment(session_)));
      if (inputs && inputs->is_object()) {
        if (const auto* list = inputs->as_object().if_contains("inputs"); list != nullptr && list->is_array()) {
          for (const auto& i : list->as_array()) {
            if (str_of(i, "id") != input_) continue;
            execution_ = str_of(i, "execution");
            if (str_of(i, "status") == "cancelled") end_ = turn_end::cancelled;
          }
        }
      }
    }
    if (!execution_.empty() && f->execution.str() == execution_) end_ = from_outcome(f->outcome);
  }
}

result<void> session_follower::poll(std::chrono::milliseconds wait, const event_handler& handler) {
  if (!stream_) return make_error(client_errc::bad_response, "the event stream is not open");
  auto got = stream_->next(wait);
  for (int attempt = 1; !got && got.error() != client_errc::interrupted; ++attempt) {
    if (attempt > 3) return got.error();
    std::this_thread::sleep_for(std::chrono::milliseconds(300 * attempt));
    if (auto r = open(last_seq_); !r) {
      if (attempt == 3) return r.error();
      continue;
    }
    got = stream_->next(wait);
  }
  if (!got) return got.error();
  for (const auto& sse : *got) {
    boost::system::error_code ec;
    const auto v = json::parse(sse.data, ec);
    if (ec) continue;  // not an event object; nothing to show
    if (!sse.id.empty()) {
      try {
        last_seq_ = std::max<std::int64_t>(last_seq_, std::stoll(sse.id));
      } catch (const std::exception&) {
      }
    }
    auto e = event_from_json(v);
    if (e) track(*e);
    handler(v, e ? &*e : nullptr);
  }
  return ok();
}

}  // namespace tether::cli
