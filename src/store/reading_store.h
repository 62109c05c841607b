// reading_store: the read side every backend shares. Each read of
// event_store is written once, here: "run the backend's query of that name
// on a reader connection, in one snapshot, off the caller's thread".
//
//   class sqlite_event_store final : public reading_store<sqlite_event_store, sqlite::connection> {
//     friend reading_store;
//     template <class T, class Fn> result<T> run_read(Fn& fn);   // one snapshot on a reader
//     ... list_abandoned, stop() ...
//   };
//
// What a backend brings:
//   - its queries: free functions in its own namespace that take its
//     Connection first and then the read's arguments, named as the read
//     (read_events for read(); get_session, list_sessions, session_usage,
//     ...; see store/sqlite/queries.h). They are found by argument-dependent
//     lookup on Connection, so the backend lists them nowhere else;
//   - run_read<T>(fn): checks a reader connection out, runs fn(Connection&)
//     -> result<T> in one read-only snapshot, checks it back in. It runs on
//     this class's pool of `readers` threads;
//   - list_abandoned: the one read whose "now" each backend decides (the
//     store's clock; a database server's own time);
//   - stop(), which calls close_reads() after stop_writer().
// So a third backend adds queries and a reader, not a forwarder per read.
//
// Reads after close_reads() return store_errc::closed at once; reads
// already posted finish first (close_reads() waits for them).
#pragma once

#include <cstddef>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <boost/asio/post.hpp>
#include <boost/asio/thread_pool.hpp>

#include "store/async.h"
#include "store/committed_store.h"

namespace tether::store {

// The calls to a backend's queries, by argument-dependent lookup on the
// connection: the backend's function (not a template, an exact match) wins
// over these; a backend without the query fails to compile here.
namespace backend_queries {
template <class C>
auto read_events(C& db, const session_id& s, event_seq after, std::size_t limit) {
  return read_events(db, s, after, limit);
}
template <class C>
auto get_session(C& db, const session_id& s) {
  return get_session(db, s);
}
template <class C>
auto session_usage(C& db, const session_id& s) {
  return session_usage(db, s);
}
template <class C>
auto list_sessions(C& db, std::size_t limit) {
  return list_sessions(db, limit);
}
template <class C>
auto list_overviews(C& db, std::size_t limit, const std::string& id_prefix) {
  return list_overviews(db, limit, id_prefix);
}
template <class C>
auto get_input(C& db, const input_id& id) {
  return get_input(db, id);
}
template <class C>
auto pending_inputs(C& db, const session_id& s) {
  return pending_inputs(db, s);
}
template <class C>
auto list_inputs(C& db, const session_id& s) {
  return list_inputs(db, s);
}
template <class C>
auto context(C& db, const session_id& s) {
  return context(db, s);
}
template <class C>
auto transcript(C& db, const session_id& s) {
  return transcript(db, s);
}
template <class C>
auto get_execution(C& db, const execution_id& id) {
  return get_execution(db, id);
}
template <class C>
auto list_executions(C& db, const session_id& s) {
  return list_executions(db, s);
}
template <class C>
auto unsettled_calls(C& db, const session_id& s) {
  return unsettled_calls(db, s);
}
template <class C>
auto get_interaction(C& db, const interaction_id& id) {
  return get_interaction(db, id);
}
template <class C>
auto pending_interactions(C& db, const session_id& s) {
  return pending_interactions(db, s);
}
template <class C>
auto list_interactions(C& db, const session_id& s) {
  return list_interactions(db, s);
}
template <class C>
auto list_stranded(C& db, const std::optional<session_id>& after, std::size_t limit) {
  return list_stranded(db, after, limit);
}
template <class C>
auto get_project(C& db, const project_id& id) {
  return get_project(db, id);
}
template <class C>
auto list_projects(C& db, std::size_t limit) {
  return list_projects(db, limit);
}
template <class C>
auto get_task(C& db, const task_id& id) {
  return get_task(db, id);
}
template <class C>
auto task_of_session(C& db, const session_id& s) {
  return task_of_session(db, s);
}
template <class C>
auto list_tasks(C& db, const task_filter& f) {
  return list_tasks(db, f);
}
template <class C>
auto list_comments(C& db, const task_id& t) {
  return list_comments(db, t);
}
template <class C>
auto list_revisions(C& db, const task_id& t) {
  return list_revisions(db, t);
}
template <class C>
auto list_preparations(C& db, const task_id& t) {
  return list_preparations(db, t);
}
template <class C>
auto missing_chunks(C& db, const std::vector<std::string>& sha256s) {
  return missing_chunks(db, sha256s);
}
template <class C>
auto get_chunks(C& db, const std::vector<std::string>& sha256s) {
  return get_chunks(db, sha256s);
}
template <class C>
auto latest_agent_state(C& db, const session_id& s, event_seq at) {
  return latest_agent_state(db, s, at);
}
template <class C>
auto agent_state_held(C& db, const session_id& s, event_seq seq) {
  return agent_state_held(db, s, seq);
}
}  // namespace backend_queries

template <class Backend, class Connection>
class reading_store : public committed_store {
 public:
  // ---- reads (event_store's), each its backend's query on a reader ----

