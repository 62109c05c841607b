#include "support/daytona/fake_daytona.h"

#include <sys/stat.h>
#include <unistd.h>

#include <ctime>
#include <fstream>
#include <iterator>
#include <map>
#include <mutex>
#include <optional>
#include <thread>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/use_future.hpp>
#include <boost/json.hpp>

#include "http/server_shell.h"
#include "support/daytona/sandbox.h"
#include "support/daytona/wire.h"
#include "util/random.h"

namespace tether::test::daytona {

namespace fs = std::filesystem;
namespace net = boost::asio;
namespace json = boost::json;
namespace bhttp = boost::beast::http;
using namespace std::chrono_literals;

namespace {

std::string now_iso() {
  const auto t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  ::gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S.000Z", &tm);
  return buf;
}

std::string uuid() {
  const auto h = random_hex(16);
  return h.substr(0, 8) + "-" + h.substr(8, 4) + "-" + h.substr(12, 4) + "-" + h.substr(16, 4) + "-" + h.substr(20);
}

std::string percent_decode(std::string_view s) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && i + 2 < s.size()) {
      out += static_cast<char>(std::stoi(std::string(s.substr(i + 1, 2)), nullptr, 16));
      i += 2;
    } else {
      out += s[i] == '+' ? ' ' : s[i];
    }
  }
  return out;
}

std::vector<std::string> split_path(std::string_view path) {
  std::vector<std::string> parts;
  std::size_t at = 0;
  while (at < path.size()) {
    const auto slash = path.find('/', at);
    const auto end = slash == std::string_view::npos ? path.size() : slash;
    if (end > at) parts.push_back(percent_decode(path.substr(at, end - at)));
    at = end + 1;
  }
  return parts;
}

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

struct session_state {
  std::map<std::string, std::shared_ptr<command>> commands;
  std::vector<std::string> order;
};

struct sandbox {
  std::string id, name, state = "started", target = "us", snapshot, created, updated;
  json::object labels, env;
  std::int64_t cpu = 1, memory = 1, disk = 3;
  std::int64_t auto_stop = 15, auto_archive = 10080, auto_delete = -1;
  fs::path root;
  std::map<std::string, session_state> sessions;
  namespaces ns;

  // Every process of the sandbox ends (its namespaces with them).
  void kill_all() {
    for (auto& [sid, s] : sessions) {
      for (auto& [cid, c] : s.commands) c->kill();
    }
    ns.stop();
  }
};

json::object error_body(unsigned status, const std::string& message, const std::string& path) {
  return {{"statusCode", status}, {"message", message}, {"error", status == 404 ? "Not Found" : "Error"},
          {"path", path}, {"timestamp", now_iso()}};
}

// What a handler answers: a status and JSON (or raw bytes), or a prepared reply.
http::reply answer(const http::request& req, unsigned status, const json::value& body) {
  http::response r{static_cast<bhttp::status>(status), req.version()};
  r.set(bhttp::field::content_type, "application/json");
  r.keep_alive(req.keep_alive());
  if (status != 204 && !(status == 201 && body.is_null())) r.body() = json::serialize(body);
  r.prepare_payload();
  return {.message = std::move(r)};
}

http::reply raw(const http::request& req, unsigned status, std::string content_type, std::string body) {
  http::response r{static_cast<bhttp::status>(status), req.version()};
  r.set(bhttp::field::content_type, content_type);
  r.keep_alive(req.keep_alive());
  r.body() = std::move(body);
  r.prepare_payload();
  return {.message = std::move(r)};
}

json::object file_info(const fs::path& host, const std::string& inside) {
  struct stat st {};
  ::lstat(host.c_str(), &st);
  char perms[8];
  std::snprintf(perms, sizeof perms, "%04o", st.st_mode & 07777);
  const std::string modified = now_iso();
  return {{"name", host.filename().string()}, {"path", inside}, {"isDir", S_ISDIR(st.st_mode)},
          {"size", static_cast<std::int64_t>(st.st_size)}, {"mode", perms}, {"permissions", perms},
          {"owner", "daytona"}, {"group", "daytona"}, {"modifiedAt", modified}, {"modTime", modified}};
}

