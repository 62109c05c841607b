#include "runtime/agent/bridge/client.h"

#include <netdb.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <string_view>

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

constexpr std::string_view tcp_prefix = "tcp:";

// A connected descriptor: "tcp:HOST:PORT" over TCP, anything else a Unix socket's path.
result<int> connect_to(const std::filesystem::path& where) {
  const std::string& text = where.native();
  if (text.rfind(tcp_prefix, 0) == 0) {
    const std::string hostport = text.substr(tcp_prefix.size());
    const auto colon = hostport.rfind(':');
    if (colon == std::string::npos || colon == 0 || colon + 1 == hostport.size())
      return unreachable(where, "is not tcp:HOST:PORT");
    const std::string host = hostport.substr(0, colon);
    const std::string port = hostport.substr(colon + 1);
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    addrinfo* found = nullptr;
    if (const int rc = ::getaddrinfo(host.c_str(), port.c_str(), &hints, &found); rc != 0)
      return unreachable(where, std::string("cannot be resolved: ") + ::gai_strerror(rc));
    std::string why = "has no address";
    for (const addrinfo* a = found; a != nullptr; a = a->ai_next) {
      const int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
      if (fd < 0) continue;
      int rc = 0;
      do {
        rc = ::connect(fd, a->ai_addr, a->ai_addrlen);
      } while (rc != 0 && errno == EINTR);
      if (rc == 0) {
        ::freeaddrinfo(found);
        return fd;
      }
      why = std::string("refuses connections: ") + std::strerror(errno);
      ::close(fd);
    }
    ::freeaddrinfo(found);
    return unreachable(where, why);
  }
  sockaddr_un addr{};
  if (text.size() >= sizeof addr.sun_path) return unreachable(where, "has too long a path");
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, text.c_str(), text.size() + 1);
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return unreachable(where, std::string("needs a socket: ") + std::strerror(errno));
  int rc = 0;
  do {
    rc = ::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr);
  } while (rc != 0 && errno == EINTR);
  if (rc != 0) {
    const std::string why = std::string("refuses connections: ") + std::strerror(errno);
    ::close(fd);
    return unreachable(where, why);
  }
  return fd;
}

}  // namespace

bridge_client::bridge_client(std::filesystem::path socket_path, std::string token)
    : socket_path_(std::move(socket_path)), token_(std::move(token)) {}

result<std::string> bridge_client::exchange(const std::string& request_line) const {
  auto connected = connect_to(socket_path_);
  if (!connected) return connected.error();
  const int fd = *connected;
  const fd_closer closer(fd);

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
