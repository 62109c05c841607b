// The work layer's routes (docs/architecture.md §6) under /v1/projects and /v1/tasks (api/routes.h
// lists them all; on a server without the work layer each is 503 unavailable):
//
//   POST  /v1/projects                 {id?, name, description?, repositories, setup?}  201 {project}
//   GET   /v1/projects                 ?limit=                                       {projects}
//   GET   /v1/projects/{id}                                                          {project}
//   PATCH /v1/projects/{id}            {name?, description?, repositories?, setup?, revision?}  {project}
//   POST  /v1/tasks                    {id?, title, description?, status?, mode?, priority?,
//                                       project_id?, parent_task_id?, profile?, workspace?, message?}
//                                                                                    201 {task, input?}
//   GET   /v1/tasks                    ?project_id=&parent_task_id=&status=&limit=   {tasks}
//   GET   /v1/tasks/{id}                                                             TaskDetail
//   PATCH /v1/tasks/{id}               {title?, description?, priority?, mode?, project_id?, status?, reason?}
//                                                                                    {task}
//   POST  /v1/tasks/{id}/messages      {id?, text, delivery?, resume?}               202 {input} (200: a retry)
//   POST  /v1/tasks/{id}/comments      {text, author?}                               201 {comment}
//   GET   /v1/tasks/{id}/plan                                                        {revisions}
//   POST  /v1/tasks/{id}/plan          {content, base_revision_id?}                  201 {revision}
//   POST  /v1/tasks/{id}/approve       {}                                            {task}
//   POST  /v1/tasks/{id}/reject        {reason}                                      {task}
//
// A plan revision's base must be the latest revision (none for the first):
// a stale one is 409, as is a status change that raced another, a project
// name in use, a PATCH of a project with a stale `revision`. approve and
// reject decide the task's open plan confirmation (409 when none is open).
// An answer to a confirmation through POST /v1/interactions/{id}/answer is
// {accepted, reason?} (confirmation_answer_fields), decided the same way.
#pragma once

#include <array>
#include <optional>
#include <string_view>
#include <vector>

#include <boost/asio/awaitable.hpp>

#include "api/routes.h"

namespace tether::api {

inline constexpr std::array<std::string_view, 5> create_project_fields{"id", "name", "description", "repositories",
                                                                       "setup"};
inline constexpr std::array<std::string_view, 5> update_project_fields{"name", "description", "repositories", "setup",
                                                                       "revision"};
inline constexpr std::array<std::string_view, 11> create_task_fields{
    "id",         "title",          "description", "status",    "mode",   "priority",
    "project_id", "parent_task_id", "profile",     "workspace", "message"};
inline constexpr std::array<std::string_view, 7> update_task_fields{"title",      "description", "priority", "mode",
                                                                    "project_id", "status",      "reason"};
inline constexpr std::array<std::string_view, 2> create_comment_fields{"text", "author"};
inline constexpr std::array<std::string_view, 2> write_plan_fields{"content", "base_revision_id"};
inline constexpr std::array<std::string_view, 1> reject_fields{"reason"};
inline constexpr std::array<std::string_view, 2> confirmation_answer_fields{"accepted", "reason"};

namespace work_routes {

using reply = boost::asio::awaitable<http_reply>;

reply create_project(route_call c);
reply list_projects(route_call c);
reply get_project(route_call c);
reply update_project(route_call c);
reply create_task(route_call c);
reply list_tasks(route_call c);
reply get_task(route_call c);
reply update_task(route_call c);
reply send_message(route_call c);
reply add_comment(route_call c);
reply plan(route_call c);
reply write_plan(route_call c);
reply approve(route_call c);
reply reject(route_call c);

}  // namespace work_routes

// POST /v1/interactions/{id}/answer of a confirmation.
boost::asio::awaitable<http_reply> answer_confirmation(const handler_context* ctx, interaction_id id,
                                                       boost::json::object body);

}  // namespace tether::api
