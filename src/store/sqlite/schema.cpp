#include "store/sqlite/schema.h"

#include <array>
#include <string>

#include "store/sqlite/sqlite_store.h"

namespace tether::store::sqlite {

namespace {

struct migration {
  int version;
  const char* sql;
};

// Append new steps at the end; never edit a step that has shipped.
//
// Status columns hold the names printed by to_string() of the matching enum.
// The partial indexes serve the hot queries: pending inputs of a session in
// admission order, open executions (recovery scan), running calls and pending
// interactions of a session, and message ids that must be unique across the
// store (user and assistant messages).
constexpr std::array migrations{
    migration{1, R"sql(
CREATE TABLE sessions(
  id                   TEXT PRIMARY KEY,
  last_seq             INTEGER NOT NULL DEFAULT 0,
  generation           INTEGER NOT NULL DEFAULT 0,
  title                TEXT NOT NULL DEFAULT '',
  workspace            TEXT NOT NULL DEFAULT '',
  profile              TEXT NOT NULL DEFAULT '',
  open_execution       TEXT,
  continuation_pending INTEGER NOT NULL DEFAULT 0,
  runtime              TEXT NOT NULL DEFAULT '',
  external_session_id  TEXT NOT NULL DEFAULT '',
  quarantined          INTEGER NOT NULL DEFAULT 0,
  quarantine_reason    TEXT NOT NULL DEFAULT '',
  created_at           INTEGER NOT NULL,
  updated_at           INTEGER NOT NULL
);
CREATE INDEX sessions_open_execution ON sessions(id) WHERE open_execution IS NOT NULL;
CREATE INDEX sessions_updated ON sessions(updated_at);

CREATE TABLE events(
  session_id TEXT NOT NULL REFERENCES sessions(id),
  seq        INTEGER NOT NULL,
  id         TEXT NOT NULL UNIQUE,
  type       TEXT NOT NULL,
  version    INTEGER NOT NULL,
  time       INTEGER NOT NULL,
  data       TEXT NOT NULL,
  PRIMARY KEY(session_id, seq)
);

CREATE TABLE leases(
  session_id TEXT PRIMARY KEY REFERENCES sessions(id),
  owner      TEXT NOT NULL,
  expires_at INTEGER NOT NULL,
  attempts   INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX leases_owner ON leases(owner);

CREATE TABLE inputs(
  id           TEXT PRIMARY KEY,
  session_id   TEXT NOT NULL REFERENCES sessions(id),
  prompt       TEXT NOT NULL,
  delivery     TEXT NOT NULL,
  status       TEXT NOT NULL,
  admitted_seq INTEGER NOT NULL,
  execution_id TEXT
);
CREATE INDEX inputs_pending ON inputs(session_id, admitted_seq) WHERE status = 'pending';

CREATE TABLE messages(
  session_id TEXT NOT NULL REFERENCES sessions(id),
  seq        INTEGER NOT NULL,
  generation INTEGER NOT NULL,
  role       TEXT NOT NULL,
  id         TEXT NOT NULL,
  text       TEXT NOT NULL DEFAULT '',
  tool       TEXT NOT NULL DEFAULT '',
  input      TEXT,
  is_error   INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY(session_id, seq)
);
CREATE UNIQUE INDEX messages_message_id ON messages(id) WHERE role IN ('user', 'assistant');
CREATE INDEX messages_context ON messages(session_id, generation, seq);

CREATE TABLE executions(
  id          TEXT PRIMARY KEY,
  session_id  TEXT NOT NULL REFERENCES sessions(id),
  node        TEXT NOT NULL,
  status      TEXT NOT NULL,
  outcome     TEXT,
  reason      TEXT NOT NULL DEFAULT '',
  error       TEXT NOT NULL DEFAULT '',
  usage       TEXT,
  started_seq INTEGER NOT NULL,
  open_step   INTEGER
);
CREATE INDEX executions_session ON executions(session_id, started_seq);
CREATE INDEX executions_open ON executions(session_id) WHERE status = 'running';

CREATE TABLE tool_calls(
  id           TEXT PRIMARY KEY,
  session_id   TEXT NOT NULL REFERENCES sessions(id),
  execution_id TEXT,
  name         TEXT NOT NULL,
  input        TEXT NOT NULL,
  hosted       INTEGER NOT NULL DEFAULT 0,
  status       TEXT NOT NULL,
  result       TEXT NOT NULL DEFAULT '',
  called_seq   INTEGER NOT NULL
);
CREATE INDEX tool_calls_running ON tool_calls(session_id, called_seq) WHERE status = 'running';

CREATE TABLE interactions(
  id            TEXT PRIMARY KEY,
  session_id    TEXT NOT NULL REFERENCES sessions(id),
  call_id       TEXT,
  kind          TEXT NOT NULL,
  payload       TEXT NOT NULL,
  status        TEXT NOT NULL,
  result        TEXT,
  requested_seq INTEGER NOT NULL
);
CREATE INDEX interactions_pending ON interactions(session_id, requested_seq) WHERE status = 'pending';
)sql"},
    // Fewer pages per group commit:
    // - a session's last seq and update time are read from its events, so an
    //   append no longer rewrites the sessions row (nor its index);
    // - the model's context is the session's messages from context_from_seq
    //   on (set by session.reset and compaction.ended, which also leaves its
    //   summary), read through the messages key, so each message no longer
    //   feeds a second per-session index.
    migration{2, R"sql(
DROP INDEX sessions_updated;
ALTER TABLE sessions DROP COLUMN last_seq;
ALTER TABLE sessions DROP COLUMN updated_at;
ALTER TABLE sessions ADD COLUMN context_from_seq INTEGER NOT NULL DEFAULT 0;
ALTER TABLE sessions ADD COLUMN context_summary TEXT;
UPDATE sessions SET context_from_seq = COALESCE(
  (SELECT max(seq) FROM events e WHERE e.session_id = sessions.id AND e.type = 'session.reset'), 0);
DROP INDEX messages_context;
)sql"},
    // The log is keyed by a small integer per session instead of its 30-byte
    // id: the (session, seq) key every append inserts into is a quarter of
    // the size, compares as an integer, and needs no foreign-key lookup (the
    // append checks that the session exists). sessions.key is assigned at
    // creation and never changes (unlike a rowid, which VACUUM may renumber).
    migration{3, R"sql(
ALTER TABLE sessions ADD COLUMN key INTEGER;
UPDATE sessions SET key = rowid;
CREATE UNIQUE INDEX sessions_key ON sessions(key);
CREATE TABLE events_by_key(
  session INTEGER NOT NULL,
  seq     INTEGER NOT NULL,
  id      TEXT NOT NULL UNIQUE,
  type    TEXT NOT NULL,
  version INTEGER NOT NULL,
  time    INTEGER NOT NULL,
  data    TEXT NOT NULL,
  PRIMARY KEY(session, seq)
);
INSERT INTO events_by_key(session, seq, id, type, version, time, data)
  SELECT s.key, e.seq, e.id, e.type, e.version, e.time, e.data FROM events e JOIN sessions s ON s.id = e.session_id
  ORDER BY e.rowid;
DROP TABLE events;
ALTER TABLE events_by_key RENAME TO events;
)sql"},
    // What the HTTP API shows of a session without replaying its log:
    // - when each input was promoted (the seq of its input.promoted event)
    //   and when each execution started and finished (event times);
    // - every input of a session in admission order and every interaction
    //   in request order, which the partial indexes (pending rows only)
    //   cannot serve. The inputs index costs an admission one more B-tree
    //   insert; promotion and cancellation change no column it holds, so
    //   they do not touch it. Interactions are rare: their index is cheap.
    // The backfill (UPDATE … FROM) scans the log once for the promotions and
    // once for the finishes, looking rows up by key, instead of searching a
    // session's log per row; start times are read by (session, started_seq).
    // An input is promoted at most once and an execution finishes at most
    // once, so each row has at most one match.
    migration{4, R"sql(
ALTER TABLE inputs ADD COLUMN promoted_seq INTEGER;
UPDATE inputs SET promoted_seq = p.seq
  FROM (SELECT s.id AS session_id, e.seq AS seq, json_extract(e.data, '$.input_id') AS input_id
        FROM events e JOIN sessions s ON s.key = e.session WHERE e.type = 'input.promoted') AS p
  WHERE inputs.id = p.input_id AND inputs.session_id = p.session_id;

ALTER TABLE executions ADD COLUMN started_at INTEGER NOT NULL DEFAULT 0;
ALTER TABLE executions ADD COLUMN finished_at INTEGER;
UPDATE executions SET started_at = e.time
  FROM events e JOIN sessions s ON s.key = e.session
  WHERE s.id = executions.session_id AND e.seq = executions.started_seq;
UPDATE executions SET finished_at = f.time
  FROM (SELECT s.id AS session_id, e.time AS time, json_extract(e.data, '$.execution_id') AS execution_id
        FROM events e JOIN sessions s ON s.key = e.session WHERE e.type = 'execution.finished') AS f
  WHERE executions.id = f.execution_id AND executions.session_id = f.session_id;

CREATE INDEX inputs_session ON inputs(session_id, admitted_seq);
CREATE INDEX interactions_session ON interactions(session_id, requested_seq);
)sql"},
    // A session's own attributes, as its client gave them (session.created's
    // metadata); NULL or '' when none.
    migration{5, R"sql(
ALTER TABLE sessions ADD COLUMN metadata TEXT;
)sql"},
    // Whether a pending input still waits for a run of its own: its
    // admission's `resume` (rows admitted before it was recorded asked for a
    // run: the API's default), cleared when an interrupt leaves it pending.
    // The partial index holds only pending inputs that wait for a run, so
    // recovery finds the sessions nobody runs without reading every session.
    migration{6, R"sql(
ALTER TABLE inputs ADD COLUMN resume INTEGER NOT NULL DEFAULT 1;
CREATE INDEX inputs_pending_resume ON inputs(session_id) WHERE status = 'pending' AND resume = 1;
)sql"},
    // A session whose question was answered (or cancelled) and whose turn
    // has not started again: recovery wakes it like a stranded input, and
    // this partial index holds only those few sessions.
    migration{7, R"sql(
CREATE INDEX sessions_continuation_pending ON sessions(id) WHERE continuation_pending = 1;
)sql"},
    // Which runtime ran what, and what an external runtime needs to resume:
    // - executions.runtime is the runtime of execution.started (version 2);
    //   sessions.runtime that of the session's latest execution. Everything
    //   before ran the native runtime, the only one there was.
    // - the binding (runtime.bound) gets its context generation, the last
    //   seq its agent saw and its opaque state; runtime and
    //   external_session_id become bound_runtime and bound_session_id.
    //   Earlier bindings were projected when written and dropped by every
    //   reset, so one still here belongs to the session's current
    //   generation: that is its generation.
    // - a tool call's kind (local, hosted, agent) replaces its hosted flag.
    migration{8, R"sql(
ALTER TABLE sessions RENAME COLUMN runtime TO bound_runtime;
ALTER TABLE sessions RENAME COLUMN external_session_id TO bound_session_id;
ALTER TABLE sessions ADD COLUMN bound_generation INTEGER;
ALTER TABLE sessions ADD COLUMN bound_seen_seq INTEGER NOT NULL DEFAULT 0;
ALTER TABLE sessions ADD COLUMN bound_state TEXT NOT NULL DEFAULT '';
UPDATE sessions SET bound_generation = generation WHERE bound_runtime != '';
ALTER TABLE sessions ADD COLUMN runtime TEXT NOT NULL DEFAULT '';
ALTER TABLE executions ADD COLUMN runtime TEXT NOT NULL DEFAULT 'native';
UPDATE sessions SET runtime = 'native' WHERE EXISTS (SELECT 1 FROM executions x WHERE x.session_id = sessions.id);
ALTER TABLE tool_calls ADD COLUMN kind TEXT NOT NULL DEFAULT 'local';
UPDATE tool_calls SET kind = 'hosted' WHERE hosted = 1;
ALTER TABLE tool_calls DROP COLUMN hosted;
)sql"},
    // The state of the runtime.bound recorded while an execution ran (an
    // agent runtime's process identity), kept per execution: the binding on
    // the session is overwritten by the next turn's.
    migration{9, R"sql(
ALTER TABLE executions ADD COLUMN agent_state TEXT NOT NULL DEFAULT '';
)sql"},
    // Which model answered an execution (execution.started version 3); ''
    // for the ones recorded before.
    migration{10, R"sql(
ALTER TABLE executions ADD COLUMN model TEXT NOT NULL DEFAULT '';
)sql"},
    // The work layer: tasks (one per task session), their comments,
    // document revisions and run preparations (the freshness decisions,
    // JSON), and projects (repositories and setup commands as JSON arrays).
    // Timestamps that may be unset are NULL.
    migration{11, R"sql(
CREATE TABLE projects(
  id           TEXT PRIMARY KEY,
  name         TEXT NOT NULL UNIQUE,
  description  TEXT NOT NULL DEFAULT '',
  repositories TEXT NOT NULL,
  setup        TEXT NOT NULL DEFAULT '[]',
  revision     INTEGER NOT NULL,
  created_at   INTEGER NOT NULL,
  updated_at   INTEGER NOT NULL
);
CREATE TABLE tasks(
  id            TEXT PRIMARY KEY,
  session_id    TEXT NOT NULL UNIQUE REFERENCES sessions(id),
  title         TEXT NOT NULL,
  description   TEXT NOT NULL DEFAULT '',
  status        TEXT NOT NULL,
  mode          TEXT NOT NULL,
  priority      INTEGER NOT NULL DEFAULT 0,
  project_id    TEXT,
  parent_id     TEXT,
  created_by    TEXT NOT NULL DEFAULT '',
  accepted_plan TEXT,
  created_at    INTEGER NOT NULL,
  updated_at    INTEGER NOT NULL,
  started_at    INTEGER,
  completed_at  INTEGER,
  cancelled_at  INTEGER
);
CREATE INDEX tasks_project ON tasks(project_id) WHERE project_id IS NOT NULL;
CREATE INDEX tasks_parent ON tasks(parent_id) WHERE parent_id IS NOT NULL;
CREATE INDEX tasks_updated ON tasks(updated_at);
CREATE TABLE task_comments(
  id         TEXT PRIMARY KEY,
  task_id    TEXT NOT NULL REFERENCES tasks(id),
  author     TEXT NOT NULL,
  text       TEXT NOT NULL,
  seq        INTEGER NOT NULL,
  created_at INTEGER NOT NULL
);
CREATE INDEX task_comments_task ON task_comments(task_id, seq);
CREATE TABLE documents(
  revision_id TEXT PRIMARY KEY,
  task_id     TEXT NOT NULL REFERENCES tasks(id),
  name        TEXT NOT NULL,
  number      INTEGER NOT NULL,
  base_id     TEXT,
  content     TEXT NOT NULL,
  author      TEXT NOT NULL,
  accepted    INTEGER NOT NULL DEFAULT 0,
  seq         INTEGER NOT NULL,
  created_at  INTEGER NOT NULL,
  UNIQUE(task_id, name, number)
);
CREATE TABLE task_preparations(
  task_id TEXT NOT NULL REFERENCES tasks(id),
  seq     INTEGER NOT NULL,
  data    TEXT NOT NULL,
  at      INTEGER NOT NULL,
  PRIMARY KEY(task_id, seq)
);
)sql"},
    // How many times each input was given back to pending by an execution
    // that could not answer it (input.returned): past a limit the runner
    // stops giving it back. No input was given back before.
    migration{12, R"sql(
ALTER TABLE inputs ADD COLUMN returns INTEGER NOT NULL DEFAULT 0;
)sql"},
    // Agent programs' saved session state (store/agent_state_store.h):
    // each chunk once, deflated, by the SHA-256 of its raw bytes; which
    // saved state (the session's key and the seq of its agent.state.saved)
    // uses which chunk, looked up by chunk for garbage collection; and the
    // seq of every agent.state.* event, so the newest is found without
    // reading the log.
    migration{13, R"sql(
CREATE TABLE agent_chunks(
  sha256    TEXT PRIMARY KEY,
  size      INTEGER NOT NULL,
  data      BLOB NOT NULL,
  stored_at INTEGER NOT NULL
);
CREATE TABLE agent_states(
  session INTEGER NOT NULL,
  seq     INTEGER NOT NULL,
  PRIMARY KEY(session, seq)
) WITHOUT ROWID;
CREATE TABLE agent_state_refs(
  session INTEGER NOT NULL,
  seq     INTEGER NOT NULL,
  sha256  TEXT NOT NULL,
  PRIMARY KEY(session, seq, sha256)
) WITHOUT ROWID;
CREATE INDEX agent_state_refs_chunk ON agent_state_refs(sha256);
)sql"},
    // Forks (session.forked): the session a fork was made from and the seq
    // of its log the fork copies up to; NULL for a session made afresh.
    migration{14, R"sql(
ALTER TABLE sessions ADD COLUMN forked_from TEXT;
ALTER TABLE sessions ADD COLUMN forked_at INTEGER;
)sql"},
};

result<int> stored_version(connection& db) {
  auto q = db.prepare("PRAGMA user_version");
  auto row = q.step();
  if (!row) return row.error();
  return *row ? static_cast<int>(q.int64(0)) : 0;
}

error open_error(const error& e) { return {store_errc::open_failed, "migrating the schema: " + e.message}; }

}  // namespace

int latest_schema_version() { return migrations.back().version; }

result<void> migrate(connection& db) { return migrate(db, latest_schema_version()); }

result<void> migrate(connection& db, int target) {
  if (auto r = db.exec("BEGIN IMMEDIATE"); !r) return open_error(r.error());
  auto rollback = [&db](error e) -> result<void> {
    (void)db.exec("ROLLBACK");
    return e;
  };
  auto current = stored_version(db);
  if (!current) return rollback(open_error(current.error()));
  const int latest = latest_schema_version();
  if (*current > latest)
    return rollback(make_error(store_errc::schema_too_new, "database schema version " + std::to_string(*current) +
                                                               " is newer than this Tether (" + std::to_string(latest) +
                                                               "); upgrade Tether"));
  if (*current >= target) {
    (void)db.exec("ROLLBACK");  // nothing to do; release the write lock
    return ok();
  }
  for (const auto& m : migrations) {
    if (m.version <= *current || m.version > target) continue;
    if (auto r = db.exec(m.sql); !r) return rollback(open_error(r.error()));
  }
  // PRAGMA takes no bound parameters; the value is our own integer.
  const std::string set_version = "PRAGMA user_version = " + std::to_string(target);
  if (auto r = db.exec(set_version.c_str()); !r) return rollback(open_error(r.error()));
  if (auto r = db.exec("COMMIT"); !r) return rollback(open_error(r.error()));
  return ok();
}

}  // namespace tether::store::sqlite

namespace tether::store {
int sqlite_schema_version() { return sqlite::latest_schema_version(); }
}  // namespace tether::store