  task<result<event_page>> read(session_id s, event_seq after, std::size_t limit) override {
    return on_reader<event_page>(
        [s = std::move(s), after, limit](Connection& db) { return backend_queries::read_events(db, s, after, limit); });
  }
  task<result<session_row>> get_session(session_id s) override {
    return on_reader<session_row>([s = std::move(s)](Connection& db) { return backend_queries::get_session(db, s); });
  }
  task<result<session_snapshot>> snapshot(session_id s) override {
    return on_reader<session_snapshot>([s = std::move(s)](Connection& db) -> result<session_snapshot> {
      auto session = backend_queries::get_session(db, s);
      if (!session) return session.error();
      auto inputs = backend_queries::pending_inputs(db, s);
      if (!inputs) return inputs.error();
      auto asking = backend_queries::pending_interactions(db, s);
      if (!asking) return asking.error();
      auto usage = backend_queries::session_usage(db, s);
      if (!usage) return usage.error();
      return session_snapshot{std::move(*session), std::move(*inputs), std::move(*asking), std::move(*usage)};
    });
  }
  task<result<std::vector<session_row>>> list_sessions(std::size_t limit) override {
    return on_reader<std::vector<session_row>>(
        [limit](Connection& db) { return backend_queries::list_sessions(db, limit); });
  }
  task<result<std::vector<session_overview>>> list_overviews(std::size_t limit, std::string id_prefix) override {
    return on_reader<std::vector<session_overview>>([limit, id_prefix = std::move(id_prefix)](Connection& db) {
      return backend_queries::list_overviews(db, limit, id_prefix);
    });
  }
  task<result<input_row>> get_input(input_id id) override {
    return on_reader<input_row>([id = std::move(id)](Connection& db) { return backend_queries::get_input(db, id); });
  }
  task<result<std::vector<input_row>>> pending_inputs(session_id s) override {
    return on_reader<std::vector<input_row>>(
        [s = std::move(s)](Connection& db) { return backend_queries::pending_inputs(db, s); });
  }
  task<result<std::vector<input_row>>> list_inputs(session_id s) override {
    return on_reader<std::vector<input_row>>(
        [s = std::move(s)](Connection& db) { return backend_queries::list_inputs(db, s); });
  }
  task<result<std::vector<message_row>>> context(session_id s) override {
    return on_reader<std::vector<message_row>>(
        [s = std::move(s)](Connection& db) { return backend_queries::context(db, s); });
  }
  task<result<std::vector<message_row>>> transcript(session_id s) override {
    return on_reader<std::vector<message_row>>(
        [s = std::move(s)](Connection& db) { return backend_queries::transcript(db, s); });
  }
  task<result<execution_row>> get_execution(execution_id id) override {
    return on_reader<execution_row>(
        [id = std::move(id)](Connection& db) { return backend_queries::get_execution(db, id); });
  }
  task<result<std::vector<execution_row>>> list_executions(session_id s) override {
    return on_reader<std::vector<execution_row>>(
        [s = std::move(s)](Connection& db) { return backend_queries::list_executions(db, s); });
  }
  task<result<std::vector<tool_call_row>>> unsettled_calls(session_id s) override {
    return on_reader<std::vector<tool_call_row>>(
        [s = std::move(s)](Connection& db) { return backend_queries::unsettled_calls(db, s); });
  }
  task<result<interaction_row>> get_interaction(interaction_id id) override {
    return on_reader<interaction_row>(
        [id = std::move(id)](Connection& db) { return backend_queries::get_interaction(db, id); });
  }
  task<result<std::vector<interaction_row>>> pending_interactions(session_id s) override {
    return on_reader<std::vector<interaction_row>>(
        [s = std::move(s)](Connection& db) { return backend_queries::pending_interactions(db, s); });
  }
  task<result<std::vector<interaction_row>>> list_interactions(session_id s) override {
    return on_reader<std::vector<interaction_row>>(
        [s = std::move(s)](Connection& db) { return backend_queries::list_interactions(db, s); });
  }
  task<result<std::vector<session_id>>> list_stranded(std::optional<session_id> after, std::size_t limit) override {
    return on_reader<std::vector<session_id>>(
        [after = std::move(after), limit](Connection& db) { return backend_queries::list_stranded(db, after, limit); });
  }

