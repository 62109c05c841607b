#include "session/service.h"

#include <chrono>

#include <spdlog/spdlog.h>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/experimental/concurrent_channel.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/json/serialize.hpp>

#include "model/questions.h"
#include "session/coordinator.h"
#include "session/errors.h"
#include "session/fork.h"
#include "session/snapshots.h"
#include "session/recovery.h"
#include "session/runner.h"
#include "util/errors.h"
#include "util/metrics.h"
#include "util/text.h"

namespace tether::session {

namespace asio = boost::asio;

struct session_service::impl {
  asio::any_io_executor executor;
  store::event_store& store;
  runtime& rt;
  const tether::clock& clock;
  session_options options;
  runner run;
  coordinator coord;
  asio::steady_timer scan_timer;
  std::atomic<bool> stopping{false};
  bool scanning = false;
  std::shared_ptr<asio::experimental::concurrent_channel<void(boost::system::error_code)>> scan_done;

  impl(asio::any_io_executor ex, store::event_store& st, runtime& rt, const tether::clock& clk, node_identity node,
       session_options opts)
      : executor(ex),
        store(st),
        rt(rt),
        clock(clk),
        options(opts),
        run(st, rt, clk, std::move(node), opts),
        coord(ex,
              [this](session_id s, std::shared_ptr<drain_control> c) { return run.drain(std::move(s), std::move(c)); }),
        scan_timer(ex) {}

  // Maps store errors that mean "the caller asked for something wrong".
  static error to_session_error(const error& e) {
    if (e == store::store_errc::unknown_session) return {session_errc::unknown_session, e.message};
    if (e == store::store_errc::input_conflict) return {session_errc::input_conflict, e.message};
    if (e == store::store_errc::interaction_not_pending) return {session_errc::interaction_closed, e.message};
    if (e == store::store_errc::quarantined) return {session_errc::quarantined, e.message};
    return e;
  }

  // A pending interaction, or why not (unknown_interaction, interaction_closed).
  task<result<store::interaction_row>> pending_interaction(interaction_id id);
  task<result<void>> resolve(store::interaction_row row, boost::json::value answer);
  task<result<void>> write_resolution(store::interaction_row row, resolution r);

  asio::awaitable<result<store::session_row>> live_session(session_id s) {
    auto row = co_await store.get_session(s);
    if (!row) co_return to_session_error(row.error());
    if (row->quarantined)
      co_return make_error(session_errc::quarantined,
                           "session " + s.str() + " is quarantined: " + row->quarantine_reason);
    co_return row;
  }

  std::function<void(session_id)> waker() {
    return [this](session_id s) { coord.wake(std::move(s)); };
  }
  // A session this node is draining already needs no doorbell.
  std::function<void(session_id)> stranded_waker() {
    return [this](session_id s) {
      if (!coord.active(s)) coord.wake(std::move(s));
    };
  }

  // On a shared store, the stranded sessions a scan leaves to the node that
  // wrote them last: those written within a lease (recovery.h).
  std::optional<time_ms> written_before() const {
    if (!store.shared()) return std::nullopt;
    return clock.now() - options.lease_ttl_ms;
  }

