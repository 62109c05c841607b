#include "store/postgres/schema.h"

#include <array>
#include <string>

namespace tether::store::postgres {

namespace {

struct migration {
  int version;
  const char* sql;
};

// The advisory lock key of schema migrations ("tether" in ASCII).
constexpr const char* lock_sql = "SELECT pg_advisory_xact_lock(116101116104101114)";

// Append new steps at the end; never edit a step that has shipped.
//
// Version 1 is SQLite's schema 11 (the column comments are there). What
// differs:
// - sessions.key is an identity column: concurrent writers never pick the
//   same key;
// - sessions.last_seq is kept on the row, updated by each append under the
//   row's lock, so the next append of that session on any node (which locks
//   the row first) reads the seq it must continue from;
// - no foreign keys from the log and projections to sessions: the append
//   checks that the session exists under its lock, as SQLite's does.
constexpr std::array migrations{
    migration{1, R"sql(
CREATE TABLE sessions(
  key                  BIGINT GENERATED ALWAYS AS IDENTITY UNIQUE,
  id                   TEXT COLLATE "C" PRIMARY KEY,
  last_seq             BIGINT NOT NULL DEFAULT 0,
  last_time            BIGINT,
  generation           BIGINT NOT NULL DEFAULT 0,
  title                TEXT COLLATE "C" NOT NULL DEFAULT '',
  workspace            TEXT COLLATE "C" NOT NULL DEFAULT '',
  profile              TEXT COLLATE "C" NOT NULL DEFAULT '',
  open_execution       TEXT COLLATE "C",
  continuation_pending INTEGER NOT NULL DEFAULT 0,
  bound_runtime        TEXT COLLATE "C" NOT NULL DEFAULT '',
  bound_session_id     TEXT COLLATE "C" NOT NULL DEFAULT '',
  bound_generation     BIGINT,
  bound_seen_seq       BIGINT NOT NULL DEFAULT 0,
  bound_state          TEXT COLLATE "C" NOT NULL DEFAULT '',
  runtime              TEXT COLLATE "C" NOT NULL DEFAULT '',
  quarantined          INTEGER NOT NULL DEFAULT 0,
  quarantine_reason    TEXT COLLATE "C" NOT NULL DEFAULT '',
  created_at           BIGINT NOT NULL,
  context_from_seq     BIGINT NOT NULL DEFAULT 0,
  context_summary      TEXT COLLATE "C",
  metadata             TEXT COLLATE "C"
);
CREATE INDEX sessions_open_execution ON sessions(id) WHERE open_execution IS NOT NULL;
CREATE INDEX sessions_continuation_pending ON sessions(id) WHERE continuation_pending = 1;

CREATE TABLE events(
  session BIGINT NOT NULL,
  seq     BIGINT NOT NULL,
  id      TEXT COLLATE "C" NOT NULL UNIQUE,
  type    TEXT COLLATE "C" NOT NULL,
  version INTEGER NOT NULL,
  time    BIGINT NOT NULL,
  data    TEXT COLLATE "C" NOT NULL,
  PRIMARY KEY(session, seq)
);

CREATE TABLE leases(
  session_id TEXT COLLATE "C" PRIMARY KEY,
  owner      TEXT COLLATE "C" NOT NULL,
  expires_at BIGINT NOT NULL,
  attempts   BIGINT NOT NULL DEFAULT 0
);
CREATE INDEX leases_owner ON leases(owner);

CREATE TABLE inputs(
  id           TEXT COLLATE "C" PRIMARY KEY,
  session_id   TEXT COLLATE "C" NOT NULL,
  prompt       TEXT COLLATE "C" NOT NULL,
  delivery     TEXT COLLATE "C" NOT NULL,
  status       TEXT COLLATE "C" NOT NULL,
  admitted_seq BIGINT NOT NULL,
  execution_id TEXT COLLATE "C",
  promoted_seq BIGINT,
  resume       INTEGER NOT NULL DEFAULT 1
);
CREATE INDEX inputs_pending ON inputs(session_id, admitted_seq) WHERE status = 'pending';
CREATE INDEX inputs_session ON inputs(session_id, admitted_seq);
CREATE INDEX inputs_pending_resume ON inputs(session_id) WHERE status = 'pending' AND resume = 1;

CREATE TABLE messages(
  session_id TEXT COLLATE "C" NOT NULL,
  seq        BIGINT NOT NULL,
  generation BIGINT NOT NULL,
  role       TEXT COLLATE "C" NOT NULL,
  id         TEXT COLLATE "C" NOT NULL,
  text       TEXT COLLATE "C" NOT NULL DEFAULT '',
  tool       TEXT COLLATE "C" NOT NULL DEFAULT '',
  input      TEXT COLLATE "C",
  is_error   INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY(session_id, seq)
);
CREATE UNIQUE INDEX messages_message_id ON messages(id) WHERE role IN ('user', 'assistant');

CREATE TABLE executions(
  id          TEXT COLLATE "C" PRIMARY KEY,
  session_id  TEXT COLLATE "C" NOT NULL,
  node        TEXT COLLATE "C" NOT NULL,
  status      TEXT COLLATE "C" NOT NULL,
  outcome     TEXT COLLATE "C",
  reason      TEXT COLLATE "C" NOT NULL DEFAULT '',
  error       TEXT COLLATE "C" NOT NULL DEFAULT '',
  usage       TEXT COLLATE "C",
  started_seq BIGINT NOT NULL,
  open_step   BIGINT,
  started_at  BIGINT NOT NULL DEFAULT 0,
  finished_at BIGINT,
  runtime     TEXT COLLATE "C" NOT NULL DEFAULT 'native',
  agent_state TEXT COLLATE "C" NOT NULL DEFAULT '',
  model       TEXT COLLATE "C" NOT NULL DEFAULT ''
);
CREATE INDEX executions_session ON executions(session_id, started_seq);
CREATE INDEX executions_open ON executions(session_id) WHERE status = 'running';

CREATE TABLE tool_calls(
  id           TEXT COLLATE "C" PRIMARY KEY,
  session_id   TEXT COLLATE "C" NOT NULL,
  execution_id TEXT COLLATE "C",
  name         TEXT COLLATE "C" NOT NULL,
  input        TEXT COLLATE "C" NOT NULL,
  kind         TEXT COLLATE "C" NOT NULL DEFAULT 'local',
  status       TEXT COLLATE "C" NOT NULL,
  result       TEXT COLLATE "C" NOT NULL DEFAULT '',
  called_seq   BIGINT NOT NULL
);
CREATE INDEX tool_calls_running ON tool_calls(session_id, called_seq) WHERE status = 'running';

CREATE TABLE interactions(
  id            TEXT COLLATE "C" PRIMARY KEY,
  session_id    TEXT COLLATE "C" NOT NULL,
  call_id       TEXT COLLATE "C",
  kind          TEXT COLLATE "C" NOT NULL,
  payload       TEXT COLLATE "C" NOT NULL,
  status        TEXT COLLATE "C" NOT NULL,
  result        TEXT COLLATE "C",
  requested_seq BIGINT NOT NULL
);
CREATE INDEX interactions_pending ON interactions(session_id, requested_seq) WHERE status = 'pending';
CREATE INDEX interactions_session ON interactions(session_id, requested_seq);

CREATE TABLE projects(
  id           TEXT COLLATE "C" PRIMARY KEY,
  name         TEXT COLLATE "C" NOT NULL UNIQUE,
  description  TEXT COLLATE "C" NOT NULL DEFAULT '',
  repositories TEXT COLLATE "C" NOT NULL,
  setup        TEXT COLLATE "C" NOT NULL DEFAULT '[]',
  revision     BIGINT NOT NULL,
  created_at   BIGINT NOT NULL,
  updated_at   BIGINT NOT NULL
);
CREATE TABLE tasks(
  id            TEXT COLLATE "C" PRIMARY KEY,
  session_id    TEXT COLLATE "C" NOT NULL UNIQUE,
  title         TEXT COLLATE "C" NOT NULL,
  description   TEXT COLLATE "C" NOT NULL DEFAULT '',
  status        TEXT COLLATE "C" NOT NULL,
  mode          TEXT COLLATE "C" NOT NULL,
  priority      BIGINT NOT NULL DEFAULT 0,
  project_id    TEXT COLLATE "C",
  parent_id     TEXT COLLATE "C",
  created_by    TEXT COLLATE "C" NOT NULL DEFAULT '',
  accepted_plan TEXT COLLATE "C",
  created_at    BIGINT NOT NULL,
  updated_at    BIGINT NOT NULL,
  started_at    BIGINT,
  completed_at  BIGINT,
  cancelled_at  BIGINT
);
CREATE INDEX tasks_project ON tasks(project_id) WHERE project_id IS NOT NULL;
CREATE INDEX tasks_parent ON tasks(parent_id) WHERE parent_id IS NOT NULL;
CREATE INDEX tasks_updated ON tasks(updated_at);
CREATE TABLE task_comments(
  id         TEXT COLLATE "C" PRIMARY KEY,
  task_id    TEXT COLLATE "C" NOT NULL,
  author     TEXT COLLATE "C" NOT NULL,
  text       TEXT COLLATE "C" NOT NULL,
  seq        BIGINT NOT NULL,
  created_at BIGINT NOT NULL
);
CREATE INDEX task_comments_task ON task_comments(task_id, seq);
CREATE TABLE documents(
  revision_id TEXT COLLATE "C" PRIMARY KEY,
  task_id     TEXT COLLATE "C" NOT NULL,
  name        TEXT COLLATE "C" NOT NULL,
  number      BIGINT NOT NULL,
  base_id     TEXT COLLATE "C",
  content     TEXT COLLATE "C" NOT NULL,
  author      TEXT COLLATE "C" NOT NULL,
  accepted    INTEGER NOT NULL DEFAULT 0,
  seq         BIGINT NOT NULL,
  created_at  BIGINT NOT NULL,
  UNIQUE(task_id, name, number)
);
CREATE TABLE task_preparations(
  task_id TEXT COLLATE "C" NOT NULL,
  seq     BIGINT NOT NULL,
  data    TEXT COLLATE "C" NOT NULL,
  at      BIGINT NOT NULL,
  PRIMARY KEY(task_id, seq)
);
)sql"},
    // SQLite's schema 12: how many times each input was given back to
    // pending (input.returned).
    migration{2, R"sql(
ALTER TABLE inputs ADD COLUMN returns INTEGER NOT NULL DEFAULT 0;
)sql"},
    // SQLite's schema 13: agent programs' saved session state.
    migration{3, R"sql(
CREATE TABLE agent_chunks(
  sha256    TEXT COLLATE "C" PRIMARY KEY,
  size      BIGINT NOT NULL,
  data      BYTEA NOT NULL,
  stored_at BIGINT NOT NULL
);
CREATE TABLE agent_states(
  session BIGINT NOT NULL,
  seq     BIGINT NOT NULL,
  PRIMARY KEY(session, seq)
);
CREATE TABLE agent_state_refs(
  session BIGINT NOT NULL,
  seq     BIGINT NOT NULL,
  sha256  TEXT COLLATE "C" NOT NULL,
  PRIMARY KEY(session, seq, sha256)
);
CREATE INDEX agent_state_refs_chunk ON agent_state_refs(sha256);
)sql"},
    // Forks (session.forked), as SQLite's schema 14.
    migration{4, R"sql(
ALTER TABLE sessions ADD COLUMN forked_from TEXT COLLATE "C";
ALTER TABLE sessions ADD COLUMN forked_at BIGINT;
)sql"},
};

error open_error(const error& e) { return {store_errc::open_failed, "migrating the schema: " + e.message}; }

}  // namespace

int latest_schema_version() { return migrations.back().version; }

result<int> stored_version(connection& db) {
  auto table = db.query("SELECT to_regclass('tether_schema') IS NOT NULL");
  if (!table) return table.error();
  if (!table->step() || table->text(0) != "t") return 0;
  auto v = db.query("SELECT version FROM tether_schema");
  if (!v) return v.error();
  return v->step() ? static_cast<int>(v->int64(0)) : 0;
}

result<void> migrate(connection& db) {
  if (auto r = db.exec("BEGIN"); !r) return open_error(r.error());
  auto rollback = [&db](error e) -> result<void> {
    (void)db.exec("ROLLBACK");
    return e;
  };
  // Held until COMMIT or ROLLBACK: a second node waits here, then reads the
  // version the first one wrote.
  if (auto r = db.exec(lock_sql); !r) return rollback(open_error(r.error()));
  if (auto r = db.exec("CREATE TABLE IF NOT EXISTS tether_schema(version INTEGER NOT NULL)"); !r)
    return rollback(open_error(r.error()));
  auto current = stored_version(db);
  if (!current) return rollback(open_error(current.error()));
  const int latest = latest_schema_version();
  if (*current > latest)
    return rollback(make_error(store_errc::schema_too_new, "database schema version " + std::to_string(*current) +
                                                               " is newer than this Tether (" + std::to_string(latest) +
                                                               "); upgrade Tether"));
  if (*current == latest) {  // nothing to do
    (void)db.exec("ROLLBACK");
    return ok();
  }
  for (const auto& m : migrations) {
    if (m.version <= *current) continue;
    if (auto r = db.exec(m.sql); !r) return rollback(open_error(r.error()));
  }
  if (auto r = db.exec("DELETE FROM tether_schema"); !r) return rollback(open_error(r.error()));
  if (auto r = db.run("INSERT INTO tether_schema(version) VALUES($1::integer)", latest); !r)
    return rollback(open_error(r.error()));
  if (auto r = db.exec("COMMIT"); !r) return open_error(r.error());
  return ok();
}

}  // namespace tether::store::postgres