// A followed command log as a WebSocket: the upgrade, what is logged so far
// and then what comes, as binary frames, then a Close with 1000 once the
// command ended (or the connection cut after `drop_after` bytes).
net::awaitable<http::after_stream> follow_logs(std::shared_ptr<http::stream> s, std::shared_ptr<command> cmd,
                                               std::string accept, std::size_t drop_after) {
  const std::string head = "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                           "Sec-WebSocket-Accept: " + accept + "\r\n\r\n";
  auto ec = co_await s->write(head, 10s);
  if (ec) co_return http::after_stream::close;
  std::size_t offset = 0;
  for (;;) {
    auto next = cmd->log_from(offset);
    std::string bytes = std::move(next.first);
    const bool done = next.second;
    if (!bytes.empty()) {
      if (offset + bytes.size() > drop_after) {
        bytes.resize(drop_after - offset);
        if (!bytes.empty()) (void)co_await s->write(websocket_frame(0x2, bytes), 10s);
        s->close();
        co_return http::after_stream::close;
      }
      offset += bytes.size();
      ec = co_await s->write(websocket_frame(0x2, bytes), 10s);
      if (ec) co_return http::after_stream::close;
      continue;
    }
    if (done) {
      (void)co_await s->write(websocket_close(1000), 5s);
      co_return http::after_stream::close;
    }
    const bool open = co_await s->pause(20ms);
    if (!open) co_return http::after_stream::close;
  }
}

}  // namespace

struct fake_daytona::impl : http::routes {
  fake_options o;
  fs::path dir;
  bool own_dir = false;
  mutable std::mutex mu;
  std::map<std::string, std::shared_ptr<sandbox>> by_id;
  faults f;
  std::vector<std::string> seen;
  net::io_context io{4};
  std::unique_ptr<http::server_shell> shell;
  std::vector<std::thread> threads;
  std::uint16_t port = 0;
  std::atomic<bool> stopped{false};

  std::shared_ptr<sandbox> find(const std::string& id_or_name) const {
    if (auto it = by_id.find(id_or_name); it != by_id.end()) return it->second;
    for (const auto& [id, s] : by_id) {
      if (s->name == id_or_name) return s;
    }
    return nullptr;
  }

  json::object dto(const sandbox& s) const {
    return {{"id", s.id}, {"organizationId", "fake-organization"}, {"name", s.name}, {"user", "daytona"},
            {"env", s.env}, {"labels", s.labels}, {"public", false}, {"networkBlockAll", false},
            {"target", s.target}, {"cpu", s.cpu}, {"gpu", 0}, {"memory", s.memory}, {"disk", s.disk},
            {"snapshot", s.snapshot}, {"state", s.state}, {"desiredState", s.state == "destroyed" ? "destroyed" : s.state},
            {"autoStopInterval", s.auto_stop}, {"autoArchiveInterval", s.auto_archive},
            {"autoDeleteInterval", s.auto_delete}, {"createdAt", s.created}, {"updatedAt", s.updated},
            {"sandboxClass", "container"}, {"daemonVersion", "fake"},
            {"toolboxProxyUrl", "http://127.0.0.1:" + std::to_string(port) + "/toolbox"}};
  }

  void note(std::string what) {
    std::lock_guard lock(mu);
    seen.push_back(std::move(what));
  }

