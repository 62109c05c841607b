// The work layer's projections (tasks, comments, documents) and project rows,
// for every backend: store/projector.h's rules.
#include "store/event_store.h"

#include "backends.h"

namespace tether::store::test {
namespace {

using model::task_status;

template <class F>
class work : public store_test<F> {
 protected:
  // A task's session and its task, created in one append.
  std::pair<session_id, task_id> new_task(std::string title = "fix the build", project_id project = {},
                                          task_id parent = {}, task_status status = task_status::todo) {
    const auto s = session_id::generate();
    const auto t = task_id::generate();
    model::task_created created{t, std::move(title), "details", status, model::work_mode::standard, 2, project, parent,
                                "user"};
    auto r = this->append(s, {model::session_created{"task", "/srv/work", "default"}, created});
    EXPECT_TRUE(r) << why(r);
    return {s, t};
  }
  result<project_row> new_project(std::string name, std::vector<model::project_repository> repos) {
    project_row p;
    p.id = project_id::generate();
    p.name = std::move(name);
    p.repositories = std::move(repos);
    return this->run(this->store().create_project(std::move(p)));
  }
  task_row task(const task_id& t) {
    auto r = this->run(this->store().get_task(t));
    EXPECT_TRUE(r) << why(r);
    return r ? *r : task_row{};
  }
  model::task_status_changed change(task_status from, task_status to) { return {from, to, "user", ""}; }
};
TYPED_TEST_SUITE(work, backends, backend_names);

TYPED_TEST(work, a_task_is_created_with_its_session_and_found_by_either_id) {
  this->open();
  this->clock_.set(1'000);
  auto [s, t] = this->new_task();
  const auto row = this->task(t);
  EXPECT_EQ(row.session, s);
  EXPECT_EQ(row.title, "fix the build");
  EXPECT_EQ(row.description, "details");
  EXPECT_EQ(row.status, task_status::todo);
  EXPECT_EQ(row.priority, 2);
  EXPECT_EQ(row.profile, "default");
  EXPECT_EQ(row.created_by, "user");
  EXPECT_EQ(row.created_at, 1'000);
  EXPECT_FALSE(row.started_at);
  auto by_session = this->run(this->store().task_of_session(s));
  ASSERT_TRUE(by_session) << why(by_session);
  ASSERT_TRUE(*by_session);
  EXPECT_EQ((*by_session)->id, t);
  auto plain = this->run(this->store().task_of_session(this->new_session()));
  ASSERT_TRUE(plain);
  EXPECT_FALSE(*plain);
  auto unknown = this->run(this->store().get_task(task_id::generate()));
  ASSERT_FALSE(unknown);
  EXPECT_EQ(unknown.error(), store_errc::not_found);
}

TYPED_TEST(work, a_second_task_for_a_session_or_a_blank_title_or_an_unknown_project_writes_nothing) {
  this->open();
  auto [s, t] = this->new_task();
  const auto before = this->last_seq(s);
  auto second = this->append(s, {model::task_created{task_id::generate(), "again"}});
  ASSERT_FALSE(second);
  EXPECT_EQ(second.error(), store_errc::rejected);
  const auto s2 = session_id::generate();
  auto blank = this->append(s2, {model::session_created{"t", "/w", "default"}, model::task_created{task_id::generate(), "  "}});
  ASSERT_FALSE(blank);
  EXPECT_EQ(blank.error(), store_errc::rejected);
  auto lost = this->run(this->store().get_session(s2));
  EXPECT_FALSE(lost) << "the session.created of a refused task was written";
  const auto s3 = session_id::generate();
  model::task_created orphan{task_id::generate(), "x"};
  orphan.project = project_id::generate();
  auto unknown = this->append(s3, {model::session_created{"t", "/w", "default"}, orphan});
  ASSERT_FALSE(unknown);
  EXPECT_EQ(unknown.error(), store_errc::not_found);
  EXPECT_EQ(this->last_seq(s), before);
  auto no_task = this->append(this->new_session(), {this->change(task_status::todo, task_status::in_progress)});
  ASSERT_FALSE(no_task);
  EXPECT_EQ(no_task.error(), store_errc::rejected);
}

TYPED_TEST(work, status_changes_follow_the_lifecycle_and_a_stale_from_is_a_conflict) {
  this->open();
  auto [s, t] = this->new_task();
  this->clock_.set(5'000);
  ASSERT_TRUE(this->append(s, {this->change(task_status::todo, task_status::in_progress)}));
  EXPECT_EQ(this->task(t).started_at, 5'000);
  auto stale = this->append(s, {this->change(task_status::todo, task_status::in_progress)});
  ASSERT_FALSE(stale);
  EXPECT_EQ(stale.error(), store_errc::conflict);
  auto skip = this->append(s, {model::task_status_changed{task_status::in_progress, task_status::backlog, "user", ""}});
  ASSERT_FALSE(skip);
  EXPECT_EQ(skip.error(), store_errc::rejected);
  this->clock_.set(7'000);
  ASSERT_TRUE(this->append(s, {this->change(task_status::in_progress, task_status::in_review),
                               this->change(task_status::in_review, task_status::done)}));
  auto row = this->task(t);
  EXPECT_EQ(row.status, task_status::done);
  EXPECT_EQ(row.started_at, 5'000) << "the first start is kept";
  EXPECT_EQ(row.completed_at, 7'000);
  ASSERT_TRUE(this->append(s, {this->change(task_status::done, task_status::todo)}));
  EXPECT_FALSE(this->task(t).completed_at) << "reopened";
  // Each change is an event of the task's session, with who made it.
  auto events = this->all_events(s);
  std::vector<std::string> seen;
  for (const auto& e : events)
    if (const auto* c = e.template as<model::task_status_changed>())
      seen.push_back(std::string(model::to_string(c->to)) + " by " + c->actor);
  EXPECT_EQ(seen, (std::vector<std::string>{"in_progress by user", "in_review by user", "done by user", "todo by user"}));
}

TYPED_TEST(work, updates_and_comments_are_projected_in_order) {
  this->open();
  auto [s, t] = this->new_task();
  model::task_updated up;
  up.title = "fix the build on arm64";
  up.mode = model::work_mode::planning;
  up.actor = "user";
  ASSERT_TRUE(this->append(s, {up}));
  ASSERT_TRUE(this->append(s, {model::task_commented{comment_id::generate(), "user", "first"},
                               model::task_commented{comment_id::generate(), "agent", "second"}}));
  auto row = this->task(t);
  EXPECT_EQ(row.title, "fix the build on arm64");
  EXPECT_EQ(row.description, "details") << "fields the update does not set are kept";
  EXPECT_EQ(row.mode, model::work_mode::planning);
  auto comments = this->run(this->store().list_comments(t));
  ASSERT_TRUE(comments) << why(comments);
  ASSERT_EQ(comments->size(), 2U);
  EXPECT_EQ((*comments)[0].text, "first");
  EXPECT_EQ((*comments)[1].author, "agent");
  auto blank = this->append(s, {model::task_commented{comment_id::generate(), "user", " \n"}});
  ASSERT_FALSE(blank);
  EXPECT_EQ(blank.error(), store_errc::rejected);
}

TYPED_TEST(work, a_revision_must_be_written_against_the_latest_one) {
  this->open();
  auto [s, t] = this->new_task();
  const auto r1 = revision_id::generate();
  const auto r2 = revision_id::generate();
  ASSERT_TRUE(this->append(s, {model::document_revised{"plan", r1, {}, "1. a\n2. b", "agent"}}));
  auto again_first = this->append(s, {model::document_revised{"plan", revision_id::generate(), {}, "x", "agent"}});
  ASSERT_FALSE(again_first);
  EXPECT_EQ(again_first.error(), store_errc::conflict);
  ASSERT_TRUE(this->append(s, {model::document_revised{"plan", r2, r1, "1. a\n2. b\n3. c", "agent"}}));
  auto stale = this->append(s, {model::document_revised{"plan", revision_id::generate(), r1, "y", "agent"}});
  ASSERT_FALSE(stale);
  EXPECT_EQ(stale.error(), store_errc::conflict);
  EXPECT_NE(stale.error().message.find(r2.str()), std::string::npos) << stale.error().message;
  auto foreign = this->append(s, {model::document_accepted{"plan", revision_id::generate(), "user"}});
  ASSERT_FALSE(foreign);
  EXPECT_EQ(foreign.error(), store_errc::not_found);
  ASSERT_TRUE(this->append(s, {model::document_accepted{"plan", r2, "user"}}));
  auto revs = this->run(this->store().list_revisions(t));
  ASSERT_TRUE(revs) << why(revs);
  ASSERT_EQ(revs->size(), 2U);
  EXPECT_EQ((*revs)[0].number, 1);
  EXPECT_FALSE((*revs)[0].accepted);
  EXPECT_EQ((*revs)[1].number, 2);
  EXPECT_EQ((*revs)[1].base, r1);
  EXPECT_TRUE((*revs)[1].accepted);
  EXPECT_EQ(this->task(t).accepted_plan, r2);
}

TYPED_TEST(work, projects_have_unique_names_checked_repositories_and_revisions) {
  this->open();
  auto p = this->new_project("api", {{.url = "https://git.example/team/api.git", .branch = "main"}});
  ASSERT_TRUE(p) << why(p);
  EXPECT_EQ(p->revision, 1);
  ASSERT_EQ(p->repositories.size(), 1U);
  EXPECT_EQ(p->repositories[0].name, "api") << "named after the URL";
  EXPECT_TRUE(p->repositories[0].primary) << "the only one is primary";
  auto taken = this->new_project("api", {{.url = "/srv/other"}});
  ASSERT_FALSE(taken);
  EXPECT_EQ(taken.error(), store_errc::conflict);
  auto hostile = this->new_project("web", {{.url = "--upload-pack=touch /tmp/x"}});
  ASSERT_FALSE(hostile);
  EXPECT_EQ(hostile.error(), store_errc::rejected);
  auto none = this->new_project("empty", {});
  ASSERT_FALSE(none);
  EXPECT_EQ(none.error(), store_errc::rejected);

  project_patch patch;
  patch.id = p->id;
  patch.description = "the API";
  patch.expected_revision = 1;
  auto updated = this->run(this->store().update_project(patch));
  ASSERT_TRUE(updated) << why(updated);
  EXPECT_EQ(updated->revision, 2);
  EXPECT_EQ(updated->name, "api");
  auto stale = this->run(this->store().update_project(patch));
  ASSERT_FALSE(stale);
  EXPECT_EQ(stale.error(), store_errc::conflict);
  patch.id = project_id::generate();
  patch.expected_revision.reset();
  auto unknown = this->run(this->store().update_project(patch));
  ASSERT_FALSE(unknown);
  EXPECT_EQ(unknown.error(), store_errc::not_found);
  auto got = this->run(this->store().get_project(p->id));
  ASSERT_TRUE(got) << why(got);
  EXPECT_EQ(got->description, "the API");
  EXPECT_EQ(got->repositories, updated->repositories);
}

TYPED_TEST(work, tasks_list_by_project_parent_and_status) {
  this->open();
  auto p = this->new_project("api", {{.url = "/srv/api"}});
  ASSERT_TRUE(p) << why(p);
  auto [ps, parent] = this->new_task("parent");
  this->clock_.advance(10);
  auto [cs, child] = this->new_task("child", p->id, parent);
  this->clock_.advance(10);
  auto [os, other] = this->new_task("other", {}, {}, task_status::backlog);
  auto all = this->run(this->store().list_tasks({}));
  ASSERT_TRUE(all) << why(all);
  ASSERT_EQ(all->size(), 3U);
  EXPECT_EQ((*all)[0].id, other) << "most recently updated first";
  auto in_project = this->run(this->store().list_tasks({.project = p->id}));
  ASSERT_TRUE(in_project);
  ASSERT_EQ(in_project->size(), 1U);
  EXPECT_EQ((*in_project)[0].id, child);
  EXPECT_EQ((*in_project)[0].parent, parent);
  auto children = this->run(this->store().list_tasks({.parent = parent}));
  ASSERT_TRUE(children);
  EXPECT_EQ(children->size(), 1U);
  auto backlog = this->run(this->store().list_tasks({.status = task_status::backlog}));
  ASSERT_TRUE(backlog);
  ASSERT_EQ(backlog->size(), 1U);
  EXPECT_EQ((*backlog)[0].id, other);
}

}  // namespace
}  // namespace tether::store::test
