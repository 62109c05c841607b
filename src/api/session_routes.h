// The sessions' routes, and the server's own (api/routes.h lists them all):
//
//   GET    /v1/health                       {status, node, version} (503 when the store cannot write)
//   GET    /metrics                         Prometheus text
//   GET    /v1/openapi.json                 docs/openapi.json
//   GET    /v1/events                       every session's events, live (text/event-stream only)
//   POST   /v1/sessions                     {id?, title?, profile?, workspace?, metadata?}  201 {session} (200: exists)
//   GET    /v1/sessions                     ?prefix=&limit=                               {sessions}
//   GET    /v1/sessions/{id}                                                              {session}
//   POST   /v1/sessions/{id}/inputs         {id?, text, delivery?, resume?}               202 {input} (200: a retry)
//   GET    /v1/sessions/{id}/inputs                                                       {inputs}
//   DELETE /v1/sessions/{id}/inputs/{iid}                                                 {input}
//   POST   /v1/sessions/{id}/interrupt                                                    {interrupted}
//   POST   /v1/sessions/{id}/reset                                                        {generation}
//   POST   /v1/sessions/{id}/fork           {at?: seq | "latest", id?, title?}            201 {session} (session/fork.h)
//   POST   /v1/sessions/{id}/resume                                                       {started}
//   GET    /v1/sessions/{id}/messages                                                     {messages}
//   GET    /v1/sessions/{id}/events         ?after=&limit= (JSON), or a stream            {events, more}
//   GET    /v1/sessions/{id}/executions                                                   {executions}
//   GET    /v1/sessions/{id}/interactions                                                 {interactions}
//   POST   /v1/interactions/{id}/answer     {answers} (a plan confirmation: work_routes.h)  {interaction}
//
// An unknown session id is 404 unknown_session, whatever the route.
#pragma once

#include <boost/asio/awaitable.hpp>

#include "api/routes.h"

namespace tether::api::session_routes {

using reply = boost::asio::awaitable<http_reply>;

reply health(route_call c);
reply prometheus(route_call c);
reply openapi(route_call c);
reply all_events(route_call c);
reply create(route_call c);
reply list(route_call c);
reply get(route_call c);
reply admit(route_call c);
reply inputs(route_call c);
reply cancel(route_call c);
reply interrupt(route_call c);
reply reset(route_call c);
reply fork(route_call c);
reply resume(route_call c);
reply messages(route_call c);
reply events(route_call c);
reply executions(route_call c);
reply interactions(route_call c);
reply answer(route_call c);

}  // namespace tether::api::session_routes
