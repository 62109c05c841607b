// The read side of the work layer: projects, tasks, comments, documents.
#include "store/codec.h"
#include "store/decoders.h"
#include "store/sqlite/queries.h"
#include "store/sqlite/rows.h"

namespace tether::store::sqlite {

namespace {

using namespace decode;

}  // namespace

result<std::vector<preparation_row>> list_preparations(connection& db, const task_id& t) {
  auto q = db.prepare("SELECT task_id, seq, data, at FROM task_preparations WHERE task_id = ? ORDER BY seq");
  q.bind(t);
  return collect<preparation_row>(q, preparation_from<query>);
}

result<project_row> get_project(connection& db, const project_id& id) {
  auto q = db.prepare(TETHER_PROJECT_SELECT "WHERE id = ?");
  q.bind(id);
  return single<project_row>(q, project_from<query>, id.str());
}

result<std::vector<project_row>> list_projects(connection& db, std::size_t limit) {
  auto q = db.prepare(TETHER_PROJECT_SELECT "ORDER BY name LIMIT ?");
  q.bind(sql_limit(limit));
  return collect<project_row>(q, project_from<query>);
}

result<task_row> get_task(connection& db, const task_id& id) {
  auto q = db.prepare(TETHER_TASK_SELECT "WHERE t.id = ?");
  q.bind(id);
  return single<task_row>(q, task_from<query>, id.str());
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
  return collect<task_row>(q, task_from<query>);
}

result<std::vector<comment_row>> list_comments(connection& db, const task_id& t) {
  auto q =
      db.prepare("SELECT id, task_id, author, text, seq, created_at FROM task_comments WHERE task_id = ? ORDER BY seq");
  q.bind(t);
  return collect<comment_row>(q, comment_from<query>);
}

result<std::vector<revision_row>> list_revisions(connection& db, const task_id& t) {
  auto q = db.prepare(
      "SELECT revision_id, task_id, name, number, base_id, content, author, accepted, seq, created_at "
      "FROM documents WHERE task_id = ? ORDER BY name, number");
  q.bind(t);
  return collect<revision_row>(q, revision_from<query>);
}

}  // namespace tether::store::sqlite
