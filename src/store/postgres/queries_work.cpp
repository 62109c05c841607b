// The read side of the work layer: projects, tasks, comments, documents.
#include "store/codec.h"
#include "store/decoders.h"
#include "store/postgres/queries.h"

namespace tether::store::postgres {

namespace {

using namespace decode;

}  // namespace

result<std::vector<preparation_row>> list_preparations(connection& db, const task_id& t) {
  return collect<preparation_row>(
      db.query("SELECT task_id, seq, data, at FROM task_preparations WHERE task_id = $1::text ORDER BY seq", t),
      preparation_from<rows>);
}

result<project_row> get_project(connection& db, const project_id& id) {
  return single<project_row>(db.query(TETHER_PROJECT_SELECT "WHERE id = $1::text", id), project_from<rows>, id.str());
}

result<std::vector<project_row>> list_projects(connection& db, std::size_t limit) {
  // Names are COLLATE "C": bytewise, as SQLite orders them.
  return collect<project_row>(db.query(TETHER_PROJECT_SELECT "ORDER BY name LIMIT $1::bigint", sql_limit(limit)),
                              project_from<rows>);
}

result<task_row> get_task(connection& db, const task_id& id) {
  return single<task_row>(db.query(TETHER_TASK_SELECT "WHERE t.id = $1::text", id), task_from<rows>, id.str());
}

result<std::optional<task_row>> task_of_session(connection& db, const session_id& s) {
  auto q = db.query(TETHER_TASK_SELECT "WHERE t.session_id = $1::text", s);
  if (!q) return q.error();
  if (!q->step()) return std::optional<task_row>();
  auto t = task_from(*q);
  if (!t) return t.error();
  return std::optional<task_row>(std::move(*t));
}

result<std::vector<task_row>> list_tasks(connection& db, const task_filter& f) {
  std::optional<std::string> status;
  if (f.status) status = std::string(model::to_string(*f.status));
  return collect<task_row>(
      db.query(TETHER_TASK_SELECT
               "WHERE ($1::text IS NULL OR t.project_id = $1::text) AND ($2::text IS NULL OR t.parent_id = $2::text) "
               "AND ($3::text IS NULL OR t.status = $3::text) ORDER BY t.updated_at DESC, t.id LIMIT $4::bigint",
               f.project, f.parent, status, sql_limit(f.limit)),
      task_from<rows>);
}

result<std::vector<comment_row>> list_comments(connection& db, const task_id& t) {
  return collect<comment_row>(
      db.query("SELECT id, task_id, author, text, seq, created_at FROM task_comments WHERE task_id = $1::text "
               "ORDER BY seq",
               t),
      comment_from<rows>);
}

result<std::vector<revision_row>> list_revisions(connection& db, const task_id& t) {
  return collect<revision_row>(
      db.query("SELECT revision_id, task_id, name, number, base_id, content, author, accepted, seq, created_at "
               "FROM documents WHERE task_id = $1::text ORDER BY name, number",
               t),
      revision_from<rows>);
}

}  // namespace tether::store::postgres
