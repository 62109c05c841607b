#include "api/openapi.h"

#include "api/handler.h"
#include "api/routes.h"
#include "api/views.h"
#include "api/web_auth.h"
#include "api/web_routes.h"
#include "api/work_routes.h"
#include "api/work_views.h"

#include <algorithm>
#include <cctype>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <string_view>

#include <gtest/gtest.h>
#include <boost/json.hpp>

namespace tether::api {
namespace {

namespace json = boost::json;

// The documented routes of the server's one route table (api/routes.h), with
// their methods as OpenAPI spells them.
std::map<std::string, std::set<std::string>> api_routes() {
  std::map<std::string, std::set<std::string>> routes;
  for (const auto& r : route_table()) {
    if (!r.unlisted.empty()) continue;
    std::string method(r.method);
    std::transform(method.begin(), method.end(), method.begin(), [](unsigned char c) { return std::tolower(c); });
    routes[std::string(r.pattern)].insert(method);
  }
  return routes;
}

const std::set<std::string> http_methods = {"get", "put", "post", "delete", "options", "head", "patch", "trace"};

json::object document() {
  boost::system::error_code ec;
  json::value v = json::parse(openapi_document(), ec);
  EXPECT_FALSE(ec) << ec.message();
  EXPECT_TRUE(v.is_object());
  return v.is_object() ? v.as_object() : json::object{};
}

const json::object& paths_of(const json::object& doc) { return doc.at("paths").as_object(); }

TEST(OpenApi, TheDocumentIsOpenApi31Json) {
  const auto doc = document();
  ASSERT_TRUE(doc.contains("openapi"));
  EXPECT_TRUE(std::string_view(doc.at("openapi").as_string()).starts_with("3.1"));
  EXPECT_TRUE(doc.contains("info"));
}

TEST(OpenApi, EveryRouteOfTheApiIsDocumentedWithExactlyItsMethods) {
  const auto doc = document();
  const auto& paths = paths_of(doc);
  std::map<std::string, std::set<std::string>> documented;
  for (const auto& [path, item] : paths) {
    auto& methods = documented[std::string(path)];
    for (const auto& [key, op] : item.as_object()) {
      if (!http_methods.contains(std::string(key))) continue;
      methods.insert(std::string(key));
      EXPECT_FALSE(op.as_object().at("responses").as_object().empty()) << path << " " << key;
    }
  }
  EXPECT_EQ(documented, api_routes());  // both ways: nothing served undocumented, nothing documented unserved
}

TEST(OpenApi, TheTableCoversTheApiAndEveryUnlistedRouteSaysWhy) {
  const auto routes = api_routes();
  EXPECT_GE(routes.size(), 30U);  // the table is the server's, not an empty one
  std::size_t unlisted = 0;
  for (const auto& r : route_table()) {
    EXPECT_NE(r.handle, nullptr) << r.pattern;
    if (!r.unlisted.empty()) ++unlisted;
    // Each method and pattern once: a second row would never be reached.
    EXPECT_EQ(std::count_if(route_table().begin(), route_table().end(),
                            [&](const route& o) { return o.method == r.method && o.pattern == r.pattern; }),
              1)
        << r.method << " " << r.pattern;
  }
  EXPECT_EQ(unlisted, 6U);  // /, /ui/, /ui/{file}, the dashboard's alias, a campaign's page, its artifacts
}

TEST(OpenApi, EveryRouteButHealthAndSignInNeedsTheBearerTokenOrTheCookie) {
  const auto doc = document();
  const auto& scheme = doc.at("components").at("securitySchemes").at("bearer").as_object();
  EXPECT_EQ(scheme.at("type"), "http");
  EXPECT_EQ(scheme.at("scheme"), "bearer");
  const auto& cookie = doc.at("components").at("securitySchemes").at("cookie").as_object();
  EXPECT_EQ(cookie.at("in"), "cookie");
  EXPECT_EQ(cookie.at("name").as_string(), session_cookie_name);
  const json::array& global = doc.at("security").as_array();
  std::set<std::string> open;  // what the table serves without the token
  for (const auto& r : route_table())
    if (r.who != access::token && r.unlisted.empty()) open.insert(std::string(r.pattern));
  EXPECT_EQ(open, (std::set<std::string>{"/v1/health", "/v1/auth/login", "/v1/auth/session"}));
  for (const auto& [path, item] : paths_of(doc)) {
    for (const auto& [key, op] : item.as_object()) {
      if (!http_methods.contains(std::string(key))) continue;
      const auto* own = op.as_object().if_contains("security");
      const json::array& effective = own != nullptr ? own->as_array() : global;
      if (open.contains(path)) {
        EXPECT_TRUE(effective.empty()) << path;
      } else {
        ASSERT_EQ(effective.size(), 2U) << path << " " << key;
        EXPECT_TRUE(effective[0].as_object().contains("bearer")) << path << " " << key;
        EXPECT_TRUE(effective[1].as_object().contains("cookie")) << path << " " << key;
      }
    }
  }
}

TEST(OpenApi, StreamingRoutesAnswerWithAnEventStream) {
  const auto doc = document();
  for (const char* path : {"/v1/sessions/{id}/events", "/v1/events"}) {
    const auto& ok = paths_of(doc).at(path).at("get").at("responses").at("200").as_object();
    EXPECT_TRUE(ok.at("content").as_object().contains("text/event-stream")) << path;
    EXPECT_NE(std::string_view(ok.at("description").as_string()).find(": heartbeat"), std::string_view::npos) << path;
  }
}

TEST(OpenApi, TheApiObjectsHaveSchemasAndEveryReferenceResolves) {
  const auto doc = document();
  const auto& schemas = doc.at("components").at("schemas").as_object();
  for (const char* name : {"session", "input", "message", "execution", "interaction", "event", "error"})
    EXPECT_TRUE(schemas.contains(name)) << name;

  const json::value whole(doc);
  int refs = 0;
  std::function<void(const json::value&)> walk = [&](const json::value& v) {
    if (v.is_array()) {
      for (const auto& e : v.as_array()) walk(e);
      return;
    }
    if (!v.is_object()) return;
    for (const auto& [key, child] : v.as_object()) {
      if (key == "$ref" && child.is_string()) {
        ++refs;
        std::string_view pointer = child.as_string();
        ASSERT_TRUE(pointer.starts_with("#")) << pointer;
        boost::system::error_code ec;
        EXPECT_NE(whole.find_pointer(pointer.substr(1), ec), nullptr) << pointer;
      } else {
        walk(child);
      }
    }
  };
  walk(doc);
  EXPECT_GT(refs, 0);
}

TEST(OpenApi, RequestBodiesRefuseUnknownFieldsAndNameExactlyTheFieldsTheServerAccepts) {
  const auto doc = document();
  const auto& schemas = doc.at("components").at("schemas").as_object();
  auto names = [](auto fields) { return std::set<std::string>(fields.begin(), fields.end()); };
  const std::map<std::string, std::set<std::string>> accepted = {
      {"create_session_request", names(create_session_fields)},
      {"create_input_request", names(create_input_fields)},
      {"answer_request", names(answer_fields)},
      {"create_project_request", names(create_project_fields)},
      {"update_project_request", names(update_project_fields)},
      {"create_task_request", names(create_task_fields)},
      {"update_task_request", names(update_task_fields)},
      {"create_comment_request", names(create_comment_fields)},
      {"write_plan_request", names(write_plan_fields)},
      {"reject_request", names(reject_fields)},
      {"confirmation_answer_request", names(confirmation_answer_fields)},
      {"login_request", names(login_fields)},
  };
  for (const auto& [schema, fields] : accepted) {
    const auto& s = schemas.at(schema).as_object();
    EXPECT_EQ(s.at("additionalProperties"), false) << schema;
    std::set<std::string> documented;
    for (const auto& [key, v] : s.at("properties").as_object()) documented.insert(std::string(key));
    EXPECT_EQ(documented, fields) << schema;
  }
}

TEST(OpenApi, EveryPostDocuments415AndEveryRoute431And503) {
  const auto doc = document();
  const auto& codes = doc.at("components")
                          .at("schemas")
                          .at("error")
                          .at("properties")
                          .at("error")
                          .at("properties")
                          .at("code")
                          .at("enum")
                          .as_array();
  EXPECT_NE(std::find(codes.begin(), codes.end(), json::value("unsupported_media_type")), codes.end());
  EXPECT_NE(std::find(codes.begin(), codes.end(), json::value("payload_too_large")), codes.end())
      << "the code the server sends for 413";
  EXPECT_NE(std::find(codes.begin(), codes.end(), json::value("headers_too_large")), codes.end())
      << "the code the server sends for 431";
  for (const auto& [path, item] : paths_of(doc)) {
    for (const auto& [key, op] : item.as_object()) {
      if (!http_methods.contains(std::string(key))) continue;
      const auto& responses = op.at("responses").as_object();
      EXPECT_TRUE(responses.contains("503")) << path << " " << key << ": over the connection limits";
      EXPECT_TRUE(responses.contains("431")) << path << " " << key << ": a request head over the limit";
      if (key == "post") {
        EXPECT_TRUE(responses.contains("415")) << path;
      }
    }
  }
}

std::set<std::string> properties_of(const json::object& doc, const char* schema) {
  std::set<std::string> out;
  for (const auto& [key, v] : doc.at("components").at("schemas").at(schema).at("properties").as_object())
    out.insert(std::string(key));
  return out;
}

std::set<std::string> keys_of(const json::object& o) {
  std::set<std::string> out;
  for (const auto& [key, v] : o) out.insert(std::string(key));
  return out;
}

TEST(OpenApi, SessionsAndExecutionsNameTheRuntimeThatRanThem) {
  const auto doc = document();
  for (const char* schema : {"session", "execution"}) {
    const auto& required = doc.at("components").at("schemas").at(schema).at("required").as_array();
    EXPECT_NE(std::find(required.begin(), required.end(), json::value("runtime")), required.end()) << schema;
  }
  store::execution_row x;
  x.id = execution_id::generate();
  x.session = session_id::generate();
  x.runtime = "native";
  const auto view = execution_view(x);
  EXPECT_EQ(view.at("runtime"), "native");
  EXPECT_EQ(keys_of(view), properties_of(doc, "execution"));
}

TEST(OpenApi, AToolCallShowsItsKindAndExactlyTheFieldsOfItsSchema) {
  const auto doc = document();
  const auto& kinds = doc.at("components").at("schemas").at("tool_call").at("properties").at("kind").at("enum");
  EXPECT_EQ(kinds, (json::array{"local", "hosted", "agent"}));
  store::message_row call;
  call.seq = event_seq{1};
  call.role = store::message_role::tool_call;
  call.id = call_id::generate().str();
  call.tool = "exec";
  call.call_kind = model::tool_kind::agent;
  const auto messages = messages_view({call});
  ASSERT_EQ(messages.size(), 1U);
  const auto& shown = messages[0].at("tool_calls").at(0).as_object();
  EXPECT_EQ(shown.at("kind"), "agent");
  EXPECT_EQ(shown.at("hosted"), false);
  EXPECT_EQ(keys_of(shown), properties_of(doc, "tool_call"));
}

TEST(OpenApi, TheWorkLayerViewsShowExactlyTheFieldsOfTheirSchemas) {
  const auto doc = document();
  store::task_row t;
  t.id = task_id::generate();
  t.session = session_id::generate();
  EXPECT_EQ(keys_of(task_view(t)), properties_of(doc, "task"));
  store::project_row p;
  p.id = project_id::generate();
  p.repositories = {{.url = "/srv/a", .name = "a", .primary = true}};
  EXPECT_EQ(keys_of(project_view(p)), properties_of(doc, "project"));
  EXPECT_EQ(keys_of(project_view(p).at("repositories").at(0).as_object()), properties_of(doc, "repository"));
  store::revision_row r;
  r.id = revision_id::generate();
  EXPECT_EQ(keys_of(revision_view(r)), properties_of(doc, "revision"));
  store::comment_row c;
  c.id = comment_id::generate();
  EXPECT_EQ(keys_of(comment_view(c)), properties_of(doc, "comment"));
  work::task_detail d;
  d.task = t;
  EXPECT_EQ(keys_of(task_detail_view(d)), properties_of(doc, "task_detail"));
}

}  // namespace
}  // namespace tether::api