  net::awaitable<http::reply> handle(http::request req, http::request_info) override {
    const std::string target(req.target());
    const auto q = target.find('?');
    const std::string path = target.substr(0, q);
    std::map<std::string, std::string> query;
    if (q != std::string::npos) {
      std::string_view rest(target);
      rest.remove_prefix(q + 1);
      while (!rest.empty()) {
        const auto amp = rest.find('&');
        const auto pair = rest.substr(0, amp);
        const auto eq = pair.find('=');
        query[percent_decode(pair.substr(0, eq))] = eq == std::string_view::npos ? "" : percent_decode(pair.substr(eq + 1));
        rest = amp == std::string_view::npos ? std::string_view() : rest.substr(amp + 1);
      }
    }
    const auto parts = split_path(path);
    if (!parts.empty() && parts[0] == "_fake") co_return fake_route(req, parts);
    if (req[bhttp::field::authorization] != "Bearer " + o.api_key) {
      co_return answer(req, 401, error_body(401, "Unauthorized", path));
    }
    faults now;
    {
      std::lock_guard lock(mu);
      now = f;
      if (f.fail_next > 0) --f.fail_next;
      if (f.create_silently && req.method() == bhttp::verb::post && parts.size() == 2 && parts[1] == "sandbox") {
        f.create_silently = false;
      }
    }
    if (now.latency.count() > 0) {
      net::steady_timer t(co_await net::this_coro::executor);
      t.expires_after(now.latency);
      co_await t.async_wait(net::use_awaitable);
    }
    if (now.fail_next > 0) co_return answer(req, now.fail_status, error_body(now.fail_status, "injected failure", path));
    if (parts.size() >= 2 && parts[0] == "api" && parts[1] == "sandbox") {
      co_return api_route(req, std::vector<std::string>(parts.begin() + 1, parts.end()), query, path,
                          now.create_silently);
    }
    if (parts.size() >= 3 && parts[0] == "toolbox") {
      co_return toolbox_route(req, parts[1], std::vector<std::string>(parts.begin() + 2, parts.end()), query, path,
                              now.drop_logs_after);
    }
    co_return answer(req, 404, error_body(404, "no such route", path));
  }

  http::reply fake_route(const http::request& req, const std::vector<std::string>& parts) {
    if (parts.size() == 2 && parts[1] == "faults" && req.method() == bhttp::verb::post) {
      boost::system::error_code ec;
      auto v = json::parse(req.body(), ec);
      if (ec || !v.is_object()) return answer(req, 400, error_body(400, "a JSON object", "/_fake/faults"));
      const auto& o = v.as_object();
      std::lock_guard lock(mu);
      if (auto* n = o.if_contains("fail_next")) f.fail_next = static_cast<int>(n->to_number<std::int64_t>());
      if (auto* n = o.if_contains("fail_status")) f.fail_status = static_cast<unsigned>(n->to_number<std::int64_t>());
      if (auto* n = o.if_contains("latency_ms")) f.latency = std::chrono::milliseconds(n->to_number<std::int64_t>());
      if (auto* n = o.if_contains("create_silently")) f.create_silently = n->as_bool();
      if (auto* n = o.if_contains("drop_logs_after")) f.drop_logs_after = n->to_number<std::size_t>();
      return answer(req, 204, nullptr);
    }
    if (parts.size() == 2 && parts[1] == "requests") {
      json::array a;
      std::lock_guard lock(mu);
      for (const auto& s : seen) a.emplace_back(s);
      return answer(req, 200, a);
    }
    return answer(req, 404, error_body(404, "no such fake route", "/_fake"));
  }