  // ---- the work layer's reads ----

  task<result<project_row>> get_project(project_id id) override {
    return on_reader<project_row>(
        [id = std::move(id)](Connection& db) { return backend_queries::get_project(db, id); });
  }
  task<result<std::vector<project_row>>> list_projects(std::size_t limit) override {
    return on_reader<std::vector<project_row>>(
        [limit](Connection& db) { return backend_queries::list_projects(db, limit); });
  }
  task<result<task_row>> get_task(task_id id) override {
    return on_reader<task_row>([id = std::move(id)](Connection& db) { return backend_queries::get_task(db, id); });
  }
  task<result<std::optional<task_row>>> task_of_session(session_id s) override {
    return on_reader<std::optional<task_row>>(
        [s = std::move(s)](Connection& db) { return backend_queries::task_of_session(db, s); });
  }
  task<result<std::vector<task_row>>> list_tasks(task_filter f) override {
    return on_reader<std::vector<task_row>>(
        [f = std::move(f)](Connection& db) { return backend_queries::list_tasks(db, f); });
  }
  task<result<std::vector<comment_row>>> list_comments(task_id t) override {
    return on_reader<std::vector<comment_row>>(
        [t = std::move(t)](Connection& db) { return backend_queries::list_comments(db, t); });
  }
  task<result<std::vector<revision_row>>> list_revisions(task_id t) override {
    return on_reader<std::vector<revision_row>>(
        [t = std::move(t)](Connection& db) { return backend_queries::list_revisions(db, t); });
  }
  task<result<std::vector<preparation_row>>> list_preparations(task_id t) override {
    return on_reader<std::vector<preparation_row>>(
        [t = std::move(t)](Connection& db) { return backend_queries::list_preparations(db, t); });
  }

  // ---- agent state's reads ----

  task<result<std::vector<std::string>>> missing_chunks(std::vector<std::string> sha256s) override {
    return on_reader<std::vector<std::string>>(
        [s = std::move(sha256s)](Connection& db) { return backend_queries::missing_chunks(db, s); });
  }
  task<result<std::vector<state_chunk>>> get_chunks(std::vector<std::string> sha256s) override {
    return on_reader<std::vector<state_chunk>>(
        [s = std::move(sha256s)](Connection& db) { return backend_queries::get_chunks(db, s); });
  }
  task<result<std::optional<model::event>>> latest_agent_state(session_id s, event_seq at) override {
    return on_reader<std::optional<model::event>>(
        [s = std::move(s), at](Connection& db) { return backend_queries::latest_agent_state(db, s, at); });
  }
  task<result<bool>> agent_state_held(session_id s, event_seq seq) override {
    return on_reader<bool>(
        [s = std::move(s), seq](Connection& db) { return backend_queries::agent_state_held(db, s, seq); });
  }

 protected:
  // `readers`: the threads reads run on (the backend keeps as many reader
  // connections). See committed_store for `backend`, `clock` and `o`.
  reading_store(batch_committer& backend, const tether::clock& clock, const committed_store_options& o,
                std::size_t readers)
      : committed_store(backend, clock, o), pool_(readers) {}

  // Runs fn(Connection&) -> result<T> through Backend::run_read on the pool
  // and resumes the caller with its result; closed after close_reads().
  template <class T, class Fn>
  task<result<T>> on_reader(Fn fn) {
    return async_op<result<T>>([this, fn = std::move(fn)](completion<result<T>> done) mutable {
      std::unique_lock lock(read_mu_);
      if (reads_closed_) {
        lock.unlock();
        done(result<T>(tether::error(store_errc::closed, "the store is stopped")));
        return;
      }
      boost::asio::post(pool_, [this, fn = std::move(fn), done = std::move(done)]() mutable {
        done(static_cast<Backend&>(*this).template run_read<T>(fn));
      });
    });
  }

  // Refuses new reads (closed) and waits for the posted ones. Idempotent.
  void close_reads() {
    {
      std::lock_guard lock(read_mu_);
      reads_closed_ = true;
    }
    pool_.join();
  }

 private:
  std::mutex read_mu_;
  bool reads_closed_ = false;
  boost::asio::thread_pool pool_;
};

}  // namespace tether::store
