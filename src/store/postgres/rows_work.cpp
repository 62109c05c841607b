// pg_rows: the work layer's rows (tasks, comments, documents, projects).
// An empty id parameter means "none": nullif(…, '') stores it as NULL.
#include <boost/json/serialize.hpp>

#include "store/codec.h"
#include "store/postgres/rows.h"

namespace tether::store::postgres {

result<std::optional<task_head>> pg_rows::task_of(const session_id& s) {
  auto r = db_->query("SELECT id, status FROM tasks WHERE session_id = $1::text", s);
  if (!r) return r.error();
  if (!r->step()) return std::optional<task_head>();
  const auto status = model::parse_task_status(r->view(1));
  if (!status) return make_error(store_errc::corrupt, "task " + r->text(0) + " has an unknown status " + r->text(1));
  return std::optional<task_head>(task_head{task_id::trusted(r->text(0)), *status});
}

result<bool> pg_rows::task_exists(const task_id& t) {
  return row_exists(*db_, "SELECT 1 FROM tasks WHERE id = $1::text", t.str());
}

result<void> pg_rows::insert_task(const session_id& s, const model::task_created& p, time_ms at) {
  const model::stamp_change st = model::stamp(model::task_status::backlog, p.status);
  auto when = [at](bool set) { return set ? std::optional<std::int64_t>(at) : std::nullopt; };
  return db_->run(
      "INSERT INTO tasks(id, session_id, title, description, status, mode, priority, project_id, parent_id, "
      "created_by, created_at, updated_at, started_at, completed_at, cancelled_at) "
      "VALUES($1::text, $2::text, $3::text, $4::text, $5::text, $6::text, $7::bigint, nullif($8::text, ''), "
      "nullif($9::text, ''), $10::text, $11::bigint, $11::bigint, $12::bigint, $13::bigint, $14::bigint)",
      p.task, s, p.title, p.description, model::to_string(p.status), model::to_string(p.mode), p.priority, p.project,
      p.parent, p.actor, at,
      when(p.status != model::task_status::backlog && p.status != model::task_status::todo &&
           p.status != model::task_status::cancelled),
      when(st.set_completed), when(st.set_cancelled));
}

result<void> pg_rows::update_task(const task_id& t, const model::task_updated& p, time_ms at) {
  std::optional<std::string> mode;
  if (p.mode) mode = std::string(model::to_string(*p.mode));
  return db_->run(
      "UPDATE tasks SET title = coalesce($1::text, title), description = coalesce($2::text, description), "
      "priority = coalesce($3::bigint, priority), mode = coalesce($4::text, mode), "
      "project_id = CASE WHEN $5::integer <> 0 THEN nullif($6::text, '') ELSE project_id END, "
      "updated_at = $7::bigint WHERE id = $8::text",
      p.title, p.description, p.priority, mode, p.project.has_value(), p.project ? p.project->str() : std::string(), at,
      t);
}

result<void> pg_rows::set_task_status(const task_id& t, model::task_status to, const model::stamp_change& st,
                                      time_ms at) {
  return db_->run(
      "UPDATE tasks SET status = $1::text, updated_at = $2::bigint, "
      "started_at = CASE WHEN $3::integer <> 0 THEN coalesce(started_at, $2::bigint) ELSE started_at END, "
      "completed_at = CASE WHEN $4::integer <> 0 THEN $2::bigint WHEN $5::integer <> 0 THEN NULL "
      "ELSE completed_at END, "
      "cancelled_at = CASE WHEN $6::integer <> 0 THEN $2::bigint WHEN $7::integer <> 0 THEN NULL "
      "ELSE cancelled_at END WHERE id = $8::text",
      model::to_string(to), at, st.set_started, st.set_completed, st.clear_completed, st.set_cancelled,
      st.clear_cancelled, t);
}

result<bool> pg_rows::comment_exists(const comment_id& c) {
  return row_exists(*db_, "SELECT 1 FROM task_comments WHERE id = $1::text", c.str());
}

result<void> pg_rows::insert_comment(const task_id& t, const model::task_commented& p, std::int64_t seq, time_ms at) {
  TETHER_TRY(
      db_->run("INSERT INTO task_comments(id, task_id, author, text, seq, created_at) "
               "VALUES($1::text, $2::text, $3::text, $4::text, $5::bigint, $6::bigint)",
               p.comment, t, p.author, p.text, seq, at));
  return db_->run("UPDATE tasks SET updated_at = $1::bigint WHERE id = $2::text", at, t);
}

result<std::optional<revision_head>> pg_rows::latest_revision(const task_id& t, const std::string& document) {
  auto r = db_->query(
      "SELECT revision_id, number FROM documents WHERE task_id = $1::text AND name = $2::text "
      "ORDER BY number DESC LIMIT 1",
      t, document);
  if (!r) return r.error();
  if (!r->step()) return std::optional<revision_head>();
  return std::optional<revision_head>(revision_head{revision_id::trusted(r->text(0)), r->int64(1)});
}

result<bool> pg_rows::revision_exists(const revision_id& r) {
  return row_exists(*db_, "SELECT 1 FROM documents WHERE revision_id = $1::text", r.str());
}

result<bool> pg_rows::revision_of(const revision_id& r, const task_id& t, const std::string& document) {
  auto q = db_->query("SELECT 1 FROM documents WHERE revision_id = $1::text AND task_id = $2::text AND name = $3::text",
                      r, t, document);
  if (!q) return q.error();
  return q->step();
}

result<void> pg_rows::insert_revision(const task_id& t, const model::document_revised& p, std::int64_t number,
                                      std::int64_t seq, time_ms at) {
  TETHER_TRY(
      db_->run("INSERT INTO documents(revision_id, task_id, name, number, base_id, content, author, seq, created_at) "
               "VALUES($1::text, $2::text, $3::text, $4::bigint, nullif($5::text, ''), $6::text, $7::text, $8::bigint, "
               "$9::bigint)",
               p.revision, t, p.document, number, p.base, p.content, p.author, seq, at));
  return db_->run("UPDATE tasks SET updated_at = $1::bigint WHERE id = $2::text", at, t);
}

result<void> pg_rows::accept_revision(const task_id& t, const model::document_accepted& p, time_ms at) {
  TETHER_TRY(db_->run("UPDATE documents SET accepted = 1 WHERE revision_id = $1::text", p.revision));
  return db_->run(
      "UPDATE tasks SET accepted_plan = CASE WHEN $1::text = 'plan' THEN $2::text ELSE accepted_plan END, "
      "updated_at = $3::bigint WHERE id = $4::text",
      p.document, p.revision, at, t);
}

result<std::optional<project_row>> pg_rows::load_project(const project_id& p) {
  auto r = db_->query(
      "SELECT name, description, repositories, revision, created_at, updated_at, setup FROM projects "
      "WHERE id = $1::text",
      p);
  if (!r) return r.error();
  if (!r->step()) return std::optional<project_row>();
  auto repos = decode_repositories(p.str(), r->view(2));
  if (!repos) return repos.error();
  auto setup = decode_setup(p.str(), r->view(6));
  if (!setup) return setup.error();
  return std::optional<project_row>(project_row{p, r->text(0), r->text(1), std::move(*repos), std::move(*setup),
                                                r->int64(3), r->int64(4), r->int64(5)});
}

result<std::optional<project_id>> pg_rows::project_named(const std::string& name) {
  auto r = db_->query("SELECT id FROM projects WHERE name = $1::text", name);
  if (!r) return r.error();
  if (!r->step()) return std::optional<project_id>();
  return std::optional<project_id>(project_id::trusted(r->text(0)));
}

result<void> pg_rows::put_project(const project_row& p) {
  // A replaced row keeps its created_at.
  const std::string repos = boost::json::serialize(model::to_json(p.repositories));
  return db_->run(
      "INSERT INTO projects(id, name, description, repositories, revision, created_at, updated_at, setup) "
      "VALUES($1::text, $2::text, $3::text, $4::text, $5::bigint, $6::bigint, $7::bigint, $8::text) "
      "ON CONFLICT (id) DO UPDATE SET name = EXCLUDED.name, description = EXCLUDED.description, "
      "repositories = EXCLUDED.repositories, revision = EXCLUDED.revision, updated_at = EXCLUDED.updated_at, "
      "setup = EXCLUDED.setup",
      p.id, p.name, p.description, repos, p.revision, p.created_at, p.updated_at, encode_setup(p.setup));
}

result<void> pg_rows::insert_preparation(const task_id& t, const model::task_prepared& p, std::int64_t seq,
                                         time_ms at) {
  return db_->run(
      "INSERT INTO task_preparations(task_id, seq, data, at) VALUES($1::text, $2::bigint, $3::text, $4::bigint)", t,
      seq, boost::json::serialize(p.record), at);
}

}  // namespace tether::store::postgres