  asio::awaitable<void> periodic_scans() {
    for (;;) {
      scan_timer.expires_after(std::chrono::milliseconds(options.recovery_interval_ms));
      auto [ec] = co_await scan_timer.async_wait(asio::as_tuple(asio::use_awaitable));
      if (ec || stopping) co_return;
      auto r = co_await recovery_scan(&store, run.node(), options, waker(), stranded_waker(), written_before());
      if (!r) spdlog::warn("periodic recovery scan failed: {}", r.error().describe());
    }
  }
};

session_service::session_service(asio::any_io_executor executor, store::event_store& store, runtime& rt,
                                 const tether::clock& clk, node_identity node, session_options options)
    : impl_(std::make_unique<impl>(std::move(executor), store, rt, clk, std::move(node), options)) {}

session_service::~session_service() = default;

bool session_service::active(const session_id& s) const { return impl_->coord.active(s); }

const node_identity& session_service::node() const { return impl_->run.node(); }
std::uint64_t session_service::drains_started() const { return impl_->coord.drains_started(); }
std::size_t session_service::resume_waiters(const session_id& s) const { return impl_->coord.waiters(s); }

task<result<recovery_report>> session_service::start() {
  // Recovery may run turns at once: the runtime starts first.
  if (auto started = co_await impl_->rt.start(); !started) co_return started.error();
  // Other nodes' inputs, answers and interrupts for the sessions this node
  // runs or may run (a shared store only). Set before the recovery scan, so
  // nothing committed after it is missed.
  if (impl_->store.shared())
    impl_->store.watch_foreign([this](const store::cluster_signals::foreign_change& c) {
      asio::post(impl_->executor, [this, c] { on_foreign(c); });
    });
  auto report = co_await recover();
  if (report && impl_->options.recovery_interval_ms > 0) {
    impl_->scanning = true;
    impl_->scan_done =
        std::make_shared<asio::experimental::concurrent_channel<void(boost::system::error_code)>>(impl_->executor, 1);
    asio::co_spawn(impl_->executor, impl_->periodic_scans(), [done = impl_->scan_done](const std::exception_ptr&) {
      done->try_send(boost::system::error_code{});
    });
  }
  co_return report;
}

task<void> session_service::stop() {
  if (impl_->stopping.exchange(true)) co_return;
  if (impl_->store.shared()) impl_->store.watch_foreign(nullptr);
  if (impl_->scanning) {
    asio::post(impl_->scan_timer.get_executor(), [this] { impl_->scan_timer.cancel(); });
    co_await impl_->scan_done->async_receive(asio::as_tuple(asio::use_awaitable));
  }
  co_await impl_->coord.stop();
  // Every turn has ended: the runtime ends its agents and frees its state.
  co_await impl_->rt.stop();
  // Executions stopped by shutdown stay open; expiring our leases lets the
  // next start (ours or another node's) recover them at once.
  auto r = co_await impl_->store.expire_owned_leases(impl_->run.node().owner());
  if (!r) spdlog::warn("could not expire leases on stop: {}", r.error().describe());
}

task<result<recovery_report>> session_service::recover() {
  co_return co_await recovery_scan(&impl_->store, impl_->run.node(), impl_->options, impl_->waker(),
                                   impl_->stranded_waker(), impl_->written_before());
}

namespace {

bool same_attributes(const store::session_row& row, const create_request& req) {
  return row.title == req.title && row.workspace == req.workspace && row.profile == req.profile &&
         row.metadata == req.metadata;
}

}  // namespace

task<result<session_service::creation>> session_service::create(create_request req) {
  session_id id = session_id::generate();
  if (req.id) {
    auto parsed = session_id::parse(*req.id);
    if (!parsed) co_return parsed.error();
    id = *parsed;
  }
  for (const auto* field : {&req.title, &req.workspace, &req.profile})
    TETHER_CO_TRY(check_text("session field", *field, 64 * 1024));
  auto append = store::single_event(id, model::session_created{req.title, req.workspace, req.profile, req.metadata});
  if (auto r = co_await impl_->store.append(std::move(append)); !r) {
    if (r.error() != store::store_errc::session_exists) co_return impl::to_session_error(r.error());
    // A retry of a create (or a concurrent one that committed first).
    auto existing = co_await describe(id);
    if (!existing) co_return existing.error();
    if (!same_attributes(existing->session, req))
      co_return make_error(session_errc::session_conflict, "session " + id.str() + " exists with other attributes");
    co_return creation{std::move(*existing), create_status::existing};
  }
  auto row = co_await impl_->store.get_session(id);
  if (!row) co_return row.error();
  const auto activity = active(id) ? drain_activity::draining : drain_activity::not_draining;
  co_return creation{summarize(store::session_overview{std::move(*row), 0, 0}, activity), create_status::created};
}

task<result<store::session_row>> session_service::create_session(create_request req) {
  const std::string id = req.id.value_or("");
  auto created = co_await create(std::move(req));
  if (!created && created.error() != session_errc::session_conflict) co_return created.error();
  if (!created || created->status == create_status::existing)
    co_return make_error(store::store_errc::session_exists, "session " + id + " exists");
  co_return std::move(created->session.session);
}

task<result<session_summary>> session_service::describe(session_id s) {
  auto snap = co_await impl_->store.snapshot(s);
  if (!snap) co_return impl::to_session_error(snap.error());
  const auto activity = active(s) ? drain_activity::draining : drain_activity::not_draining;
  co_return summarize(std::move(*snap), activity);
}

namespace {
// The fork's whole log in one request: its session.created, then the copies.
store::append_request fork_append(const fork_names& names, std::string title, std::string profile,
                                  std::vector<model::payload> copied) {
  store::append_request r;
  r.session = names.fork;
  model::session_created created;
  created.title = std::move(title);
  created.profile = std::move(profile);
  r.events.emplace_back(std::move(created));
  for (auto& p : copied) r.events.push_back(std::move(p));
  return r;
}
model::payload fork_record(const fork_names& names, std::int64_t at) {
  return model::session_forked{names.from, names.fork, at, names.snapshot};
}
}  // namespace

task<result<session_summary>> session_service::fork(session_id source, fork_request req) {
  auto row = co_await impl_->live_session(source);
  if (!row) co_return row.error();
  auto* snapshots = impl_->options.snapshots;
  if (snapshots == nullptr)
    co_return make_error(session_errc::cannot_fork, "this node keeps no workspace snapshots: nothing to fork from");
  session_id id = session_id::generate();
  if (req.id) {
    auto parsed = session_id::parse(*req.id);
    if (!parsed) co_return parsed.error();
    id = *parsed;
  }
  if (id == source) co_return make_error(store::store_errc::session_exists, "a fork needs an id of its own");
  std::string title = req.title.value_or(row->title.empty() ? "fork of " + source.str() : row->title + " (fork)");
  TETHER_CO_TRY(check_text("title", title, 64 * 1024));

  // The source's log up to `at` (all of it for the last turn).
  std::vector<model::event> log;
  event_seq after;
  for (bool more = true; more;) {
    auto page = co_await impl_->store.read(source, after, 1000);
    if (!page) co_return impl::to_session_error(page.error());
    for (auto& e : page->events) {
      if (req.at && e.seq.value > *req.at) {
        more = false;
        break;
      }
      after = e.seq;
      log.push_back(std::move(e));
    }
    more = more && page->more && !page->events.empty();
  }
  auto point = fork_point_of(log, req.at);
  if (!point) co_return point.error();
  fork_names names;
  names.from = source;
  names.fork = id;
  if (const auto newest = newest_agent_state(log, *point); newest > 0) {
    auto held = co_await impl_->store.agent_state_held(source, event_seq{newest});
    if (!held) co_return held.error();
    names.state_held = *held;
  }

  // An id in use is refused before anything is made in its name.
  if (auto taken = co_await impl_->store.get_session(id); taken)
    co_return make_error(store::store_errc::session_exists, "session " + id.str() + " exists");
  auto snapshot = co_await snapshots->restore(source, point->execution, id);
  if (!snapshot) co_return snapshot.error();
  names.snapshot = *snapshot;
  auto made = fork_append(names, std::move(title), row->profile, fork_log(log, *point, names));
  if (auto r = co_await impl_->store.append(std::move(made)); !r) {
    co_await snapshots->discard(id);
    co_return impl::to_session_error(r.error());
  }
  auto mark = store::single_event(source, fork_record(names, point->seq));
  if (auto r = co_await impl_->store.append(std::move(mark)); !r)
    spdlog::warn("session {}: fork {} made, but its record in the source's log failed: {}", source.str(), id.str(),
                 r.error().message);
  co_return co_await describe(id);
}

task<result<std::vector<session_summary>>> session_service::list(std::size_t limit, std::string id_prefix) {
  auto rows = co_await impl_->store.list_overviews(limit, std::move(id_prefix));
  if (!rows) co_return rows.error();
  std::vector<session_summary> out;
  out.reserve(rows->size());
  for (auto& o : *rows) {
    const auto activity = active(o.session.id) ? drain_activity::draining : drain_activity::not_draining;
    out.push_back(summarize(std::move(o), activity));
  }
  co_return out;
}

task<result<admission>> session_service::admit(session_id s, input_request req) {
  if (impl_->stopping) co_return make_error(session_errc::stopped, "the node is stopping");
  input_id id = input_id::generate();
  if (req.id) {
    auto parsed = input_id::parse(*req.id);
    if (!parsed) co_return parsed.error();
    id = *parsed;
  }
  TETHER_CO_TRY(check_text("prompt", req.prompt, impl_->options.max_prompt_bytes));
  if (req.prompt.empty()) co_return make_error(session_errc::invalid_input, "prompt is empty");
  // The append itself checks that the session exists and is not quarantined.

  const auto started = std::chrono::steady_clock::now();
  auto append =
      store::single_event(s, model::input_admitted{id, req.prompt, req.delivery, req.start == start_mode::resume});
  auto r = co_await impl_->store.append(std::move(append));
  metrics::admission_seconds().observe(
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
  if (!r) {
    if (r.error() != store::store_errc::duplicate_input) co_return impl::to_session_error(r.error());
    auto original = co_await impl_->store.get_input(id);
    if (!original) co_return original.error();
    // An exact retry of an input that never started starts it.
    if (original->status == store::input_status::pending && req.start == start_mode::resume) impl_->coord.wake(s);
    co_return admission{std::move(original.value()), admit_status::existing};
  }
  store::input_row row;
  row.id = id;
  row.session = s;
  row.prompt = std::move(req.prompt);
  row.delivery = req.delivery;
  row.admitted_seq = r->last_seq;
  if (req.start == start_mode::resume) impl_->coord.wake(s);
  co_return admission{std::move(row), admit_status::admitted};
}

task<result<store::input_row>> session_service::cancel_input(session_id s, input_id id) {
  auto req = store::single_event(s, model::input_cancelled{id, std::string("user")});
  auto r = co_await impl_->store.append(std::move(req));
  if (!r && r.error() != store::store_errc::rejected) co_return impl::to_session_error(r.error());
  // Read back: the row the caller gets, or why the projection refused. An
  // input only ever leaves `pending`, so a refusal of an input that is no
  // longer pending means another event (a promotion, another cancel) got
  // there first, even one that committed in the same group commit.
  auto row = co_await impl_->store.get_input(id);
  if (!row && row.error() != store::store_errc::not_found) co_return row.error();
  if (!row || row->session != s)
    co_return make_error(session_errc::unknown_input, "session " + s.str() + " has no input " + id.str());
  if (!r) {
    if (row->status != store::input_status::pending)
      co_return make_error(session_errc::input_not_pending,
                           "input " + id.str() + " is " + std::string(store::to_string(row->status)) + ", not pending");
    co_return r.error();
  }
  co_return row;
}

task<result<drain_outcome>> session_service::resume(session_id s) {
  TETHER_CO_TRY(co_await impl_->live_session(s));
  co_return co_await impl_->coord.resume(s);
}

void session_service::wake(session_id s) { impl_->coord.wake(std::move(s)); }

task<result<wake_status>> session_service::resume_if_work(session_id s) {
  auto snap = co_await impl_->store.snapshot(s);
  if (!snap) co_return impl::to_session_error(snap.error());
  const auto& row = snap->session;
  if (snap->pending_inputs.empty() && !row.continuation_pending && !row.open_execution)
    co_return wake_status::nothing_to_do;
  if (!snap->pending_interactions.empty()) co_return wake_status::waiting;
  impl_->coord.wake(s);
  co_return wake_status::woken;
}

task<result<interrupt_ack>> session_service::interrupt(session_id s) {
  auto row = co_await impl_->live_session(s);
  if (!row) co_return row.error();
  auto ack = impl_->coord.interrupt(s);
  // Running on another node sharing the store: that node stops it.
  if (!ack.was_active && impl_->store.shared() && row->open_execution) {
    impl_->store.signal(s, "interrupt");
    ack.was_active = true;
  }
  co_return ack;
}

namespace {
// How long another node's admission is left to that node before this one
// runs the session (session_service::on_foreign).
constexpr int foreign_grace_ms = 500;
}  // namespace

void session_service::on_foreign(const store::cluster_signals::foreign_change& c) {
  if (impl_->stopping) return;
  if (c.session.empty()) {
    // Notifications may have been missed: a scan finds what needs a run.
    asio::co_spawn(
        impl_->executor,
        [this]() -> task<void> {
          auto r = co_await recover();
          if (!r) spdlog::warn("recovery scan after a resync failed: {}", r.error().describe());
        },
        asio::detached);
    return;
  }
  if (c.control == "interrupt") {
    if (impl_->coord.active(c.session)) (void)impl_->coord.interrupt(c.session);
    return;
  }
  if (!c.wakes) return;
  // Running here: the doorbell makes the turn see the steer or the answer.
  if (impl_->coord.active(c.session)) {
    impl_->coord.wake(c.session);
    return;
  }
  // Idle here: the node that admitted the input runs it (it woke the
  // session itself). After a grace period, a session that still has work
  // and no execution is run here (the drain's lease claim fails if another
  // node took it meanwhile).
  asio::co_spawn(
      impl_->executor,
      [this, s = c.session]() -> task<void> {
        asio::steady_timer grace(impl_->executor, std::chrono::milliseconds(foreign_grace_ms));
        co_await grace.async_wait(asio::use_awaitable);
        if (impl_->stopping || impl_->coord.active(s)) co_return;
        auto snap = co_await impl_->store.snapshot(s);
        if (!snap || snap->session.open_execution || !snap->pending_interactions.empty()) co_return;
        if (snap->session.continuation_pending || !snap->pending_inputs.empty()) impl_->coord.wake(s);
      },
      asio::detached);
}

task<result<void>> session_service::reset(session_id s) {
  TETHER_CO_TRY(co_await impl_->live_session(s));
  auto req = store::single_event(s, model::session_reset{});
  auto r = co_await impl_->store.append(std::move(req));
  if (!r) co_return impl::to_session_error(r.error());
  // The next turn starts a fresh context: the runtime drops its agent's.
  co_await impl_->rt.forget(s);
  co_return ok();
}

task<result<store::interaction_row>> session_service::impl::pending_interaction(interaction_id id) {
  auto row = co_await store.get_interaction(id);
  if (!row) {
    if (row.error() == store::store_errc::not_found)
      co_return make_error(session_errc::unknown_interaction, "no interaction " + id.str());
    co_return row.error();
  }
  if (row->status != store::interaction_status::pending)
    co_return make_error(session_errc::interaction_closed, "interaction " + id.str() + " is already resolved");
  co_return row;
}

namespace {
// {"continuation": "never"}: the answer does not wake the agent.
bool wakes(const boost::json::value& payload) {
  const auto* o = payload.if_object();
  const auto* c = o != nullptr ? o->if_contains("continuation") : nullptr;
  return c == nullptr || !c->is_string() || c->get_string() != "never";
}
}  // namespace

task<result<void>> session_service::impl::resolve(store::interaction_row row, boost::json::value answer) {
  // The waiting tool call returns the answer to the model with the chosen options' labels.
  std::string text = boost::json::serialize(model::with_labels(row.payload, answer));
  // Named, not a braced temporary in the co_await (g++ 12 destroys those twice).
  resolution r;
  r.answer = std::move(answer);
  r.call_result = std::move(text);
  r.wake = wakes(row.payload);
  co_return co_await write_resolution(std::move(row), std::move(r));
}

task<result<void>> session_service::impl::write_resolution(store::interaction_row row, resolution r) {
  bool resets = false;
  std::vector<model::payload> events;
  events.emplace_back(model::interaction_resolved{row.id, std::string("answered"), std::move(r.answer)});
  if (row.call) events.emplace_back(model::tool_succeeded{*row.call, std::move(r.call_result), {}});
  for (auto& p : r.then) {
    resets = resets || std::holds_alternative<model::session_reset>(p);
    events.push_back(std::move(p));
  }
  store::append_request req{row.session, std::move(events), std::nullopt, 0};
  auto appended = co_await store.append(std::move(req));
  if (!appended) co_return to_session_error(appended.error());
  if (resets) co_await rt.forget(row.session);
  if (r.wake) coord.wake(row.session);
  co_return ok();
}

task<result<void>> session_service::resolve_with(interaction_id id, resolution r) {
  auto row = co_await impl_->pending_interaction(id);
  if (!row) co_return row.error();
  co_return co_await impl_->write_resolution(std::move(*row), std::move(r));
}

task<result<void>> session_service::answer(interaction_id id, boost::json::value answer) {
  TETHER_CO_TRY(check_text("answer", boost::json::serialize(answer), impl_->options.max_prompt_bytes));
  auto row = co_await impl_->pending_interaction(id);
  if (!row) co_return row.error();
  co_return co_await impl_->resolve(std::move(*row), std::move(answer));
}

task<result<store::interaction_row>> session_service::submit_answer(interaction_id id, boost::json::value body) {
  TETHER_CO_TRY(check_text("answer", boost::json::serialize(body), impl_->options.max_prompt_bytes));
  auto row = co_await impl_->pending_interaction(id);
  if (!row) co_return row.error();
  auto checked = model::check_answer(row->payload, body);
  if (!checked) co_return checked.error();
  TETHER_CO_TRY(co_await impl_->resolve(std::move(*row), std::move(*checked)));
  co_return co_await impl_->store.get_interaction(id);
}

task<void> session_service::idle(session_id s) { co_await impl_->coord.idle(std::move(s)); }

}  // namespace tether::session
