// sqlite_rows: the work layer's rows (tasks, comments, documents, projects).
#include <boost/json.hpp>

#include "store/codec.h"
#include "store/sqlite/rows.h"

namespace tether::store::sqlite {

namespace {

std::optional<std::string> nonempty(const std::string& s) {
  return s.empty() ? std::nullopt : std::optional<std::string>(s);
}

}  // namespace

result<std::optional<task_head>> sqlite_rows::task_of(const session_id& s) {
  auto q = db_->prepare("SELECT id, status FROM tasks WHERE session_id = ?");
  q.bind(s);
  auto row = q.step();
  if (!row) return row.error();
  if (!*row) return std::optional<task_head>();
  const auto status = model::parse_task_status(q.text(1));
  if (!status) return make_error(store_errc::corrupt, "task " + q.text(0) + " has an unknown status " + q.text(1));
  return std::optional<task_head>(task_head{task_id::trusted(q.text(0)), *status});
}

result<bool> sqlite_rows::task_exists(const task_id& t) { return row_exists(*db_, "SELECT 1 FROM tasks WHERE id = ?", t.str()); }

result<void> sqlite_rows::insert_task(const session_id& s, const model::task_created& p, time_ms at) {
  const model::stamp_change st = model::stamp(model::task_status::backlog, p.status);
  auto q = db_->prepare(
      "INSERT INTO tasks(id, session_id, title, description, status, mode, priority, project_id, parent_id, "
      "created_by, created_at, updated_at, started_at, completed_at, cancelled_at) "
      "VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?11, ?12, ?13, ?14)");
  auto when = [at](bool set) { return set ? std::optional<std::int64_t>(at) : std::nullopt; };
  return q
      .bind(p.task, s, p.title, p.description, model::to_string(p.status), model::to_string(p.mode), p.priority,
            nonempty(p.project.str()), nonempty(p.parent.str()), p.actor, at,
            when(p.status != model::task_status::backlog && p.status != model::task_status::todo &&
                 p.status != model::task_status::cancelled),
            when(st.set_completed), when(st.set_cancelled))
      .run();
}

result<void> sqlite_rows::update_task(const task_id& t, const model::task_updated& p, time_ms at) {
  auto q = db_->prepare(
      "UPDATE tasks SET title = coalesce(?1, title), description = coalesce(?2, description), "
      "priority = coalesce(?3, priority), mode = coalesce(?4, mode), "
      "project_id = CASE WHEN ?5 THEN nullif(?6, '') ELSE project_id END, updated_at = ?7 WHERE id = ?8");
  std::optional<std::string> mode;
  if (p.mode) mode = std::string(model::to_string(*p.mode));
  return q
      .bind(p.title, p.description, p.priority, mode, p.project.has_value(),
            p.project ? p.project->str() : std::string(), at, t)
      .run();
}

result<void> sqlite_rows::set_task_status(const task_id& t, model::task_status to, const model::stamp_change& st,
                                          time_ms at) {
  auto q = db_->prepare(
      "UPDATE tasks SET status = ?1, updated_at = ?2, "
      "started_at = CASE WHEN ?3 THEN coalesce(started_at, ?2) ELSE started_at END, "
      "completed_at = CASE WHEN ?4 THEN ?2 WHEN ?5 THEN NULL ELSE completed_at END, "
      "cancelled_at = CASE WHEN ?6 THEN ?2 WHEN ?7 THEN NULL ELSE cancelled_at END WHERE id = ?8");
  return q
      .bind(model::to_string(to), at, st.set_started, st.set_completed, st.clear_completed, st.set_cancelled,
            st.clear_cancelled, t)
      .run();
}

result<bool> sqlite_rows::comment_exists(const comment_id& c) {
  return row_exists(*db_, "SELECT 1 FROM task_comments WHERE id = ?", c.str());
}

result<void> sqlite_rows::insert_comment(const task_id& t, const model::task_commented& p, std::int64_t seq,
                                         time_ms at) {
  auto q = db_->prepare(
      "INSERT INTO task_comments(id, task_id, author, text, seq, created_at) VALUES(?, ?, ?, ?, ?, ?)");
  TETHER_TRY(q.bind(p.comment, t, p.author, p.text, seq, at).run());
  return db_->prepare("UPDATE tasks SET updated_at = ? WHERE id = ?").bind(at, t).run();
}

result<std::optional<revision_head>> sqlite_rows::latest_revision(const task_id& t, const std::string& document) {
  auto q = db_->prepare(
      "SELECT revision_id, number FROM documents WHERE task_id = ? AND name = ? ORDER BY number DESC LIMIT 1");
  q.bind(t, document);
  auto row = q.step();
  if (!row) return row.error();
  if (!*row) return std::optional<revision_head>();
  return std::optional<revision_head>(revision_head{revision_id::trusted(q.text(0)), q.int64(1)});
}

result<bool> sqlite_rows::revision_exists(const revision_id& r) {
  return row_exists(*db_, "SELECT 1 FROM documents WHERE revision_id = ?", r.str());
}

result<bool> sqlite_rows::revision_of(const revision_id& r, const task_id& t, const std::string& document) {
  auto q = db_->prepare("SELECT 1 FROM documents WHERE revision_id = ? AND task_id = ? AND name = ?");
  q.bind(r, t, document);
  return q.step();
}

result<void> sqlite_rows::insert_revision(const task_id& t, const model::document_revised& p, std::int64_t number,
                                          std::int64_t seq, time_ms at) {
  auto q = db_->prepare(
      "INSERT INTO documents(revision_id, task_id, name, number, base_id, content, author, seq, created_at) "
      "VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?)");
  TETHER_TRY(q.bind(p.revision, t, p.document, number, nonempty(p.base.str()), p.content, p.author, seq, at).run());
  return db_->prepare("UPDATE tasks SET updated_at = ? WHERE id = ?").bind(at, t).run();
}

result<void> sqlite_rows::accept_revision(const task_id& t, const model::document_accepted& p, time_ms at) {
  TETHER_TRY(db_->prepare("UPDATE documents SET accepted = 1 WHERE revision_id = ?").bind(p.revision).run());
  auto q = db_->prepare(
      "UPDATE tasks SET accepted_plan = CASE WHEN ?1 = 'plan' THEN ?2 ELSE accepted_plan END, updated_at = ?3 "
      "WHERE id = ?4");
  return q.bind(p.document, p.revision, at, t).run();
}

result<std::optional<project_row>> sqlite_rows::load_project(const project_id& p) {
  auto q = db_->prepare(
      "SELECT name, description, repositories, revision, created_at, updated_at, setup FROM projects WHERE id = ?");
  q.bind(p);
  auto row = q.step();
  if (!row) return row.error();
  if (!*row) return std::optional<project_row>();
  auto repos = decode_repositories(p.str(), q.text(2));
  if (!repos) return repos.error();
  auto setup = decode_setup(p.str(), q.text(6));
  if (!setup) return setup.error();
  return std::optional<project_row>(project_row{p, q.text(0), q.text(1), std::move(*repos), std::move(*setup),
                                                q.int64(3), q.int64(4), q.int64(5)});
}

result<std::optional<project_id>> sqlite_rows::project_named(const std::string& name) {
  auto q = db_->prepare("SELECT id FROM projects WHERE name = ?");
  q.bind(name);
  auto row = q.step();
  if (!row) return row.error();
  if (!*row) return std::optional<project_id>();
  return std::optional<project_id>(project_id::trusted(q.text(0)));
}

result<void> sqlite_rows::put_project(const project_row& p) {
  auto q = db_->prepare(
      "INSERT INTO projects(id, name, description, repositories, revision, created_at, updated_at, setup) "
      "VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8) ON CONFLICT(id) DO UPDATE SET name = ?2, description = ?3, "
      "repositories = ?4, revision = ?5, updated_at = ?7, setup = ?8");
  const std::string repos = boost::json::serialize(model::to_json(p.repositories));
  return q.bind(p.id, p.name, p.description, repos, p.revision, p.created_at, p.updated_at, encode_setup(p.setup))
      .run();
}

result<void> sqlite_rows::insert_preparation(const task_id& t, const model::task_prepared& p, std::int64_t seq,
                                             time_ms at) {
  auto q = db_->prepare("INSERT INTO task_preparations(task_id, seq, data, at) VALUES(?, ?, ?, ?)");
  return q.bind(t, seq, boost::json::serialize(p.record), at).run();
}

}  // namespace tether::store::sqlite
