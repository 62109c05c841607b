#include "env/daytona/api.h"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>
#include <boost/json.hpp>

#include "http/client.h"
#include "util/random.h"

namespace tether::env::daytona {

namespace json = boost::json;
namespace net = boost::asio;

namespace {

constexpr const char* sdk_version = "0.218.0";

std::string encode(std::string_view s) {
  static const char* hex = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : s) {
    if (std::isalnum(c) != 0 || c == '-' || c == '_' || c == '.' || c == '~' || c == '/') {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += hex[c >> 4];
      out += hex[c & 15];
    }
  }
  return out;
}

std::string text(const json::object& o, const char* key) {
  const auto* v = o.if_contains(key);
  return v != nullptr && v->is_string() ? std::string(v->as_string()) : std::string();
}

std::int64_t number(const json::object& o, const char* key) {
  const auto* v = o.if_contains(key);
  return v != nullptr && v->is_number() ? v->to_number<std::int64_t>() : 0;
}

sandbox_info sandbox_of(const json::object& o) {
  sandbox_info s;
  s.id = text(o, "id");
  s.name = text(o, "name");
  s.state = text(o, "state");
  s.toolbox_url = text(o, "toolboxProxyUrl");
  if (const auto* l = o.if_contains("labels"); l != nullptr && l->is_object()) {
    for (const auto& [k, v] : l->as_object()) s.labels[k] = v.is_string() ? std::string(v.as_string()) : "";
  }
  s.cpu = number(o, "cpu");
  s.memory = number(o, "memory");
  s.disk = number(o, "disk");
  s.auto_stop = number(o, "autoStopInterval");
  s.auto_archive = number(o, "autoArchiveInterval");
  s.auto_delete = number(o, "autoDeleteInterval");
  return s;
}

session_command command_of(const json::object& o) {
  session_command c;
  c.id = text(o, "id");
  c.command = text(o, "command");
  if (const auto* e = o.if_contains("exitCode"); e != nullptr && e->is_number()) {
    c.exit_code = static_cast<int>(e->to_number<std::int64_t>());
  }
  return c;
}

}  // namespace

struct api::impl {
  explicit impl(api_options options) : o(std::move(options)), client([&] {
    http::http_options h;
    h.ca_file = o.ca_file;
    h.deadlines.first_byte = o.timeout;
    h.deadlines.idle = o.timeout;
    return h;
  }()) {}

  struct reply {
    int status = 0;
    std::string body;
  };

  // One exchange; a transport failure is unreachable.
  result<reply> exchange(const std::string& method, const std::string& url, std::string body,
                         const std::string& content_type, const std::string& what) {
    http::http_request req;
    req.method = method;
    req.url = url;
    req.headers = {{"Authorization", "Bearer " + o.api_key}, {"X-Daytona-SDK-Version", sdk_version},
                   {"X-Daytona-Source", "tether"}, {"Accept", "application/json"}};
    if (!content_type.empty()) req.headers.push_back({"Content-Type", content_type});
    req.body = std::move(body);
    auto out = std::make_shared<reply>();
    http::http_handler h{.on_head = [out](const http::http_response_head& head) { out->status = head.status; },
                         .on_body = [out](std::string_view bytes) {
                           out->body.append(bytes);
                           return http::body_action::more;
                         }};
    net::io_context io;
    auto done = net::co_spawn(io, client.send(std::move(req), std::move(h), {}), net::use_future);
    io.run();
    const auto r = done.get();
    if (r.error) return error(env_errc::unreachable, what + ": Daytona cannot be reached: " + r.message);
    return *out;
  }

  // A reply's status as an error (or nothing for 2xx). `toolbox`: a 409 means
  // the sandbox is no longer started.
  static std::optional<error> failure(const reply& r, const std::string& what, bool toolbox) {
    if (r.status >= 200 && r.status < 300) return std::nullopt;
    std::string message;
    boost::system::error_code ec;
    const auto v = json::parse(r.body, ec);
    if (!ec && v.is_object()) message = text(v.as_object(), "message");
    if (message.empty()) message = r.body.substr(0, 200);
    const std::string said = what + ": " + std::to_string(r.status) + " " + message;
    if (r.status == 401 || r.status == 403) return error(env_errc::refused, said + " (check the API key)");
    if (r.status == 404) return error(env_errc::not_found, said);
    if (toolbox && (r.status == 409 || r.status == 410)) return error(env_errc::lost, said);
    if (r.status == 408 || r.status >= 500) return error(env_errc::unreachable, said);
    return error(env_errc::failed, said);
  }

  result<json::value> call(const std::string& method, const std::string& url, const json::value& body,
                           const std::string& what, bool toolbox = false) {
    auto r = exchange(method, url, body.is_null() ? std::string() : json::serialize(body),
                      body.is_null() ? std::string() : "application/json", what);
    if (!r) return r.error();
    if (auto e = failure(*r, what, toolbox)) return *e;
    if (r->body.empty()) return json::value(nullptr);
    boost::system::error_code ec;
    auto v = json::parse(r->body, ec);
    if (ec) return error(env_errc::failed, what + ": the answer is not JSON");
    return v;
  }

