#include "runtime/agent/bridge/client.h"

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>

#include "runtime/agent/errors.h"

namespace tether::runtime::agent {

namespace {

tether::error unreachable(const std::filesystem::path& path, const std::string& why) {
  return {agent_errc::bridge_unreachable, "the tool bridge at " + path.string() + " " + why};
}

// A descriptor closed on every path out of exchange().
struct fd_closer {
  explicit fd_closer(int d) : fd(d) {}
  int fd;
  fd_closer(const fd_closer&) = delete;
  fd_closer& operator=(const fd_closer&) = delete;
  ~fd_closer() { ::close(fd); }
};

}  // namespace

bridge_client::bridge_client(std::filesystem::path socket_path, std::string token)
    : socket_path_(std::move(socket_path)), token_(std::move(token)) {}

result<std::string> bridge_client::exchange(const std::string& request_line) const {
  sockaddr_un addr{};
  if (socket_path_.native().size() >= sizeof addr.sun_path) return unreachable(socket_path_, "has too long a path");
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, socket_path_.c_str(), socket_path_.native().size() + 1);
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return unreachable(socket_path_, std::string("needs a socket: ") + std::strerror(errno));
  const fd_closer closer(fd);
  int rc = 0;
  do {
    rc = ::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr);
  } while (rc != 0 && errno == EINTR);
  if (rc != 0) return unreachable(socket_path_, std::string("refuses connections: ") + std::strerror(errno));

  for (std::size_t sent = 0; sent < request_line.size();) {
    const ssize_t n = ::send(fd, request_line.data() + sent, request_line.size() - sent, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return unreachable(socket_path_, std::string("closed the connection: ") + std::strerror(errno));
    sent += static_cast<std::size_t>(n);
  }

  std::string reply;
  std::array<char, std::size_t{64} * 1024U> chunk{};
  for (;;) {
    const ssize_t n = ::recv(fd, chunk.data(), chunk.size(), 0);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return unreachable(socket_path_, std::string("failed while replying: ") + std::strerror(errno));
    if (n == 0) return unreachable(socket_path_, "closed the connection without a reply (is the turn over?)");
    const auto old = reply.size();
    reply.append(chunk.data(), static_cast<std::size_t>(n));
    if (const auto nl = reply.find('\n', old); nl != std::string::npos) {
      reply.resize(nl);
      return reply;
    }
    if (reply.size() > max_reply_bytes) {
      return make_error(agent_errc::bad_reply,
                        "the tool bridge's reply is over " + std::to_string(max_reply_bytes) + " bytes");
    }
  }
}

result<std::variant<std::vector<tool_spec>, protocol::refused>> bridge_client::list() const {
  protocol::request r;
  r.token = token_;
  r.kind = protocol::op::list;
  auto line = exchange(protocol::encode_request(r));
  if (!line) return line.error();
  return protocol::parse_list_reply(*line);
}

result<std::variant<tool_reply, protocol::refused>> bridge_client::call(std::string tool,
                                                                        boost::json::object arguments) const {
  protocol::request r;
  r.token = token_;
  r.kind = protocol::op::call;
  r.tool = std::move(tool);
  r.arguments = std::move(arguments);
  auto line = exchange(protocol::encode_request(r));
  if (!line) return line.error();
  return protocol::parse_call_reply(*line);
}

}  // namespace tether::runtime::agent
