// The read side of the work layer: projects, tasks, comments, documents.
#include "store/codec.h"
#include "store/sqlite/queries.h"
#include "store/sqlite/rows.h"

namespace tether::store::sqlite {

namespace {

#define TETHER_PROJECT_SELECT \
  "SELECT id, name, description, repositories, revision, created_at, updated_at, setup FROM projects "

result<project_row> project_from(const query& q) {
  project_row r;
  r.id = project_id::trusted(q.text(0));
  r.name = q.text(1);
  r.description = q.text(2);
  auto repos = decode_repositories(r.id.str(), q.text(3));
  if (!repos) return repos.error();
  r.repositories = std::move(*repos);
  r.revision = q.int64(4);
  r.created_at = q.int64(5);
  r.updated_at = q.int64(6);
  auto setup = decode_setup(r.id.str(), q.text(7));
  if (!setup) return setup.error();
  r.setup = std::move(*setup);
  return r;
}

#define TETHER_TASK_SELECT                                                                                   \
  "SELECT t.id, t.session_id, t.title, t.description, t.status, t.mode, t.priority, t.project_id, "          \
  "t.parent_id, s.profile, t.created_by, t.accepted_plan, t.created_at, t.updated_at, t.started_at, "        \
  "t.completed_at, t.cancelled_at FROM tasks t JOIN sessions s ON s.id = t.session_id "

std::optional<time_ms> optional_time(const query& q, int col) {
  return q.is_null(col) ? std::nullopt : std::optional<time_ms>(q.int64(col));
}

result<task_row> task_from(const query& q) {
  task_row r;
  r.id = task_id::trusted(q.text(0));
  r.session = session_id::trusted(q.text(1));
  r.title = q.text(2);
  r.description = q.text(3);
  const auto status = model::parse_task_status(q.text(4));
  const auto mode = model::parse_work_mode(q.text(5));
  if (!status || !mode)
    return make_error(store_errc::corrupt, "task " + r.id.str() + " has an unknown status or mode");
  r.status = *status;
  r.mode = *mode;
  r.priority = q.int64(6);
  if (!q.is_null(7)) r.project = project_id::trusted(q.text(7));
  if (!q.is_null(8)) r.parent = task_id::trusted(q.text(8));
  r.profile = q.text(9);
  r.created_by = q.text(10);
  if (!q.is_null(11)) r.accepted_plan = revision_id::trusted(q.text(11));
  r.created_at = q.int64(12);
  r.updated_at = q.int64(13);
  r.started_at = optional_time(q, 14);
  r.completed_at = optional_time(q, 15);
  r.cancelled_at = optional_time(q, 16);
  return r;
}

result<comment_row> comment_from(const query& q) {
  return comment_row{comment_id::trusted(q.text(0)), task_id::trusted(q.text(1)), q.text(2), q.text(3),
                     event_seq{q.int64(4)}, q.int64(5)};
}

result<revision_row> revision_from(const query& q) {
  revision_row r;
  r.id = revision_id::trusted(q.text(0));
  r.task = task_id::trusted(q.text(1));
  r.document = q.text(2);
  r.number = q.int64(3);
  if (!q.is_null(4)) r.base = revision_id::trusted(q.text(4));
  r.content = q.text(5);
  r.author = q.text(6);
  r.accepted = q.int64(7) != 0;
  r.seq = event_seq{q.int64(8)};
  r.created_at = q.int64(9);
  return r;
}

result<preparation_row> preparation_from(const query& q) {
  preparation_row r;
  r.task = task_id::trusted(q.text(0));
  r.seq = event_seq{q.int64(1)};
  r.at = q.int64(3);
  boost::system::error_code ec;
  auto v = boost::json::parse(q.text(2), ec);
  if (ec || !v.is_object()) return make_error(store_errc::corrupt, "a preparation of " + r.task.str() + " is not JSON");
  r.record = std::move(v.as_object());
  return r;
}

}  // namespace

result<std::vector<preparation_row>> list_preparations(connection& db, const task_id& t) {
  auto q = db.prepare("SELECT task_id, seq, data, at FROM task_preparations WHERE task_id = ? ORDER BY seq");
  q.bind(t);
  return collect<preparation_row>(q, preparation_from);
}

result<project_row> get_project(connection& db, const project_id& id) {
  auto q = db.prepare(TETHER_PROJECT_SELECT "WHERE id = ?");
  q.bind(id);
  return single<project_row>(q, project_from, id.str());
}

result<std::vector<project_row>> list_projects(connection& db, std::size_t limit) {
  auto q = db.prepare(TETHER_PROJECT_SELECT "ORDER BY name LIMIT ?");
  q.bind(sql_limit(limit));
  return collect<project_row>(q, project_from);
}

result<task_row> get_task(connection& db, const task_id& id) {
  auto q = db.prepare(TETHER_TASK_SELECT "WHERE t.id = ?");
  q.bind(id);
  return single<task_row>(q, task_from, id.str());
}

result<std::optional<task_row>> task_of_session(connection& db, const session_id& s) {
  auto q = db.prepare(TETHER_TASK_SELECT "WHERE t.session_id = ?");
  q.bind(s);
  auto row = q.step();
  if (!row) return row.error();
  if (!*row) return std::optional<task_row>();
  auto t = task_from(q);
  if (!t) return t.error();
  return std::optional<task_row>(std::move(*t));
}

result<std::vector<task_row>> list_tasks(connection& db, const task_filter& f) {
  auto q = db.prepare(TETHER_TASK_SELECT
                      "WHERE (?1 IS NULL OR t.project_id = ?1) AND (?2 IS NULL OR t.parent_id = ?2) "
                      "AND (?3 IS NULL OR t.status = ?3) ORDER BY t.updated_at DESC, t.id LIMIT ?4");
  std::optional<std::string> status;
  if (f.status) status = std::string(model::to_string(*f.status));
  q.bind(f.project, f.parent, status, sql_limit(f.limit));
  return collect<task_row>(q, task_from);
}

result<std::vector<comment_row>> list_comments(connection& db, const task_id& t) {
  auto q = db.prepare(
      "SELECT id, task_id, author, text, seq, created_at FROM task_comments WHERE task_id = ? ORDER BY seq");
  q.bind(t);
  return collect<comment_row>(q, comment_from);
}

result<std::vector<revision_row>> list_revisions(connection& db, const task_id& t) {
  auto q = db.prepare(
      "SELECT revision_id, task_id, name, number, base_id, content, author, accepted, seq, created_at "
      "FROM documents WHERE task_id = ? ORDER BY name, number");
  q.bind(t);
  return collect<revision_row>(q, revision_from);
}

}  // namespace tether::store::sqlite
