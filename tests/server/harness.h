// End-to-end harness: real `tether mock-llm` and `tether serve` processes on
// free loopback ports with a temporary data directory, driven over HTTP.
//
//   e2e::cluster c;                 // mock-llm + serve, profile default → mock
//   auto s = c.create_session();
//   c.send(s, "Reply with exactly: hi");
//   c.wait_idle(s);
//   c.kill_server(SIGKILL); c.start_server();   // same data directory
#pragma once

#include <sys/types.h>

#include <chrono>
#include <deque>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <boost/json.hpp>

#include "e2e/run/process.h"
#include "http/sse_parser.h"

namespace tether::e2e {

// A child process with its stdout on a pipe and its stderr in a log file
// (e2e::child_process, with exceptions for the tests).
class child {
 public:
  child(const std::vector<std::string>& argv, const std::filesystem::path& log,
        const std::map<std::string, std::string>& env = {});
  ~child();
  child(const child&) = delete;
  child& operator=(const child&) = delete;

  // The first stdout line starting with `prefix` (waits up to `timeout`).
  std::string wait_line(const std::string& prefix, std::chrono::milliseconds timeout);
  // Everything still unread on stdout until the child closes it.
  std::string rest_of_stdout(std::chrono::milliseconds timeout);
  void signal(int sig);
  // Waits for the exit; returns the exit status (or 128+signal).
  int wait(std::chrono::milliseconds timeout = std::chrono::seconds(30));
  [[nodiscard]] pid_t pid() const;
  [[nodiscard]] bool running();

 private:
  std::filesystem::path log_;
  std::unique_ptr<child_process> proc_;
};

struct http_result {
  unsigned status = 0;
  std::string body;
  std::string content_type;
  boost::json::value json;  // null when the body is not JSON
};

// One HTTP/1.1 request on a fresh connection to 127.0.0.1:port, through the
// API client (client::api_client::raw); throws when no answer came.
http_result request(unsigned short port, const std::string& method, const std::string& target,
                    const std::string& body = "", const std::map<std::string, std::string>& headers = {});

struct sse_event {
  std::string id;  // empty for ephemeral events
  std::string type;
  boost::json::value data;
};

// An open SSE connection; frames are parsed as they arrive.
class sse_stream {
 public:
  // receive_buffer > 0: the socket's SO_RCVBUF, set before connecting (a
  // small one makes a reader that does not read fall behind quickly).
  sse_stream(unsigned short port, const std::string& target, const std::string& token,
             const std::map<std::string, std::string>& headers = {}, int receive_buffer = 0);
  ~sse_stream();
  sse_stream(const sse_stream&) = delete;
  sse_stream& operator=(const sse_stream&) = delete;
  // Reads events until `done` returns true for one of them (that one is the
  // last returned) or the timeout passes (then returns what it has).
  std::vector<sse_event> read_until(const std::function<bool(const sse_event&)>& done,
                                    std::chrono::milliseconds timeout);
  [[nodiscard]] unsigned status() const { return status_; }
  [[nodiscard]] std::size_t comments() const { return comments_; }  // heartbeats seen
  [[nodiscard]] bool closed() const { return closed_; }             // the server ended the stream

 private:
  int fd_ = -1;
  unsigned status_ = 0;
  std::string buffer_;  // the response head until it is complete
  http::sse_parser sse_;
  std::deque<http::sse_event> pending_;  // parsed, not yet returned
  std::size_t comments_ = 0;
  bool closed_ = false;
};

// A tether command run to its end: exit status (128+signal; -1 when it was
// still running at the timeout, then it was killed) and its stderr.
struct finished_run {
  int status = -1;
  std::string log;
};
finished_run run_to_exit(const std::vector<std::string>& argv, const std::filesystem::path& log,
                         std::chrono::milliseconds timeout = std::chrono::seconds(30));

class cluster {
 public:
  // Starts mock-llm and serve. `serve_args` are extra flags for serve;
  // `extra_config` is appended to the configuration file (its lines before
  // its first table go first, as top-level keys), every "{mock}" in
  // it replaced by the scripted model's root URL (http://127.0.0.1:PORT).
  explicit cluster(std::vector<std::string> serve_args = {}, const std::string& extra_config = "");
  ~cluster();

  // Starts serve on the cluster's data directory and waits for its
  // "listening on" line (printed once recovery is done).
  void start_server(const std::string& listen = "127.0.0.1:0");
  // The argv of a serve on this cluster's data directory and configuration.
  [[nodiscard]] std::vector<std::string> serve_argv(const std::string& listen) const;
  void kill_server(int sig);  // and waits for it to exit
  [[nodiscard]] unsigned short port() const { return port_; }
  [[nodiscard]] unsigned short mock_port() const { return mock_port_; }
  [[nodiscard]] const std::string& token() const { return token_; }
  [[nodiscard]] const std::filesystem::path& dir() const { return dir_; }
  child& server() { return *server_; }

  http_result call(const std::string& method, const std::string& target, const boost::json::value& body = nullptr);
  http_result call_raw(const std::string& method, const std::string& target, const std::string& body,
                       const std::map<std::string, std::string>& headers = {});

  std::string create_session();
  // POST …/inputs; returns the input object.
  boost::json::object send(const std::string& session, const std::string& text, const std::string& delivery = "steer");
  boost::json::object session(const std::string& s);
  // Polls until the session is idle or waiting with no pending input and no
  // open execution (up to `timeout`); returns the session object.
  boost::json::object wait_idle(const std::string& s, std::chrono::milliseconds timeout = std::chrono::seconds(30));
  // Polls until `pred` holds for GET target's JSON.
  boost::json::value wait_for(const std::string& target, const std::function<bool(const boost::json::value&)>& pred,
                              std::chrono::milliseconds timeout = std::chrono::seconds(30));
  boost::json::array messages(const std::string& s);
  boost::json::array executions(const std::string& s);
  // The scripted model's recorded requests.
  boost::json::array model_requests();
  // The text of the last assistant message.
  std::string last_answer(const std::string& s);

 private:
  std::filesystem::path dir_;
  std::unique_ptr<child> mock_;
  std::unique_ptr<child> server_;
  std::vector<std::string> serve_args_;
  unsigned short port_ = 0;
  unsigned short mock_port_ = 0;
  std::string token_;
  int starts_ = 0;
};

// Where the tether binary is (a compile definition; $TETHER_TEST_BINARY overrides it).
std::string tether_binary();

}  // namespace tether::e2e