  http::reply api_route(const http::request& req, const std::vector<std::string>& p,
                        const std::map<std::string, std::string>& query, const std::string& path, bool silently) {
    const auto m = req.method();
    if (p.size() == 1 && m == bhttp::verb::post) {
      note("POST /sandbox");
      return create(req, path, silently);
    }
    if (p.size() == 1 && m == bhttp::verb::get) {
      note("GET /sandbox");
      return list(req, query);
    }
    std::lock_guard lock(mu);
    auto s = find(p[1]);
    const std::string which = p.size() == 2 ? "" : "/" + p[2];
    if (p.size() == 3 && p[2] == "toolbox-proxy-url") {
      seen.push_back("GET /sandbox/{sandboxId}/toolbox-proxy-url");
    } else if (p.size() == 4) {
      seen.push_back(std::string(req.method_string()) + " /sandbox/{sandboxIdOrName}/" + p[2] + "/{interval}");
    } else {
      seen.push_back(std::string(req.method_string()) + " /sandbox/{sandboxIdOrName}" + which);
    }
    if (!s) return answer(req, 404, error_body(404, "Sandbox with ID or name " + p[1] + " not found", path));
    s->updated = now_iso();
    if (p.size() == 2 && m == bhttp::verb::get) return answer(req, 200, dto(*s));
    if (p.size() == 2 && m == bhttp::verb::delete_) {
      s->kill_all();
      s->state = "destroying";
      auto body = dto(*s);
      std::error_code ec;
      fs::remove_all(s->root, ec);
      by_id.erase(s->id);
      return answer(req, 200, body);
    }
    if (p.size() == 3 && m == bhttp::verb::post && p[2] == "start") {
      if (auto r = s->ns.start(s->root, o.read_only); !r) return answer(req, 500, error_body(500, r.error().message, path));
      s->state = "started";
      return answer(req, 200, dto(*s));
    }
    if (p.size() == 3 && m == bhttp::verb::post && p[2] == "stop") {
      if (s->state != "started") return answer(req, 400, error_body(400, "Sandbox is not started", path));
      s->kill_all();
      s->sessions.clear();
      s->state = "stopped";
      return answer(req, 200, dto(*s));
    }
    if (p.size() == 3 && m == bhttp::verb::post && p[2] == "archive") {
      if (s->state != "stopped") return answer(req, 400, error_body(400, "Sandbox is not stopped", path));
      s->state = "archived";
      return answer(req, 200, dto(*s));
    }
    if (p.size() == 3 && m == bhttp::verb::get && p[2] == "toolbox-proxy-url") {
      return answer(req, 200, json::object{{"url", "http://127.0.0.1:" + std::to_string(port) + "/toolbox"}});
    }
    if (p.size() == 3 && m == bhttp::verb::put && p[2] == "labels") {
      boost::system::error_code ec;
      auto v = json::parse(req.body(), ec);
      if (ec || !v.is_object() || !v.as_object().contains("labels") || !v.at("labels").is_object()) {
        return answer(req, 400, error_body(400, "labels must be an object", path));
      }
      s->labels = v.at("labels").as_object();
      return answer(req, 200, json::object{{"labels", s->labels}});
    }
    if (p.size() == 4 && m == bhttp::verb::post) {
      const auto n = std::stoll(p[3]);
      if (p[2] == "autostop") s->auto_stop = n;
      else if (p[2] == "autoarchive") s->auto_archive = n;
      else if (p[2] == "autodelete") s->auto_delete = n;
      else return answer(req, 404, error_body(404, "no such route", path));
      return answer(req, 200, dto(*s));
    }
    return answer(req, 404, error_body(404, "no such route", path));
  }

  http::reply create(const http::request& req, const std::string& path, bool silently) {
    boost::system::error_code ec;
    auto v = req.body().empty() ? json::value(json::object{}) : json::parse(req.body(), ec);
    if (ec || !v.is_object()) return answer(req, 400, error_body(400, "the body must be a JSON object", path));
    const auto& b = v.as_object();
    auto s = std::make_shared<sandbox>();
    s->id = uuid();
    s->name = b.contains("name") && b.at("name").is_string() ? std::string(b.at("name").as_string()) : s->id;
    auto text = [&](const char* k, std::string& into) {
      if (auto* x = b.if_contains(k); x != nullptr && x->is_string()) into = std::string(x->as_string());
    };
    auto number = [&](const char* k, std::int64_t& into) {
      if (auto* x = b.if_contains(k); x != nullptr && x->is_number()) into = x->to_number<std::int64_t>();
    };
    text("target", s->target);
    text("snapshot", s->snapshot);
    number("cpu", s->cpu);
    number("memory", s->memory);
    number("disk", s->disk);
    number("autoStopInterval", s->auto_stop);
    number("autoArchiveInterval", s->auto_archive);
    number("autoDeleteInterval", s->auto_delete);
    if (auto* x = b.if_contains("labels"); x != nullptr && x->is_object()) s->labels = x->as_object();
    if (auto* x = b.if_contains("env"); x != nullptr && x->is_object()) s->env = x->as_object();
    s->created = s->updated = now_iso();
    s->root = dir / s->id;
    std::error_code fec;
    fs::create_directories(s->root / "home/daytona", fec);
    fs::create_directories(s->root / "tmp", fec);
    if (fec) return answer(req, 500, error_body(500, "cannot make the sandbox: " + fec.message(), path));
    if (auto r = s->ns.start(s->root, o.read_only); !r) return answer(req, 500, error_body(500, r.error().message, path));
    std::lock_guard lock(mu);
    if (find(s->name)) {
      fs::remove_all(s->root, fec);
      return answer(req, 409, error_body(409, "Sandbox with name " + s->name + " already exists", path));
    }
    by_id[s->id] = s;
    if (silently) return {};  // made, and the connection closed unanswered
    return answer(req, 200, dto(*s));
  }

