#include "server/harness.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <random>
#include <stdexcept>
#include <thread>

#include "client/client.h"
#include "support/loopback.h"

namespace tether::e2e {

namespace fs = std::filesystem;
namespace json = boost::json;
using namespace std::chrono_literals;
using steady = std::chrono::steady_clock;

// $TETHER_TEST_BINARY runs the same tests against another build (e.g. an
// older one, to see a test fail without its fix).
std::string tether_binary() {
  const char* other = std::getenv("TETHER_TEST_BINARY");
  return other != nullptr && *other != '\0' ? std::string(other) : std::string(TETHER_BINARY);
}

// ---- child ----

child::child(const std::vector<std::string>& argv, const fs::path& log, const std::map<std::string, std::string>& env)
    : log_(log) {
  auto p = child_process::start(argv, log, env);
  if (!p) throw std::runtime_error(p.error().message);
  proc_ = std::move(*p);
}

child::~child() = default;

std::string child::wait_line(const std::string& prefix, std::chrono::milliseconds timeout) {
  auto line = proc_->wait_line(prefix, timeout);
  if (!line) {
    // Why it never said so: how it ended, and the end of its log.
    std::string why = line.error().message;
    if (!proc_->running()) why += " (" + std::to_string(proc_->wait(0ms).value_or(-1)) + ")";
    std::ifstream in(log_);
    std::string said((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (said.size() > 4096) said = "…" + said.substr(said.size() - 4096);
    throw std::runtime_error(why + "; its log " + log_.string() + ":\n" + said);
  }
  return *line;
}

std::string child::rest_of_stdout(std::chrono::milliseconds timeout) { return proc_->rest_of_stdout(timeout); }

void child::signal(int sig) { proc_->signal(sig); }

bool child::running() { return proc_->running(); }

int child::wait(std::chrono::milliseconds timeout) { return proc_->wait(timeout).value_or(-1); }

pid_t child::pid() const { return proc_->pid(); }

// ---- HTTP ----

namespace {

int connect_to(unsigned short port, int receive_buffer = 0) {
  const int fd = test::connect_loopback(port, receive_buffer);
  if (fd < 0) throw std::runtime_error("cannot connect to 127.0.0.1:" + std::to_string(port));
  return fd;
}

void send_all(int fd, const std::string& data) {
  std::size_t off = 0;
  while (off < data.size()) {
    const auto n = ::send(fd, data.data() + off, data.size() - off, MSG_NOSIGNAL);
    if (n <= 0) return;
    off += static_cast<std::size_t>(n);
  }
}

// The event stream's request (its socket is the harness's own: tests set its
// receive buffer before connecting).
std::string request_text(const std::string& target, const std::map<std::string, std::string>& headers) {
  std::string req = "GET " + target + " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n";
  for (const auto& [k, v] : headers) req += k + ": " + v + "\r\n";
  return req + "\r\n";
}

}  // namespace

http_result request(unsigned short port, const std::string& method, const std::string& target, const std::string& body,
                    const std::map<std::string, std::string>& headers) {
  client::client_options o;
  o.server = "http://127.0.0.1:" + std::to_string(port);
  std::vector<client::header_field> fields;
  for (const auto& [k, v] : headers) fields.push_back({k, v});
  auto raw = client::api_client(o).raw(method, target, body, fields);
  if (!raw) throw std::runtime_error(method + " " + target + ": " + raw.error().message);
  http_result r;
  r.status = static_cast<unsigned>(raw->status);
  r.content_type = raw->header("content-type");
  r.body = std::move(raw->body);
  boost::system::error_code ec;
  r.json = json::parse(r.body, ec);
  if (ec) r.json = nullptr;
  return r;
}

// ---- SSE ----

sse_stream::sse_stream(unsigned short port, const std::string& target, const std::string& token,
                       const std::map<std::string, std::string>& headers, int receive_buffer) {
  fd_ = connect_to(port, receive_buffer);
  auto h = headers;
  h["Accept"] = "text/event-stream";
  h["Authorization"] = "Bearer " + token;
  send_all(fd_, request_text(target, h));
}

sse_stream::~sse_stream() {
  if (fd_ >= 0) ::close(fd_);
}

std::vector<sse_event> sse_stream::read_until(const std::function<bool(const sse_event&)>& done,
                                              std::chrono::milliseconds timeout) {
  std::vector<sse_event> out;
  const auto deadline = steady::now() + timeout;
  for (;;) {
    if (status_ == 0) {
      const auto end = buffer_.find("\r\n\r\n");
      if (end != std::string::npos) {
        status_ = static_cast<unsigned>(std::stoi(buffer_.substr(9, 3)));
        buffer_.erase(0, end + 4);
      }
    }
    if (status_ != 0 && !buffer_.empty()) {
      // The body is the event stream itself (Connection: close, no chunking).
      for (auto& ev : sse_.feed(buffer_)) pending_.push_back(std::move(ev));
      buffer_.clear();
      comments_ = sse_.comments();
    }
    while (!pending_.empty()) {
      auto ev = std::move(pending_.front());
      pending_.pop_front();
      if (ev.event.empty()) continue;
      sse_event e;
      if (ev.own_id) e.id = ev.id;  // ephemeral events carry none
      e.type = std::move(ev.event);
      e.data = json::parse(ev.data);
      out.push_back(std::move(e));
      if (done(out.back())) return out;
    }
    if (status_ != 0 && status_ != 200) return out;
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - steady::now()).count();
    if (left <= 0) return out;
    pollfd p{fd_, POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(left)) <= 0) continue;
    char buf[65536];
    const auto n = ::recv(fd_, buf, sizeof buf, 0);
    if (n <= 0) {
      closed_ = true;
      return out;
    }
    buffer_.append(buf, static_cast<std::size_t>(n));
  }
}

finished_run run_to_exit(const std::vector<std::string>& argv, const fs::path& log,
                         std::chrono::milliseconds timeout) {
  finished_run out;
  {
    const std::map<std::string, std::string> env{{"NO_PROXY", "127.0.0.1"}, {"no_proxy", "127.0.0.1"}};
    child c(argv, log, env);
    out.status = c.wait(timeout);
  }
  std::ifstream in(log);
  out.log.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  return out;
}

// ---- cluster ----

cluster::cluster(std::vector<std::string> serve_args, const std::string& extra_config)
    : serve_args_(std::move(serve_args)) {
  std::random_device rd;
  dir_ = fs::temp_directory_path() / ("tether-e2e-" + std::to_string(rd()));
  fs::create_directories(dir_);
  mock_ = std::make_unique<child>(std::vector<std::string>{tether_binary(), "mock-llm", "--listen", "127.0.0.1:0"},
                                  dir_ / "mock.log");
  const auto line = mock_->wait_line("mock-llm listening on ", 20s);
  mock_port_ = static_cast<unsigned short>(std::stoi(line.substr(line.rfind(':') + 1)));
  std::string extra = extra_config;
  const std::string root = "http://127.0.0.1:" + std::to_string(mock_port_);
  for (auto at = extra.find("{mock}"); at != std::string::npos; at = extra.find("{mock}", at + root.size()))
    extra.replace(at, 6, root);
  // Top-level keys (the lines before the first table) go before the tables.
  const auto first_table = extra.starts_with("[") ? 0 : extra.find("\n[");
  const std::string top = first_table == std::string::npos ? extra : extra.substr(0, first_table);
  std::ofstream cfg(dir_ / "tether.toml");
  cfg << top << "\n[profiles.default]\nprovider = \"openai-chat\"\nbase_url = \"http://127.0.0.1:" << mock_port_
      << "/v1\"\nmodel = \"scripted\"\n";
  if (first_table != std::string::npos) cfg << extra.substr(first_table);
  cfg.close();
  start_server();
}

cluster::~cluster() {
  server_.reset();
  mock_.reset();
  std::error_code ec;
  if (std::getenv("TETHER_E2E_KEEP") == nullptr) fs::remove_all(dir_, ec);
}

std::vector<std::string> cluster::serve_argv(const std::string& listen) const {
  std::vector<std::string> argv{
      tether_binary(), "serve",  "--data", (dir_ / "data").string(), "--config", (dir_ / "tether.toml").string(),
      "--listen",      listen};
  argv.insert(argv.end(), serve_args_.begin(), serve_args_.end());
  return argv;
}

void cluster::start_server(const std::string& listen) {
  const auto argv = serve_argv(listen);
  // The model is on loopback: never through a proxy of the environment.
  const std::map<std::string, std::string> env{{"NO_PROXY", "127.0.0.1"}, {"no_proxy", "127.0.0.1"}};
  server_ = std::make_unique<child>(argv, dir_ / ("serve-" + std::to_string(starts_++) + ".log"), env);
  const auto line = server_->wait_line("listening on ", 20s);
  port_ = static_cast<unsigned short>(std::stoi(line.substr(line.rfind(':') + 1)));
  std::ifstream in(dir_ / "data" / "token");
  std::getline(in, token_);
}

void cluster::kill_server(int sig) {
  server_->signal(sig);
  server_->wait();
}

http_result cluster::call(const std::string& method, const std::string& target, const json::value& body) {
  return call_raw(method, target, body.is_null() ? std::string() : json::serialize(body));
}

http_result cluster::call_raw(const std::string& method, const std::string& target, const std::string& body,
                              const std::map<std::string, std::string>& headers) {
  auto h = headers;
  if (!h.contains("Authorization")) h["Authorization"] = "Bearer " + token_;
  return request(port_, method, target, body, h);
}

std::string cluster::create_session() {
  auto r = call("POST", "/v1/sessions", json::object{});
  if (r.status != 201) throw std::runtime_error("create session: " + std::to_string(r.status) + " " + r.body);
  return std::string(r.json.at("session").at("id").as_string());
}

json::object cluster::send(const std::string& s, const std::string& text, const std::string& delivery) {
  json::object body;
  body["text"] = text;
  body["delivery"] = delivery;
  auto r = call("POST", "/v1/sessions/" + s + "/inputs", body);
  if (r.status != 202) throw std::runtime_error("send: " + std::to_string(r.status) + " " + r.body);
  return r.json.at("input").as_object();
}

json::object cluster::session(const std::string& s) {
  auto r = call("GET", "/v1/sessions/" + s);
  if (r.status != 200) throw std::runtime_error("session: " + std::to_string(r.status) + " " + r.body);
  return r.json.at("session").as_object();
}

json::value cluster::wait_for(const std::string& target, const std::function<bool(const json::value&)>& pred,
                              std::chrono::milliseconds timeout) {
  const auto deadline = steady::now() + timeout;
  json::value last;
  while (steady::now() < deadline) {
    auto r = call("GET", target);
    if (r.status == 200) {
      last = r.json;
      if (pred(last)) return last;
    }
    std::this_thread::sleep_for(20ms);
  }
  // What the server said last (its log), so a timeout in CI explains itself.
  std::string tail;
  if (starts_ > 0) {
    std::ifstream in(dir_ / ("serve-" + std::to_string(starts_ - 1) + ".log"), std::ios::binary);
    const std::string log((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    tail = log.substr(log.size() > 4000 ? log.size() - 4000 : 0);
  }
  throw std::runtime_error("timed out waiting on " + target + "; last: " + json::serialize(last) +
                           "\nthe server's log ends:\n" + tail);
}

json::object cluster::wait_idle(const std::string& s, std::chrono::milliseconds timeout) {
  auto v = wait_for(
      "/v1/sessions/" + s,
      [](const json::value& v) {
        const auto& o = v.at("session").as_object();
        return o.at("status").as_string() != "running" && o.at("pending_inputs").as_int64() == 0;
      },
      timeout);
  return v.at("session").as_object();
}

json::array cluster::messages(const std::string& s) {
  auto r = call("GET", "/v1/sessions/" + s + "/messages");
  if (r.status != 200) throw std::runtime_error("messages: " + r.body);
  return r.json.at("messages").as_array();
}

json::array cluster::executions(const std::string& s) {
  auto r = call("GET", "/v1/sessions/" + s + "/executions");
  if (r.status != 200) throw std::runtime_error("executions: " + r.body);
  return r.json.at("executions").as_array();
}

json::array cluster::model_requests() {
  auto r = request(mock_port_, "GET", "/_mock/requests?after=0");
  if (r.status != 200) throw std::runtime_error("mock requests: " + r.body);
  if (r.json.is_array()) return r.json.as_array();
  return r.json.at("requests").as_array();
}

std::string cluster::last_answer(const std::string& s) {
  const auto msgs = messages(s);
  for (auto it = msgs.rbegin(); it != msgs.rend(); ++it)
    if (it->at("role").as_string() == "assistant" && !it->at("text").as_string().empty())
      return std::string(it->at("text").as_string());
  return "";
}

}  // namespace tether::e2e
