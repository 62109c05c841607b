#include "work/service.h"

#include <algorithm>
#include <deque>
#include <map>
#include <system_error>

#include <boost/json.hpp>
#include <fmt/format.h>

#include "session/errors.h"
#include "util/errors.h"
#include "util/text.h"

namespace tether::work {

namespace {

namespace json = boost::json;

tether::error invalid(std::string msg) { return {util_errc::invalid_argument, std::move(msg)}; }

bool blank(std::string_view s) { return s.find_first_not_of(" \t\r\n") == std::string_view::npos; }

result<void> check_field(std::string_view field, std::string_view text, std::size_t max, bool required) {
  if (required && blank(text)) return invalid(fmt::format("field '{}' must not be empty", field));
  return check_text(fmt::format("field '{}'", field), text, max);
}

// The shortest way through the lifecycle from `from` to `to` (empty when
// they are the same, nullopt when there is none).
std::optional<std::vector<model::task_status>> path_to(model::task_status from, model::task_status to) {
  std::map<model::task_status, model::task_status> came_from;
  std::deque<model::task_status> queue{from};
  came_from.emplace(from, from);
  while (!queue.empty()) {
    const auto at = queue.front();
    queue.pop_front();
    if (at == to) {
      std::vector<model::task_status> steps;
      for (auto s = to; s != from; s = came_from.at(s)) steps.push_back(s);
      std::reverse(steps.begin(), steps.end());
      return steps;
    }
    for (const auto next : model::next_statuses(at))
      if (came_from.emplace(next, at).second) queue.push_back(next);
  }
  return std::nullopt;
}

// The status changes that take a task from `from` to `to`, one event per step.
void append_moves(std::vector<model::payload>& events, model::task_status from, model::task_status to,
                  const std::string& actor, const std::string& reason) {
  const auto steps = path_to(from, to);
  if (!steps) return;
  auto at = from;
  for (const auto s : *steps) {
    events.emplace_back(model::task_status_changed{at, s, actor, reason});
    at = s;
  }
}

std::string implementation_prompt(const store::task_row& t, const store::revision_row& plan) {
  std::string p = fmt::format("Implement the accepted plan of the task \"{}\".\n", t.title);
  if (!t.description.empty()) p += "\nThe task: " + t.description + "\n";
  p += fmt::format("\nThe plan (revision {}):\n{}\n", plan.number, plan.content);
  p += "\nWhen the work is done, call finish with a summary.";
  return p;
}

}  // namespace

work_service::work_service(store::event_store& store, session::session_service& sessions, work_options options)
    : store_(store), sessions_(sessions), options_(std::move(options)) {}

// ---- projects ----

task<result<store::project_row>> work_service::create_project(project_request req) {
  TETHER_CO_TRY(check_field("name", req.name, 200, true));
  TETHER_CO_TRY(check_field("description", req.description, options_.max_text_bytes, false));
  store::project_row p;
  if (req.id) {
    auto id = project_id::parse(*req.id);
    if (!id) co_return id.error();
    p.id = *id;
  } else {
    p.id = project_id::generate();
  }
  TETHER_CO_TRY(model::check_repositories(req.repositories));
  p.name = std::move(req.name);
  p.description = std::move(req.description);
  p.repositories = std::move(req.repositories);
  p.setup = std::move(req.setup);
  co_return co_await store_.create_project(std::move(p));
}

result<void> work_service::check_agent_repositories(const std::vector<model::project_repository>& repos) const {
  for (const auto& r : repos) {
    std::string_view url = r.url;
    const bool file_url = url.starts_with("file://");
    if (file_url) url.remove_prefix(7);
    const bool local = file_url || url.starts_with('/') || url.starts_with('.') ||
                       (url.find("://") == std::string_view::npos && url.find(':') == std::string_view::npos);
    if (!local) continue;
    std::error_code ec;
    const auto path = std::filesystem::weakly_canonical(std::filesystem::path(url), ec);
    bool under = false;
    for (const auto& root : options_.local_roots) {
      const auto base = std::filesystem::weakly_canonical(root, ec);
      const auto rel = path.lexically_relative(base);
      if (!rel.empty() && *rel.begin() != "..") under = true;
    }
    if (!under)
      return invalid("repository '" + r.url +
                     "': an agent may name a local repository only under the server's workspace roots");
  }
  return ok();
}

task<result<store::project_row>> work_service::update_project(store::project_patch patch) {
  if (patch.name) TETHER_CO_TRY(check_field("name", *patch.name, 200, true));
  if (patch.description) TETHER_CO_TRY(check_field("description", *patch.description, options_.max_text_bytes, false));
  if (patch.repositories) TETHER_CO_TRY(model::check_repositories(*patch.repositories));
  co_return co_await store_.update_project(std::move(patch));
}

task<result<store::project_row>> work_service::get_project(project_id id) {
  co_return co_await store_.get_project(std::move(id));
}

task<result<std::vector<store::project_row>>> work_service::list_projects(std::size_t limit) {
  co_return co_await store_.list_projects(limit);
}

// ---- tasks ----

task<result<store::task_row>> work_service::task_row(task_id id) {
  auto t = co_await store_.get_task(id);
  if (!t && t.error() == store::store_errc::not_found)
    co_return make_error(store::store_errc::not_found, "no task " + id.str());
  co_return t;
}

task<result<void>> work_service::check_lineage(task_id parent) {
  // Up to the root: the new task's level is the number of its ancestors.
  std::size_t level = 0;
  task_id root = parent;
  for (std::optional<task_id> at = parent; at;) {
    auto row = co_await task_row(*at);
    if (!row) co_return row.error();
    if (++level > options_.max_depth)
      co_return make_error(util_errc::invalid_argument, fmt::format("a task may be at most {} levels below its root task; "
                                                             "{} is already at the deepest level",
                                                             options_.max_depth, parent.str()));
    root = row->id;
    at = row->parent;
  }
  // Down from the root, breadth first, until the bound.
  std::vector<task_id> todo{root};
  std::size_t below = 0;
  while (!todo.empty()) {
    store::task_filter children;
    children.parent = todo.back();
    todo.pop_back();
    children.limit = options_.max_descendants + 1;
    auto rows = co_await store_.list_tasks(std::move(children));
    if (!rows) co_return rows.error();
    below += rows->size();
    if (below >= options_.max_descendants)
      co_return make_error(util_errc::invalid_argument,
                           fmt::format("the root task {} already has {} tasks below it, the most one tree may have",
                                       root.str(), options_.max_descendants));
    for (const auto& r : *rows) todo.push_back(r.id);
  }
  co_return ok();
}

task<result<work_service::created>> work_service::create_task(task_request req) {
  TETHER_CO_TRY(check_field("title", req.title, 500, true));
  TETHER_CO_TRY(check_field("description", req.description, options_.max_text_bytes, false));
  TETHER_CO_TRY(check_field("message", req.message, options_.max_text_bytes, false));
  task_id id = task_id::generate();
  if (req.id) {
    auto parsed = task_id::parse(*req.id);
    if (!parsed) co_return parsed.error();
    id = *parsed;
    auto existing = co_await store_.get_task(id);
    if (existing) co_return make_error(store::store_errc::conflict, "task " + id.str() + " already exists");
  }
  if (req.parent) TETHER_CO_TRY(co_await check_lineage(*req.parent));
  std::string workspace = req.workspace;
  if (workspace.empty()) {
    const auto dir = options_.workspaces / id.str();
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (!ec) std::filesystem::permissions(dir, std::filesystem::perms::owner_all, ec);
    if (ec) co_return make_error(util_errc::invalid_argument, "cannot make the workspace " + dir.string() + ": " +
                                                                  ec.message());
    workspace = dir.string();
  }
  const auto session = session_id::generate();
  model::task_created t{id,           req.title,
                        req.description, req.status,
                        req.mode,     req.priority,
                        req.project.value_or(project_id()), req.parent.value_or(task_id()),
                        req.actor};
  std::vector<model::payload> events;
  events.emplace_back(model::session_created{req.title, workspace, req.profile, {}});
  events.emplace_back(std::move(t));
  store::append_request append{session, std::move(events), std::nullopt, 0};
  auto written = co_await store_.append(std::move(append));
  if (!written) co_return written.error();
  created out;
  if (!req.message.empty()) {
    session::input_request first;
    first.prompt = std::move(req.message);
    auto admitted = co_await send(id, std::move(first));
    if (admitted)
      out.first = std::move(*admitted);
    else
      out.first_error = admitted.error();
  }
  auto row = co_await task_row(id);
  if (!row) co_return row.error();
  out.task = std::move(*row);
  co_return out;
}

task<result<task_detail>> work_service::describe(task_id id) {
  auto t = co_await task_row(id);
  if (!t) co_return t.error();
  task_detail d;
  auto snap = co_await store_.snapshot(t->session);
  if (!snap) co_return snap.error();
  auto revisions = co_await store_.list_revisions(id);
  if (!revisions) co_return revisions.error();
  auto runs = co_await store_.list_executions(t->session);
  if (!runs) co_return runs.error();
  auto comments = co_await store_.list_comments(id);
  if (!comments) co_return comments.error();
  auto preparations = co_await store_.list_preparations(id);
  if (!preparations) co_return preparations.error();
  d.preparations = std::move(*preparations);
  for (auto& r : *revisions)
    if (r.document == "plan") d.plan.push_back(std::move(r));
  d.task = std::move(*t);
  d.open_interactions = std::move(snap->pending_interactions);
  d.usage = snap->usage;
  d.runs = std::move(*runs);
  d.comments = std::move(*comments);
  co_return d;
}

task<result<std::optional<store::task_row>>> work_service::task_of_session(session_id s) {
  co_return co_await store_.task_of_session(std::move(s));
}

task<result<std::vector<store::task_row>>> work_service::list_tasks(store::task_filter filter) {
  co_return co_await store_.list_tasks(std::move(filter));
}

task<result<store::task_row>> work_service::update_task(task_id id, task_patch patch) {
  if (patch.title) TETHER_CO_TRY(check_field("title", *patch.title, 500, true));
  if (patch.description) TETHER_CO_TRY(check_field("description", *patch.description, options_.max_text_bytes, false));
  TETHER_CO_TRY(check_field("reason", patch.reason, 4096, false));
  auto t = co_await task_row(id);
  if (!t) co_return t.error();
  std::vector<model::payload> events;
  if (patch.title || patch.description || patch.priority || patch.mode || patch.project) {
    model::task_updated up;
    up.title = std::move(patch.title);
    up.description = std::move(patch.description);
    up.priority = patch.priority;
    up.mode = patch.mode;
    up.project = std::move(patch.project);
    up.actor = patch.actor;
    events.emplace_back(std::move(up));
  }
  if (patch.status && *patch.status != t->status) {
    if (auto allowed = model::check_transition(t->status, *patch.status); !allowed) co_return allowed.error();
    events.emplace_back(model::task_status_changed{t->status, *patch.status, patch.actor, patch.reason});
  }
  if (events.empty()) co_return t;
  store::append_request append{t->session, std::move(events), std::nullopt, 0};
  auto written = co_await store_.append(std::move(append));
  if (!written) co_return written.error();
  co_return co_await task_row(id);
}

task<result<store::task_row>> work_service::finish(task_id id, model::task_status to, std::string actor,
                                                   std::string summary) {
  TETHER_CO_TRY(check_field("summary", summary, options_.max_text_bytes, false));
  auto t = co_await task_row(id);
  if (!t) co_return t.error();
  if (t->status != to && !path_to(t->status, to))
    co_return invalid(fmt::format("a task in {} cannot get to {}", model::to_string(t->status), model::to_string(to)));
  std::vector<model::payload> moves;
  append_moves(moves, t->status, to, actor, "");
  if (!blank(summary)) moves.emplace_back(model::task_commented{comment_id::generate(), actor, std::move(summary)});
  if (moves.empty()) co_return t;
  store::append_request append{t->session, std::move(moves), std::nullopt, 0};
  auto written = co_await store_.append(std::move(append));
  if (!written) co_return written.error();
  co_return co_await task_row(id);
}

task<result<store::comment_row>> work_service::comment(task_id id, std::string author, std::string text) {
  TETHER_CO_TRY(check_field("text", text, options_.max_text_bytes, true));
  auto t = co_await task_row(id);
  if (!t) co_return t.error();
  const auto cid = comment_id::generate();
  // Built before the co_await: g++ 12 destroys temporaries of a co_await's
  // full-expression twice.
  auto append = store::single_event(t->session, model::task_commented{cid, std::move(author), std::move(text)});
  auto written = co_await store_.append(std::move(append));
  if (!written) co_return written.error();
  auto comments = co_await store_.list_comments(id);
  if (!comments) co_return comments.error();
  for (auto& c : *comments)
    if (c.id == cid) co_return std::move(c);
  co_return make_error(store::store_errc::not_found, "comment " + cid.str() + " was not read back");
}

task<result<session::admission>> work_service::send(task_id id, session::input_request req) {
  auto t = co_await task_row(id);
  if (!t) co_return t.error();
  if (req.start == session::start_mode::resume && t->status != model::task_status::in_progress) {
    if (t->status == model::task_status::cancelled)
      co_return invalid("task " + id.str() + " is cancelled; restore it (status backlog) before sending to it");
    std::vector<model::payload> moves;
    append_moves(moves, t->status, model::task_status::in_progress, "tether", "a message started it");
    if (!moves.empty()) {
      store::append_request append{t->session, std::move(moves), std::nullopt, 0};
      auto written = co_await store_.append(std::move(append));
      // A concurrent change of the status wins; the message still goes in.
      if (!written && written.error() != store::store_errc::conflict) co_return written.error();
    }
  }
  if (req.start == session::start_mode::resume && !sessions_.active(t->session)) {
    auto prepared = co_await prepare(id);
    if (!prepared) co_return prepared.error();
  }
  co_return co_await sessions_.admit(t->session, std::move(req));
}

// ---- plans ----

task<result<store::revision_row>> work_service::write_plan(task_id id, std::string content,
                                                           std::optional<revision_id> base, std::string author) {
  TETHER_CO_TRY(check_field("content", content, options_.max_text_bytes, true));
  auto t = co_await task_row(id);
  if (!t) co_return t.error();
  const auto rev = revision_id::generate();
  auto append = store::single_event(t->session, model::document_revised{"plan", rev, base.value_or(revision_id()),
                                                                       std::move(content), std::move(author)});
  auto written = co_await store_.append(std::move(append));
  if (!written) co_return written.error();
  auto revisions = co_await store_.list_revisions(id);
  if (!revisions) co_return revisions.error();
  for (auto& r : *revisions)
    if (r.id == rev) co_return std::move(r);
  co_return make_error(store::store_errc::not_found, "revision " + rev.str() + " was not read back");
}

namespace {
const store::revision_row* latest_plan(const std::vector<store::revision_row>& revisions) {
  const store::revision_row* latest = nullptr;
  for (const auto& r : revisions)
    if (r.document == "plan" && (latest == nullptr || r.number > latest->number)) latest = &r;
  return latest;
}
}  // namespace

task<result<boost::json::object>> work_service::approval_payload(task_id id) {
  auto revisions = co_await store_.list_revisions(id);
  if (!revisions) co_return revisions.error();
  const auto* latest = latest_plan(*revisions);
  if (latest == nullptr) co_return invalid("the task has no plan yet: write one with write_plan first");
  co_return json::object{{"document", "plan"},      {"task_id", id.str()},          {"revision_id", latest->id.str()},
                         {"number", latest->number}, {"content", latest->content}, {"continuation", "on_answer"}};
}

task<result<std::optional<store::interaction_row>>> work_service::open_confirmation(task_id id) {
  auto t = co_await task_row(id);
  if (!t) co_return t.error();
  auto pending = co_await store_.pending_interactions(t->session);
  if (!pending) co_return pending.error();
  for (auto& i : *pending)
    if (i.kind == "confirmation") co_return std::optional<store::interaction_row>(std::move(i));
  co_return std::optional<store::interaction_row>();
}

task<result<void>> work_service::decide(interaction_id interaction, decision d) {
  TETHER_CO_TRY(check_field("reason", d.reason, 4096, !d.accept));
  auto row = co_await store_.get_interaction(interaction);
  if (!row) {
    if (row.error() == store::store_errc::not_found)
      co_return make_error(session::session_errc::unknown_interaction, "no interaction " + interaction.str());
    co_return row.error();
  }
  if (row->kind != "confirmation") co_return invalid(interaction.str() + " is a " + row->kind + ", not a confirmation");
  auto owner = co_await store_.task_of_session(row->session);
  if (!owner) co_return owner.error();
  if (!*owner) co_return invalid(interaction.str() + " does not belong to a task");
  const auto& t = **owner;
  auto revisions = co_await store_.list_revisions(t.id);
  if (!revisions) co_return revisions.error();
  const auto* latest = latest_plan(*revisions);
  const auto* named = row->payload.is_object() ? row->payload.as_object().if_contains("revision_id") : nullptr;
  if (latest == nullptr || named == nullptr || !named->is_string() || latest->id.str() != named->get_string())
    co_return make_error(store::store_errc::conflict,
                         "the plan has changed since " + interaction.str() + " asked; the agent must ask again");

  // The continuation policy: on_answer (the default) wakes the agent either
  // way; on_accept only for an acceptance; never records the decision only.
  const auto* policy = row->payload.is_object() ? row->payload.as_object().if_contains("continuation") : nullptr;
  const std::string continuation = policy != nullptr && policy->is_string() ? std::string(policy->as_string()) : "";
  session::session_service::resolution r;
  r.wake = continuation != "never" && (d.accept || continuation != "on_accept");
  if (!d.accept) {
    r.answer = json::object{{"accepted", false}, {"revision_id", latest->id.str()}, {"reason", d.reason}};
    r.call_result = fmt::format(
        "The plan (revision {}) was rejected: {}\nRevise it with write_plan and ask for approval again with "
        "request_plan_approval.",
        latest->number, d.reason);
    co_return co_await sessions_.resolve_with(interaction, std::move(r));
  }
  r.answer = json::object{{"accepted", true}, {"revision_id", latest->id.str()}};
  r.call_result = fmt::format("The plan (revision {}) was accepted. The implementation starts in a fresh context.",
                              latest->number);
  r.then.emplace_back(model::document_accepted{"plan", latest->id, d.actor});
  append_moves(r.then, t.status, model::task_status::in_progress, "tether", "the plan was accepted");
  r.then.emplace_back(model::session_reset{});
  r.then.emplace_back(model::input_admitted{input_id::generate(), implementation_prompt(t, *latest),
                                            model::delivery::steer, true});
  co_return co_await sessions_.resolve_with(interaction, std::move(r));
}

}  // namespace tether::work
