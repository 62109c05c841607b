// The web interface's routes (api/routes.h lists them all):
//
//   GET  /                                   302 to /ui/
//   GET  /ui/ · /ui/{file}                   the interface's files (web/assets.h): ETag, 304 on
//                                            If-None-Match, Cache-Control no-cache; no token needed
//   POST /v1/auth/login      {token}         {csrf, expires_at} and Set-Cookie tether_session
//                                            (HttpOnly, SameSite=Strict, Path=/, Secure under TLS); 401
//   GET  /v1/auth/session                    {csrf, expires_at} for a valid cookie; 401
//   POST /v1/auth/logout                     {} and a Set-Cookie that clears it (revoked: web_auth.h)
//   GET  /v1/profiles                        {profiles:[{name, runtime, model, available, problem}]}
//   GET  /v1/qualification                   {configured, history}: the results folder's history.json
//   GET  /v1/qualification/dashboard[?campaign=ID]   the `tether e2e` dashboard page
//   GET  /v1/qualification/dashboard-{ID}.html       campaign ID's page (the dashboard's own links)
//   GET  /v1/qualification/campaigns/…       a campaign's artifact files (logs, transcripts)
//
// Every route under /v1 (login and session aside) takes the bearer token
// or the cookie; with the cookie, a request other than GET/HEAD must carry
// X-Tether-CSRF (403 forbidden otherwise), so another site can make the
// browser neither read nor change anything.
//
// The dashboard and artifacts come from `server_options::qualification`
// (unset: 404 not_found, "configured": false). A dashboard page may be framed by
// the interface only, runs no script and loads nothing but itself (its CSP);
// an artifact is sent as text or JSON with `sandbox` in its CSP. An
// artifact path is decoded and confined: segments of [A-Za-z0-9._@+-]
// (none "." or ".."), resolving inside the results folder's campaigns/ (no
// symbolic link leads out), a regular file of at most 16 MiB.
#pragma once

#include <array>
#include <optional>
#include <string_view>

#include <boost/asio/awaitable.hpp>

#include "api/routes.h"

namespace tether::api {

// The body of POST /v1/auth/login.
inline constexpr std::array<std::string_view, 1> login_fields{"token"};

// Whether a request carries the bearer token, or the cookie (with the CSRF
// header unless GET/HEAD): api_errc::unauthorized or forbidden otherwise.
// A failed check counts against the client's address (api/guard.h).
result<void> authenticate(const handler_context* ctx, const http_request& req);
// Whether a request presents a credential: an Authorization header, a
// sign-in cookie, or a sign-in attempt.
bool carries_credentials(const http_request& req);

namespace web_routes {

using reply = boost::asio::awaitable<http_reply>;

reply root(route_call c);       // GET /
reply interface(route_call c);  // GET /ui/
reply file(route_call c);       // GET /ui/{file*} (404 unless one segment)
reply login(route_call c);
reply signed_in(route_call c);  // GET /v1/auth/session
reply logout(route_call c);
reply profiles(route_call c);
reply qualification(route_call c);
reply dashboard(route_call c);
reply campaign_page(route_call c);  // GET /v1/qualification/dashboard-{campaign}.html
reply artifact(route_call c);       // GET /v1/qualification/campaigns/{path*}

}  // namespace web_routes

}  // namespace tether::api