  http::reply list(const http::request& req, const std::map<std::string, std::string>& query) {
    json::object want;
    if (auto it = query.find("labels"); it != query.end() && !it->second.empty()) {
      boost::system::error_code ec;
      auto v = json::parse(it->second, ec);
      if (ec || !v.is_object()) return answer(req, 400, error_body(400, "labels must be a JSON object", "/api/sandbox"));
      want = v.as_object();
    }
    const auto prefix = query.contains("name") ? query.at("name") : std::string();
    json::array items;
    std::lock_guard lock(mu);
    for (const auto& [id, s] : by_id) {
      bool match = s->name.rfind(prefix, 0) == 0;
      for (const auto& [k, v] : want) match = match && s->labels.contains(k) && s->labels.at(k) == v;
      if (!match) continue;
      auto d = dto(*s);
      d.erase("env");
      items.push_back(std::move(d));
    }
    return answer(req, 200, json::object{{"items", std::move(items)}, {"nextCursor", nullptr}});
  }

  http::reply toolbox_route(const http::request& req, const std::string& id, const std::vector<std::string>& p,
                            const std::map<std::string, std::string>& query, const std::string& path,
                            std::size_t drop_after) {
    std::shared_ptr<sandbox> s;
    {
      std::lock_guard lock(mu);
      s = find(id);
    }
    std::string route = "/" + p[0];
    if (p[0] == "process" && p.size() >= 2 && p[1] == "session") {
      route = "/process/session";
      if (p.size() >= 3) route += "/{sessionId}";
      if (p.size() == 4) route += "/" + p[3];
      if (p.size() >= 5) route += "/command/{commandId}";
      if (p.size() == 6) route += "/" + p[5];
    } else {
      for (std::size_t i = 1; i < p.size(); ++i) route += "/" + p[i];
    }
    note(std::string(req.method_string()) + " " + route);
    if (!s) return answer(req, 404, error_body(404, "Sandbox " + id + " not found", path));
    {
      std::lock_guard lock(mu);
      if (s->state != "started") return answer(req, 409, error_body(409, "Sandbox is " + s->state, path));
    }
    if (p[0] == "process") return process_route(req, *s, p, route, query, path, drop_after);
    if (p[0] == "files") return files_route(req, *s, p, query, path);
    return answer(req, 404, error_body(404, "no such route", path));
  }