  result<sandbox_info> sandbox_call(const std::string& method, const std::string& path, const json::value& body,
                                    const std::string& what) {
    auto v = call(method, o.api_url + path, body, what);
    if (!v) return v.error();
    if (!v->is_object()) return error(env_errc::failed, what + ": the answer is not a sandbox");
    return sandbox_of(v->as_object());
  }

  std::string toolbox(const sandbox_info& s, const std::string& path) const {
    std::string base = s.toolbox_url;
    if (!base.empty() && base.back() == '/') base.pop_back();
    return base + "/" + encode(s.id) + path;
  }

  api_options o;
  http::http_client client;
};

api::api(api_options o) : impl_(std::make_unique<impl>(std::move(o))) {
  while (!impl_->o.api_url.empty() && impl_->o.api_url.back() == '/') impl_->o.api_url.pop_back();
}
api::~api() = default;

result<sandbox_info> api::create(const create_request& r) {
  json::object body{{"name", r.name}, {"autoStopInterval", r.auto_stop}, {"autoArchiveInterval", r.auto_archive},
                    {"autoDeleteInterval", r.auto_delete}, {"env", json::object{}}};
  json::object labels;
  for (const auto& [k, v] : r.labels) labels[k] = v;
  body["labels"] = std::move(labels);
  if (!r.target.empty()) body["target"] = r.target;
  if (!r.snapshot.empty()) body["snapshot"] = r.snapshot;
  if (!r.image.empty()) body["buildInfo"] = json::object{{"dockerfileContent", "FROM " + r.image + "\n"}};
  if (r.cpu > 0) body["cpu"] = r.cpu;
  if (r.memory > 0) body["memory"] = r.memory;
  if (r.disk > 0) body["disk"] = r.disk;
  return impl_->sandbox_call("POST", "/sandbox", body, "creating sandbox " + r.name);
}

result<std::optional<sandbox_info>> api::get(const std::string& id_or_name) {
  auto s = impl_->sandbox_call("GET", "/sandbox/" + encode(id_or_name), nullptr, "reading sandbox " + id_or_name);
  if (!s && s.error() == env_errc::not_found) return std::optional<sandbox_info>();
  if (!s) return s.error();
  return std::optional<sandbox_info>(std::move(*s));
}

result<std::vector<sandbox_info>> api::list(const std::map<std::string, std::string>& labels) {
  json::object want;
  for (const auto& [k, v] : labels) want[k] = v;
  std::vector<sandbox_info> out;
  std::string cursor;
  for (;;) {
    std::string url = impl_->o.api_url + "/sandbox?labels=" + encode(json::serialize(want));
    if (!cursor.empty()) url += "&cursor=" + encode(cursor);
    auto v = impl_->call("GET", url, nullptr, "listing sandboxes");
    if (!v) return v.error();
    if (!v->is_object() || !v->as_object().contains("items")) return error(env_errc::failed, "listing sandboxes: no items");
    for (const auto& item : v->at("items").as_array()) {
      if (item.is_object()) out.push_back(sandbox_of(item.as_object()));
    }
    const auto* next = v->as_object().if_contains("nextCursor");
    if (next == nullptr || !next->is_string() || next->as_string().empty()) return out;
    cursor = std::string(next->as_string());
  }
}

result<sandbox_info> api::start(const std::string& id) {
  return impl_->sandbox_call("POST", "/sandbox/" + encode(id) + "/start", nullptr, "starting sandbox " + id);
}
result<sandbox_info> api::stop(const std::string& id) {
  return impl_->sandbox_call("POST", "/sandbox/" + encode(id) + "/stop", nullptr, "stopping sandbox " + id);
}
result<sandbox_info> api::archive(const std::string& id) {
  return impl_->sandbox_call("POST", "/sandbox/" + encode(id) + "/archive", nullptr, "archiving sandbox " + id);
}
result<void> api::remove(const std::string& id) {
  auto v = impl_->call("DELETE", impl_->o.api_url + "/sandbox/" + encode(id), nullptr, "deleting sandbox " + id);
  if (!v) return v.error();
  return {};
}

result<exec_result> api::execute(const sandbox_info& s, const std::string& command, std::chrono::seconds timeout,
                                 const std::string& cwd) {
  json::object body{{"command", command}, {"timeout", timeout.count()}};
  if (!cwd.empty()) body["cwd"] = cwd;
  auto v = impl_->call("POST", impl_->toolbox(s, "/process/execute"), body, "running a command in " + s.name, true);
  if (!v) return v.error();
  if (!v->is_object()) return error(env_errc::failed, "running a command: the answer is not an object");
  return exec_result{static_cast<int>(number(v->as_object(), "exitCode")), text(v->as_object(), "result")};
}

