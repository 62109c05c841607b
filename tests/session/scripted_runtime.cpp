#include "session/scripted_runtime.h"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/json/parse.hpp>

#include "util/errors.h"

namespace tether::testing {

namespace asio = boost::asio;

namespace {

// Polls until `done()` or the turn is stopped; true when done.
template <class F>
asio::awaitable<bool> poll_until(F done, std::stop_token stop) {
  asio::steady_timer timer(co_await asio::this_coro::executor);
  while (!done()) {
    if (stop.stop_requested()) co_return false;
    timer.expires_after(std::chrono::milliseconds(1));
    co_await timer.async_wait(asio::as_tuple(asio::use_awaitable));
  }
  co_return true;
}

std::vector<model::payload> step(std::int64_t n, const execution_id& e, model::payload body, bool close) {
  std::vector<model::payload> v;
  v.emplace_back(model::step_started{e, n});
  v.push_back(std::move(body));
  if (close) v.emplace_back(model::step_ended{std::string("stop"), model::usage{10, 5, 0}});
  return v;
}

}  // namespace

void scripted_runtime::script(std::vector<action> turn) {
  std::lock_guard lock(mu_);
  scripts_.push_back(std::move(turn));
}

std::string scripted_runtime::name(std::string_view) const { return "scripted"; }

session::task<result<void>> scripted_runtime::start() {
  starts_.fetch_add(1);
  std::lock_guard lock(mu_);
  if (start_failure_) co_return make_error(util_errc::invalid_argument, *start_failure_);
  co_return ok();
}

session::task<void> scripted_runtime::stop() {
  running_at_stop_.store(running_.load());
  stops_.fetch_add(1);
  std::lock_guard lock(mu_);
  kept_.reset();
  co_return;
}

session::task<void> scripted_runtime::forget(session_id s) {
  std::lock_guard lock(mu_);
  forgotten_.push_back(std::move(s));
  co_return;
}

void scripted_runtime::fail_start(std::string why) {
  std::lock_guard lock(mu_);
  start_failure_ = std::move(why);
}

std::vector<session_id> scripted_runtime::forgotten() const {
  std::lock_guard lock(mu_);
  return forgotten_;
}

std::vector<error> scripted_runtime::host_errors() const {
  std::lock_guard lock(mu_);
  return host_errors_;
}

std::shared_ptr<session::turn_host> scripted_runtime::kept_host() const {
  std::lock_guard lock(mu_);
  return kept_;
}

void scripted_runtime::note(const error& e) {
  std::lock_guard lock(mu_);
  host_errors_.push_back(e);
}

std::vector<session::turn_context> scripted_runtime::contexts() const {
  std::lock_guard lock(mu_);
  return contexts_;
}

std::vector<std::vector<store::message_row>> scripted_runtime::boundaries() const {
  std::lock_guard lock(mu_);
  return boundaries_;
}

session::task<session::turn_result> scripted_runtime::run_turn(session::turn_context ctx,
                                                               std::shared_ptr<session::turn_host> host) {
  std::vector<action> script;
  {
    std::lock_guard lock(mu_);
    contexts_.push_back(ctx);
    if (!scripts_.empty()) {
      script = std::move(scripts_.front());
      scripts_.pop_front();
    } else {
      script.push_back(text("done"));
    }
  }
  turns_.fetch_add(1);
  running_.fetch_add(1);
  struct leaving {
    std::atomic<int>& running;
    ~leaving() { running.fetch_sub(1); }
  } left{running_};
  const auto stop = host->stop_token();
  std::int64_t steps = 0;
  session::turn_result out;
  for (const auto& a : script) {
    if (stop.stop_requested()) co_return session::turn_result{session::turn_status::interrupted, {}, out.usage};
    switch (a.what) {
      case action::kind::text: {
        model::text_ended said{message_id::generate(), a.arg};
        auto events = step(++steps, ctx.execution, std::move(said), true);
        auto r = co_await host->record(std::move(events));
        if (!r) {
          note(r.error());
          co_return session::turn_result{session::turn_status::failed, r.error().describe(), out.usage};
        }
        out.usage += model::usage{10, 5, 0};
        break;
      }
      case action::kind::tool:
      case action::kind::inflight: {
        const auto id = call_id::generate();
        model::tool_called called{id, a.arg, boost::json::object{{"arg", a.arg}}, model::tool_kind::local};
        auto events = step(++steps, ctx.execution, std::move(called), false);
        auto r = co_await host->record(std::move(events));
        if (!r) {
          note(r.error());
          co_return session::turn_result{session::turn_status::failed, r.error().describe(), out.usage};
        }
        if (a.what == action::kind::inflight) {
          auto forever = poll_until([] { return false; }, stop);
          co_await std::move(forever);
          co_return session::turn_result{session::turn_status::interrupted, {}, out.usage};
        }
        std::vector<model::payload> done;
        done.emplace_back(model::tool_succeeded{id, std::string("ok"), {}});
        done.emplace_back(model::step_ended{std::string("tool_calls"), model::usage{}});
        if (auto d = co_await host->record(std::move(done)); !d) {
          note(d.error());
          co_return session::turn_result{session::turn_status::failed, d.error().describe(), out.usage};
        }
        break;
      }
      case action::kind::ask: {
        const auto call = call_id::generate();
        std::vector<model::payload> events;
        events.emplace_back(model::tool_called{call, std::string("ask_user"), boost::json::object{{"question", a.arg}},
                                               model::tool_kind::local});
        // The payload shape of the native ask_user tool.
        auto question = boost::json::parse(R"({"questions":[{"id":"q1","question":"","options":[)"
                                           R"({"id":"red","label":"Red"},{"id":"blue","label":"Blue"}],)"
                                           R"("multi_select":false,"allow_other":true}]})");
        question.at("questions").at(0).at("question") = a.arg;
        events.emplace_back(
            model::interaction_requested{interaction_id::generate(), call, std::string("question"), question});
        if (auto r = co_await host->record(std::move(events)); !r) {
          note(r.error());
          co_return session::turn_result{session::turn_status::failed, r.error().describe(), out.usage};
        }
        co_return session::turn_result{session::turn_status::waiting, {}, out.usage};
      }
      case action::kind::boundary: {
        auto r = co_await host->boundary();
        if (!r) {
          note(r.error());
          co_return session::turn_result{session::turn_status::failed, r.error().describe(), out.usage};
        }
        std::lock_guard lock(mu_);
        boundaries_.push_back(std::move(r.value()));
        break;
      }
      case action::kind::answer: {
        std::vector<model::payload> started;
        started.emplace_back(model::step_started{ctx.execution, ++steps});
        if (auto r = co_await host->record(std::move(started)); !r) {
          note(r.error());
          co_return session::turn_result{session::turn_status::failed, r.error().describe(), out.usage};
        }
        std::vector<model::payload> said;
        said.emplace_back(model::text_ended{message_id::generate(), a.arg});
        said.emplace_back(model::step_ended{std::string("stop"), model::usage{10, 5, 0}});
        auto r = co_await host->boundary_after(std::move(said));
        if (!r) {
          note(r.error());
          co_return session::turn_result{session::turn_status::failed, r.error().describe(), out.usage};
        }
        out.usage += model::usage{10, 5, 0};
        std::lock_guard lock(mu_);
        boundaries_.push_back(std::move(r->promoted));
        break;
      }
      case action::kind::gate: {
        const int mine = gates_passed_.fetch_add(1) + 1;
        arrivals_.fetch_add(1);
        auto opened = poll_until([this, mine] { return gate_open_.load() >= mine; }, stop);
        if (!co_await std::move(opened))
          co_return session::turn_result{session::turn_status::interrupted, {}, out.usage};
        break;
      }
      case action::kind::fail:
        co_return session::turn_result{session::turn_status::failed, a.arg, out.usage};
      case action::kind::hang: {
        auto forever = poll_until([] { return false; }, stop);
        co_await std::move(forever);
        co_return session::turn_result{session::turn_status::interrupted, {}, out.usage};
      }
      case action::kind::wake:
        host->wake();
        break;
      case action::kind::woken: {
        auto heard = wakes_heard_;
        const int before = heard->load();
        host->on_wake([heard] { heard->fetch_add(1); });
        arrivals_.fetch_add(1);
        auto rang = poll_until([heard, before] { return heard->load() > before; }, stop);
        if (!co_await std::move(rang))
          co_return session::turn_result{session::turn_status::interrupted, {}, out.usage};
        break;
      }
      case action::kind::agent: {
        model::tool_called called{call_id::generate(), a.arg, boost::json::object{{"arg", a.arg}},
                                  model::tool_kind::agent};
        auto events = step(++steps, ctx.execution, std::move(called), false);
        auto r = co_await host->record(std::move(events));
        if (!r) {
          note(r.error());
          co_return session::turn_result{session::turn_status::failed, r.error().describe(), out.usage};
        }
        auto forever = poll_until([] { return false; }, stop);
        co_await std::move(forever);
        co_return session::turn_result{session::turn_status::interrupted, {}, out.usage};
      }
      case action::kind::bind:
      case action::kind::bind_big: {
        model::runtime_bound bound;
        bound.runtime = "scripted";
        bound.external_session_id = a.arg;
        bound.last_seen_seq = ctx.transcript.empty() ? 0 : ctx.transcript.back().seq.value;
        bound.state = a.what == action::kind::bind_big ? std::string(model::runtime_bound::max_state_bytes + 1, 'x')
                                                       : R"({"turn":)" + std::to_string(turns_.load()) + "}";
        std::vector<model::payload> events;
        events.emplace_back(std::move(bound));
        auto r = co_await host->record(std::move(events));
        if (!r) {
          note(r.error());
          co_return session::turn_result{session::turn_status::failed, r.error().describe(), out.usage};
        }
        break;
      }
      case action::kind::keep: {
        std::lock_guard lock(mu_);
        kept_ = host;
        break;
      }
      case action::kind::soon: {
        std::vector<model::payload> events;
        events.emplace_back(model::synthetic{a.arg, std::string("soon")});
        host->record_soon(std::move(events));
        break;
      }
    }
  }
  co_return out;
}

}  // namespace tether::testing