  http::reply process_route(const http::request& req, sandbox& s, const std::vector<std::string>& p,
                            const std::string& route, const std::map<std::string, std::string>& query,
                            const std::string& path, std::size_t drop_after) {
    const auto m = req.method();
    boost::system::error_code ec;
    json::value body = req.body().empty() ? json::value(json::object{}) : json::parse(req.body(), ec);
    if (ec) return answer(req, 400, error_body(400, "the body is not JSON", path));
    if (route == "/process/execute" && m == bhttp::verb::post) {
      if (!body.is_object() || !body.as_object().contains("command")) {
        return answer(req, 400, error_body(400, "command is required", path));
      }
      std::map<std::string, std::string> envs;
      if (auto* e = body.as_object().if_contains("envs"); e != nullptr && e->is_object()) {
        for (const auto& [k, v] : e->as_object()) envs[k] = v.is_string() ? std::string(v.as_string()) : "";
      }
      std::string cwd;
      if (auto* c = body.as_object().if_contains("cwd"); c != nullptr && c->is_string()) cwd = c->as_string();
      const auto timeout = body.as_object().contains("timeout") ? body.at("timeout").to_number<std::int64_t>() : 0;
      auto cmd = std::make_shared<command>("exec", std::string(body.at("command").as_string()));
      if (!cmd->start(s.ns.argv(envs, cwd, cmd->text()))) {
        return answer(req, 200, json::object{{"exitCode", -1}, {"result", "cannot start"}});
      }
      if (!cmd->wait(timeout > 0 ? std::chrono::milliseconds(timeout * 1000) : std::chrono::milliseconds(600'000))) {
        cmd->kill();
        return answer(req, 408, error_body(408, "command timed out", path));
      }
      return answer(req, 200, json::object{{"exitCode", *cmd->exit_code()}, {"result", cmd->out() + cmd->err()}});
    }
    std::lock_guard lock(mu);
    if (route == "/process/session" && m == bhttp::verb::post) {
      const auto sid = body.is_object() && body.as_object().contains("sessionId")
                           ? std::string(body.at("sessionId").as_string()) : std::string();
      if (sid.empty()) return answer(req, 400, error_body(400, "sessionId is required", path));
      if (s.sessions.contains(sid)) return answer(req, 409, error_body(409, "session exists", path));
      s.sessions[sid];
      return answer(req, 201, nullptr);
    }
    if (route == "/process/session" && m == bhttp::verb::get) {
      json::array all;
      for (const auto& [sid, st] : s.sessions) all.push_back(session_dto(sid, st));
      return answer(req, 200, all);
    }
    const auto sit = p.size() >= 3 ? s.sessions.find(p[2]) : s.sessions.end();
    if (sit == s.sessions.end()) return answer(req, 404, error_body(404, "session not found", path));
    auto& session = sit->second;
    if (route == "/process/session/{sessionId}" && m == bhttp::verb::get) {
      return answer(req, 200, session_dto(sit->first, session));
    }
    if (route == "/process/session/{sessionId}" && m == bhttp::verb::delete_) {
      for (auto& [cid, c] : session.commands) c->kill();
      s.sessions.erase(sit);
      return answer(req, 204, nullptr);
    }
    if (route == "/process/session/{sessionId}/exec" && m == bhttp::verb::post) {
      if (!body.is_object() || !body.as_object().contains("command")) {
        return answer(req, 400, error_body(400, "command is required", path));
      }
      const auto& b = body.as_object();
      const bool async = (b.contains("runAsync") && b.at("runAsync").as_bool()) ||
                         (b.contains("async") && b.at("async").as_bool());
      auto cmd = std::make_shared<command>(uuid(), std::string(b.at("command").as_string()));
      if (!cmd->start(s.ns.argv({}, "", cmd->text()))) {
        return answer(req, 500, error_body(500, "cannot start the command", path));
      }
      session.commands[cmd->id()] = cmd;
      session.order.push_back(cmd->id());
      if (async) return answer(req, 202, json::object{{"cmdId", cmd->id()}});
      mu.unlock();
      cmd->wait(600'000ms);
      mu.lock();
      return answer(req, 200, json::object{{"cmdId", cmd->id()}, {"output", cmd->out() + cmd->err()},
                                           {"stdout", cmd->out()}, {"stderr", cmd->err()},
                                           {"exitCode", *cmd->exit_code()}});
    }
    const auto cit = p.size() >= 5 ? session.commands.find(p[4]) : session.commands.end();
    if (cit == session.commands.end()) return answer(req, 404, error_body(404, "command not found", path));
    auto cmd = cit->second;
    if (route == "/process/session/{sessionId}/command/{commandId}" && m == bhttp::verb::get) {
      return answer(req, 200, command_dto(*cmd));
    }
    if (route == "/process/session/{sessionId}/command/{commandId}/logs" && m == bhttp::verb::get) {
      const bool follow = query.contains("follow") && query.at("follow") == "true";
      if (follow && boost::beast::iequals(req[bhttp::field::upgrade], "websocket")) {
        http::reply r;
        const auto accept = websocket_accept(req[bhttp::field::sec_websocket_key]);
        r.streamer = [cmd, accept, drop_after](std::shared_ptr<http::stream> st) {
          return follow_logs(std::move(st), cmd, accept, drop_after);
        };
        return r;
      }
      return answer(req, 200, json::object{{"output", cmd->out() + cmd->err()}, {"stdout", cmd->out()},
                                           {"stderr", cmd->err()}});
    }
    if (route == "/process/session/{sessionId}/command/{commandId}/input" && m == bhttp::verb::post) {
      const auto data = body.is_object() && body.as_object().contains("data") ? std::string(body.at("data").as_string())
                                                                              : std::string();
      if (!cmd->input(data)) return answer(req, 410, error_body(410, "COMMAND_ALREADY_COMPLETED", path));
      return answer(req, 204, nullptr);
    }
    return answer(req, 404, error_body(404, "no such route", path));
  }

  static json::object command_dto(const command& c) {
    json::object o{{"id", c.id()}, {"command", c.text()}};
    if (auto code = c.exit_code()) o["exitCode"] = *code;
    return o;
  }
  static json::object session_dto(const std::string& sid, const session_state& st) {
    json::array commands;
    for (const auto& cid : st.order) commands.push_back(command_dto(*st.commands.at(cid)));
    return {{"sessionId", sid}, {"commands", std::move(commands)}};
  }

  http::reply files_route(const http::request& req, sandbox& s, const std::vector<std::string>& p,
                          const std::map<std::string, std::string>& query, const std::string& path) {
    const auto m = req.method();
    const std::string what = p.size() >= 2 ? p[1] : "";
    const auto q = [&](const char* k) { return query.contains(k) ? query.at(k) : std::string(); };
    if (what == "bulk-upload" && m == bhttp::verb::post) {
      auto parts = parse_multipart(req[bhttp::field::content_type], req.body());
      if (!parts) return answer(req, 400, error_body(400, "not a multipart body", path));
      std::map<std::string, std::string> dest;  // index -> path
      json::array done;
      for (const auto& part : *parts) {
        const auto dot = part.name.rfind('.');
        if (part.name.rfind("files[", 0) != 0 || dot == std::string::npos) continue;
        const auto index = part.name.substr(0, dot);
        if (part.name.substr(dot + 1) == "path") {
          dest[index] = part.body;
          continue;
        }
        if (!dest.contains(index)) return answer(req, 400, error_body(400, part.name + " before its path", path));
        auto host = host_path(s.root, dest[index]);
        if (!host) return answer(req, 400, error_body(400, "path outside the sandbox: " + dest[index], path));
        std::error_code ec;
        fs::create_directories(host->parent_path(), ec);
        std::ofstream out(*host, std::ios::binary | std::ios::trunc);
        out << part.body;
        out.close();
        if (!out) return answer(req, 400, error_body(400, "cannot write " + dest[index], path));
        done.push_back(json::object{{"path", dest[index]}, {"bytes", part.body.size()}});
      }
      return answer(req, 200, json::object{{"files", std::move(done)}});
    }
    if (what == "bulk-download" && m == bhttp::verb::post) {
      boost::system::error_code ec;
      auto v = json::parse(req.body(), ec);
      if (ec || !v.is_object() || !v.as_object().contains("paths") || !v.at("paths").is_array() ||
          v.at("paths").as_array().empty()) {
        return answer(req, 400, error_body(400, "paths is required", path));
      }
      std::vector<part> parts;
      for (const auto& item : v.at("paths").as_array()) {
        const std::string inside(item.as_string());
        auto host = host_path(s.root, inside);
        if (host && fs::is_regular_file(*host)) {
          parts.push_back({"file", inside, "application/octet-stream", read_file(*host)});
        } else {
          parts.push_back({"error", inside, "application/json",
                           json::serialize(json::object{{"message", "file not found: " + inside},
                                                        {"statusCode", 404}, {"code", "FILE_NOT_FOUND"}})});
        }
      }
      return raw(req, 200, "multipart/form-data; boundary=DAYTONA-FILE-BOUNDARY",
                 write_multipart("DAYTONA-FILE-BOUNDARY", parts));
    }
    auto host = host_path(s.root, q("path"));
    if (!host) return answer(req, 400, error_body(400, "path outside the sandbox: " + q("path"), path));
    std::error_code ec;
    if (what == "info" && m == bhttp::verb::get) {
      if (!fs::exists(fs::symlink_status(*host, ec))) return answer(req, 404, error_body(404, "file not found", path));
      return answer(req, 200, file_info(*host, q("path")));
    }
    if (what == "download" && m == bhttp::verb::get) {
      if (!fs::is_regular_file(*host)) return answer(req, 404, error_body(404, "file not found", path));
      return raw(req, 200, "application/octet-stream", read_file(*host));
    }
    if (what == "upload-v2" && m == bhttp::verb::post) {
      std::string data = req.body();
      if (auto parts = parse_multipart(req[bhttp::field::content_type], req.body())) {
        for (const auto& part : *parts) {
          if (part.name == "file") data = part.body;
        }
      }
      fs::create_directories(host->parent_path(), ec);
      std::ofstream(*host, std::ios::binary | std::ios::trunc) << data;
      return answer(req, 200, json::object{{"name", host->filename().string()}, {"path", q("path")}, {"type", "file"}});
    }
    if (what.empty() && m == bhttp::verb::get) {
      json::array all;
      for (const auto& e : fs::directory_iterator(*host, ec)) all.push_back(file_info(e.path(), q("path") + "/" + e.path().filename().string()));
      if (ec) return answer(req, 404, error_body(404, "not a directory", path));
      return answer(req, 200, all);
    }
    if (what.empty() && m == bhttp::verb::delete_) {
      if (q("recursive") == "true") {
        fs::remove_all(*host, ec);
      } else {
        fs::remove(*host, ec);
      }
      if (ec) return answer(req, 400, error_body(400, ec.message(), path));
      return answer(req, 204, nullptr);
    }
    return answer(req, 404, error_body(404, "no such route", path));
  }

  http::response too_large(const http::request& head, std::size_t limit) override {
    http::response r{bhttp::status::payload_too_large, head.version()};
    r.body() = json::serialize(error_body(413, "over " + std::to_string(limit) + " bytes", std::string(head.target())));
    r.prepare_payload();
    return r;
  }
  http::response malformed(unsigned status, std::string message) override {
    http::response r{static_cast<bhttp::status>(status), 11};
    r.body() = json::serialize(error_body(status, message, ""));
    r.prepare_payload();
    return r;
  }
};

fake_daytona::fake_daytona(fake_options o) : impl_(std::make_shared<impl>()) { impl_->o = std::move(o); }

fake_daytona::~fake_daytona() { stop(); }

result<void> fake_daytona::start() {
  auto& i = *impl_;
  if (i.o.dir.empty()) {
    std::string t = "/tmp/tether-daytona-XXXXXX";
    if (::mkdtemp(t.data()) == nullptr) return error(std::make_error_code(std::errc::io_error), "mkdtemp failed");
    i.dir = t;
    i.own_dir = true;
  } else {
    i.dir = i.o.dir;
    std::error_code ec;
    fs::create_directories(i.dir, ec);
  }
  http::shell_options so;
  so.listen = i.o.listen;
  so.name = "daytona-fake";
  so.max_body_bytes = 512U << 20U;
  so.request_timeout = 120s;
  i.shell = std::make_unique<http::server_shell>(i.io.get_executor(), so, impl_);
  if (auto r = i.shell->start(); !r) return r.error();
  i.port = i.shell->port();
  for (int t = 0; t < 4; ++t) i.threads.emplace_back([this] { impl_->io.run(); });
  return {};
}

void fake_daytona::stop() {
  auto& i = *impl_;
  if (i.stopped.exchange(true) || !i.shell) return;
  {
    std::lock_guard lock(i.mu);
    for (auto& [id, s] : i.by_id) s->kill_all();
  }
  net::co_spawn(i.io, i.shell->stop(), net::use_future).wait();
  for (auto& t : i.threads) {
    if (t.joinable()) t.join();
  }
  std::lock_guard lock(i.mu);
  i.by_id.clear();
  if (i.own_dir) {
    std::error_code ec;
    fs::remove_all(i.dir, ec);
  }
}

std::uint16_t fake_daytona::port() const { return impl_->port; }
std::string fake_daytona::api_url() const { return "http://127.0.0.1:" + std::to_string(impl_->port) + "/api"; }

void fake_daytona::set_faults(faults f) {
  std::lock_guard lock(impl_->mu);
  impl_->f = f;
}

std::vector<std::string> fake_daytona::requests() const {
  std::lock_guard lock(impl_->mu);
  return impl_->seen;
}

fs::path fake_daytona::sandbox_root(const std::string& id_or_name) const {
  std::lock_guard lock(impl_->mu);
  auto s = impl_->find(id_or_name);
  return s ? s->root : fs::path();
}

std::string fake_daytona::state_of(const std::string& id_or_name) const {
  std::lock_guard lock(impl_->mu);
  auto s = impl_->find(id_or_name);
  return s ? s->state : std::string();
}

std::size_t fake_daytona::sandboxes() const {
  std::lock_guard lock(impl_->mu);
  return impl_->by_id.size();
}

}  // namespace tether::test::daytona