result<void> api::create_session(const sandbox_info& s, const std::string& session) {
  auto v = impl_->call("POST", impl_->toolbox(s, "/process/session"), json::object{{"sessionId", session}},
                       "opening session " + session, true);
  if (!v) return v.error();
  return {};
}

result<std::string> api::run_async(const sandbox_info& s, const std::string& session, const std::string& command) {
  auto v = impl_->call("POST", impl_->toolbox(s, "/process/session/" + encode(session) + "/exec"),
                       json::object{{"command", command}, {"runAsync", true}}, "starting a command", true);
  if (!v) return v.error();
  const auto id = v->is_object() ? text(v->as_object(), "cmdId") : std::string();
  if (id.empty()) return error(env_errc::failed, "starting a command: no cmdId in the answer");
  return id;
}

result<session_command> api::command(const sandbox_info& s, const std::string& session, const std::string& id) {
  auto v = impl_->call("GET", impl_->toolbox(s, "/process/session/" + encode(session) + "/command/" + encode(id)),
                       nullptr, "reading command " + id, true);
  if (!v) return v.error();
  if (!v->is_object()) return error(env_errc::failed, "reading command " + id + ": not an object");
  return command_of(v->as_object());
}

result<std::vector<session_command>> api::session_commands(const sandbox_info& s, const std::string& session) {
  auto v = impl_->call("GET", impl_->toolbox(s, "/process/session/" + encode(session)), nullptr,
                       "reading session " + session, true);
  if (!v) return v.error();
  std::vector<session_command> out;
  if (const auto* c = v->is_object() ? v->as_object().if_contains("commands") : nullptr; c != nullptr && c->is_array()) {
    for (const auto& item : c->as_array()) {
      if (item.is_object()) out.push_back(command_of(item.as_object()));
    }
  }
  return out;
}

result<std::pair<std::string, std::string>> api::logs(const sandbox_info& s, const std::string& session,
                                                      const std::string& id) {
  auto v = impl_->call("GET",
                       impl_->toolbox(s, "/process/session/" + encode(session) + "/command/" + encode(id) + "/logs"),
                       nullptr, "reading the output of command " + id, true);
  if (!v) return v.error();
  if (!v->is_object()) return error(env_errc::failed, "reading the output of command " + id + ": not an object");
  return std::pair<std::string, std::string>(text(v->as_object(), "stdout"), text(v->as_object(), "stderr"));
}

result<void> api::input(const sandbox_info& s, const std::string& session, const std::string& id,
                        const std::string& data) {
  auto v = impl_->call("POST",
                       impl_->toolbox(s, "/process/session/" + encode(session) + "/command/" + encode(id) + "/input"),
                       json::object{{"data", data}}, "sending input to command " + id, true);
  if (!v) return v.error();
  return {};
}

result<void> api::upload(const sandbox_info& s, const std::string& path, const std::string& bytes) {
  const std::string boundary = "tether-" + random_hex(12);
  std::string body = "--" + boundary + "\r\nContent-Disposition: form-data; name=\"files[0].path\"\r\n\r\n" + path +
                     "\r\n--" + boundary +
                     "\r\nContent-Disposition: form-data; name=\"files[0].file\"; filename=\"upload\"\r\n"
                     "Content-Type: application/octet-stream\r\n\r\n";
  body += bytes;
  body += "\r\n--" + boundary + "--\r\n";
  auto r = impl_->exchange("POST", impl_->toolbox(s, "/files/bulk-upload"), std::move(body),
                           "multipart/form-data; boundary=" + boundary, "uploading " + path);
  if (!r) return r.error();
  if (auto e = impl::failure(*r, "uploading " + path, true)) return *e;
  return {};
}

result<std::string> api::download(const sandbox_info& s, const std::string& path) {
  auto r = impl_->exchange("GET", impl_->toolbox(s, "/files/download?path=" + encode(path)), {}, {},
                           "downloading " + path);
  if (!r) return r.error();
  if (auto e = impl::failure(*r, "downloading " + path, true)) return *e;
  return std::move(r->body);
}

result<std::optional<file_info>> api::info(const sandbox_info& s, const std::string& path) {
  auto v = impl_->call("GET", impl_->toolbox(s, "/files/info?path=" + encode(path)), nullptr, "stat " + path, true);
  if (!v && v.error() == env_errc::not_found) return std::optional<file_info>();
  if (!v) return v.error();
  if (!v->is_object()) return error(env_errc::failed, "stat " + path + ": not an object");
  const auto& o = v->as_object();
  file_info f;
  f.directory = o.contains("isDir") && o.at("isDir").is_bool() && o.at("isDir").as_bool();
  f.size = static_cast<std::uint64_t>(number(o, "size"));
  f.permissions = text(o, "permissions");
  return std::optional<file_info>(f);
}

}  // namespace tether::env::daytona
