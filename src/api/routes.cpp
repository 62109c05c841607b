#include "api/routes.h"

#include <array>

#include "api/session_routes.h"
#include "api/web_routes.h"
#include "api/work_routes.h"

namespace tether::api {

namespace {

namespace s = session_routes;
namespace web = web_routes;
namespace work = work_routes;

constexpr auto anyone = access::open;
constexpr auto sign_in = access::sign_in;
constexpr auto token = access::token;

constexpr std::string_view interface_file = "the web interface's files, not the API";

// clang-format off
constexpr std::array table{
    route{"GET",    "/v1/health",                                  anyone,  &s::health},
    route{"GET",    "/metrics",                                    token,   &s::prometheus},
    route{"GET",    "/v1/openapi.json",                            token,   &s::openapi},
    route{"GET",    "/v1/events",                                  token,   &s::all_events},
    route{"GET",    "/v1/sessions",                                token,   &s::list},
    route{"POST",   "/v1/sessions",                                token,   &s::create},
    route{"GET",    "/v1/sessions/{id}",                           token,   &s::get},
    route{"GET",    "/v1/sessions/{id}/inputs",                    token,   &s::inputs},
    route{"POST",   "/v1/sessions/{id}/inputs",                    token,   &s::admit},
    route{"DELETE", "/v1/sessions/{id}/inputs/{iid}",              token,   &s::cancel},
    route{"POST",   "/v1/sessions/{id}/interrupt",                 token,   &s::interrupt},
    route{"POST",   "/v1/sessions/{id}/reset",                     token,   &s::reset},
    route{"POST",   "/v1/sessions/{id}/fork",                      token,   &s::fork},
    route{"POST",   "/v1/sessions/{id}/resume",                    token,   &s::resume},
    route{"GET",    "/v1/sessions/{id}/messages",                  token,   &s::messages},
    route{"GET",    "/v1/sessions/{id}/events",                    token,   &s::events},
    route{"GET",    "/v1/sessions/{id}/executions",                token,   &s::executions},
    route{"GET",    "/v1/sessions/{id}/interactions",              token,   &s::interactions},
    route{"POST",   "/v1/interactions/{id}/answer",                token,   &s::answer},

    route{"GET",    "/v1/projects",                                token,   &work::list_projects},
    route{"POST",   "/v1/projects",                                token,   &work::create_project},
    route{"GET",    "/v1/projects/{id}",                           token,   &work::get_project},
    route{"PATCH",  "/v1/projects/{id}",                           token,   &work::update_project},
    route{"GET",    "/v1/tasks",                                   token,   &work::list_tasks},
    route{"POST",   "/v1/tasks",                                   token,   &work::create_task},
    route{"GET",    "/v1/tasks/{id}",                              token,   &work::get_task},
    route{"PATCH",  "/v1/tasks/{id}",                              token,   &work::update_task},
    route{"POST",   "/v1/tasks/{id}/messages",                     token,   &work::send_message},
    route{"POST",   "/v1/tasks/{id}/comments",                     token,   &work::add_comment},
    route{"GET",    "/v1/tasks/{id}/plan",                         token,   &work::plan},
    route{"POST",   "/v1/tasks/{id}/plan",                         token,   &work::write_plan},
    route{"POST",   "/v1/tasks/{id}/approve",                      token,   &work::approve},
    route{"POST",   "/v1/tasks/{id}/reject",                       token,   &work::reject},

    route{"GET",    "/",                                           anyone,  &web::root,      interface_file},
    route{"GET",    "/ui/",                                        anyone,  &web::interface, interface_file},
    route{"GET",    "/ui/{file*}",                                 anyone,  &web::file,      interface_file},
    route{"POST",   "/v1/auth/login",                              sign_in, &web::login},
    route{"GET",    "/v1/auth/session",                            sign_in, &web::signed_in},
    route{"POST",   "/v1/auth/logout",                             token,   &web::logout},
    route{"GET",    "/v1/profiles",                                token,   &web::profiles},
    route{"GET",    "/v1/qualification",                           token,   &web::qualification},
    route{"GET",    "/v1/qualification/dashboard",                 token,   &web::dashboard},
    route{"GET",    "/v1/qualification/dashboard.html",            token,   &web::dashboard,
          "an alias of /v1/qualification/dashboard"},
    route{"GET",    "/v1/qualification/dashboard-{campaign}.html", token,   &web::campaign_page,
          "a campaign's page, as the dashboard links it (documented as ?campaign= of the dashboard)"},
    route{"GET",    "/v1/qualification/campaigns/{path*}",         token,   &web::artifact,
          "a campaign's artifact files, any depth under campaigns/"},
};
// clang-format on

// The next segment of `pattern` (its leading slashes skipped), or empty at its end.
std::string_view next_segment(std::string_view& pattern) {
  while (!pattern.empty() && pattern.front() == '/') pattern.remove_prefix(1);
  const auto slash = pattern.find('/');
  const auto seg = pattern.substr(0, slash);
  pattern.remove_prefix(seg.size());
  return seg;
}

// Whether `parts` has the shape of `pattern`; what its {…} matched goes to `params`.
bool matches(std::string_view pattern, const std::vector<std::string_view>& parts, std::vector<std::string>& params) {
  params.clear();
  std::size_t i = 0;
  for (auto seg = next_segment(pattern); !seg.empty(); seg = next_segment(pattern)) {
    const auto open_brace = seg.find('{');
    if (open_brace == std::string_view::npos) {
      if (i == parts.size() || parts[i] != seg) return false;
      ++i;
      continue;
    }
    if (seg.ends_with("*}")) {  // the rest of the path, one or more segments
      if (i == parts.size()) return false;
      for (; i < parts.size(); ++i) params.emplace_back(parts[i]);
      return true;
    }
    if (i == parts.size()) return false;
    const auto prefix = seg.substr(0, open_brace);
    const auto suffix = seg.substr(seg.find('}') + 1);
    const auto part = parts[i];
    if (part.size() <= prefix.size() + suffix.size() || !part.starts_with(prefix) || !part.ends_with(suffix))
      return false;
    params.emplace_back(part.substr(prefix.size(), part.size() - prefix.size() - suffix.size()));
    ++i;
  }
  return i == parts.size();
}

}  // namespace

std::span<const route> route_table() { return table; }

route_match match_route(std::string_view method, std::string_view target) {
  const auto parts = split_path(target);
  route_match m;
  std::vector<std::string> params;
  for (const auto& r : table) {
    if (!matches(r.pattern, parts, params)) continue;
    m.path_who = r.who;
    if (!m.allowed.empty()) m.allowed += " or ";
    m.allowed += r.method;
    if (m.found == nullptr && r.method == method) {
      m.found = &r;
      m.params = std::move(params);
    }
  }
  return m;
}

}  // namespace tether::api
