#include "runtime/native/providers/loopback.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cctype>
#include <cstdio>
#include <stdexcept>

namespace tether::runtime::native::testing {

namespace {

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(a[i])) != std::tolower(static_cast<unsigned char>(b[i]))) return false;
  return true;
}

bool send_all(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    const auto n = ::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL);
    if (n <= 0) return false;
    bytes.remove_prefix(static_cast<std::size_t>(n));
  }
  return true;
}

std::string chunk(std::string_view piece) {
  char size[32];
  std::snprintf(size, sizeof size, "%zx\r\n", piece.size());
  return std::string(size) + std::string(piece) + "\r\n";
}

// Copies bytes both ways until either side closes.
void pump(int a, int b) {
  char buf[16384];
  pollfd fds[2] = {{a, POLLIN, 0}, {b, POLLIN, 0}};
  for (;;) {
    if (::poll(fds, 2, 10'000) <= 0) return;
    for (int i = 0; i < 2; ++i) {
      if ((fds[i].revents & (POLLIN | POLLHUP | POLLERR)) == 0) continue;
      const auto n = ::recv(fds[i].fd, buf, sizeof buf, 0);
      if (n <= 0 || !send_all(fds[1 - i].fd, std::string_view(buf, static_cast<std::size_t>(n)))) return;
    }
  }
}

}  // namespace

int listen_loopback(std::uint16_t& port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) throw std::runtime_error("socket");
  const int one = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || ::listen(fd, 16) != 0)
    throw std::runtime_error("bind/listen");
  socklen_t len = sizeof addr;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  port = ntohs(addr.sin_port);
  return fd;
}

int connect_loopback(std::uint16_t port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(port);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

std::string received_request::header(std::string_view name) const {
  for (const auto& [k, v] : headers)
    if (iequals(k, name)) return v;
  return {};
}

bool received_request::has_header(std::string_view name) const {
  for (const auto& [k, v] : headers)
    if (iequals(k, name)) return true;
  return false;
}

std::optional<received_request> read_request(int fd, std::string* raw_head) {
  std::string data;
  char buf[8192];
  std::size_t head_end = std::string::npos;
  while ((head_end = data.find("\r\n\r\n")) == std::string::npos) {
    const auto n = ::recv(fd, buf, sizeof buf, 0);
    if (n <= 0) return std::nullopt;
    data.append(buf, static_cast<std::size_t>(n));
  }
  received_request r;
  const std::string head = data.substr(0, head_end);
  if (raw_head != nullptr) *raw_head = data.substr(0, head_end + 4);
  std::size_t pos = head.find("\r\n");
  const std::string line = head.substr(0, pos);
  const auto sp1 = line.find(' ');
  const auto sp2 = line.find(' ', sp1 + 1);
  r.method = line.substr(0, sp1);
  r.target = line.substr(sp1 + 1, sp2 - sp1 - 1);
  while (pos != std::string::npos && pos < head.size()) {
    const auto next = head.find("\r\n", pos + 2);
    const std::string h = head.substr(pos + 2, next == std::string::npos ? std::string::npos : next - pos - 2);
    if (const auto colon = h.find(':'); colon != std::string::npos) {
      std::string v = h.substr(colon + 1);
      while (!v.empty() && v.front() == ' ') v.erase(0, 1);
      r.headers.emplace_back(h.substr(0, colon), v);
    }
    pos = next;
  }
  std::size_t length = 0;
  if (auto cl = r.header("content-length"); !cl.empty()) length = std::stoul(cl);
  r.body = data.substr(head_end + 4);
  while (r.body.size() < length) {
    const auto n = ::recv(fd, buf, sizeof buf, 0);
    if (n <= 0) return std::nullopt;
    r.body.append(buf, static_cast<std::size_t>(n));
  }
  r.body.resize(length);  // a pipelined next request is not ours
  return r;
}

// ---- loopback_server ----

loopback_server::loopback_server(response_plan plan) : plan_(std::move(plan)) {
  listen_fd_ = listen_loopback(port_);
  thread_ = std::thread([this] { serve(); });
}

loopback_server::~loopback_server() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  ::shutdown(listen_fd_, SHUT_RDWR);
  thread_.join();
  ::close(listen_fd_);
}

std::string loopback_server::url(std::string_view path) const {
  return "http://127.0.0.1:" + std::to_string(port_) + std::string(path);
}

std::vector<received_request> loopback_server::requests() const {
  std::lock_guard lock(mu_);
  return requests_;
}

void loopback_server::serve() {
  while (!stopping_) {
    const int fd = ::accept(listen_fd_, nullptr, nullptr);
    if (fd < 0) return;
    answer(fd);
    ::close(fd);
  }
}

void loopback_server::answer(int fd) {
  if (!plan_.answer_at_once) {
    auto req = read_request(fd);
    if (!req) return;
    std::lock_guard lock(mu_);
    requests_.push_back(*req);
  }
  const auto wait_for_stop = [this] {
    std::unique_lock lock(mu_);
    cv_.wait(lock, [this] { return stopping_.load(); });
  };
  if (plan_.hang) return wait_for_stop();

  std::string head = plan_.head;
  if (plan_.frame == framing::chunked) head += "transfer-encoding: chunked\r\n";
  if (plan_.frame == framing::content_length) head += "content-length: " + std::to_string(plan_.body.size()) + "\r\n";
  if (plan_.frame == framing::close) head += "connection: close\r\n";
  head += "\r\n";
  if (!send_all(fd, head)) return;

  std::string_view body = plan_.body;
  if (plan_.cut_after) body = body.substr(0, std::min(*plan_.cut_after, body.size()));
  const std::size_t piece = plan_.piece == 0 ? std::max<std::size_t>(body.size(), 1) : plan_.piece;
  for (std::size_t at = 0; at < body.size(); at += piece) {
    const auto part = body.substr(at, piece);
    if (!send_all(fd, plan_.frame == framing::chunked ? chunk(part) : std::string(part))) return;
    if (plan_.delay.count() > 0) std::this_thread::sleep_for(plan_.delay);
  }
  if (plan_.cut_after) return;  // close mid-body
  if (plan_.frame == framing::chunked && !send_all(fd, "0\r\n\r\n")) return;
  if (plan_.hang_after_body) wait_for_stop();
}

// ---- test_proxy ----

test_proxy::test_proxy(bool refuse_connect) : refuse_connect_(refuse_connect) {
  listen_fd_ = listen_loopback(port_);
  thread_ = std::thread([this] { serve(); });
}

test_proxy::~test_proxy() {
  stopping_ = true;
  ::shutdown(listen_fd_, SHUT_RDWR);
  thread_.join();
  ::close(listen_fd_);
}

std::string test_proxy::url() const { return "http://127.0.0.1:" + std::to_string(port_); }

std::vector<std::string> test_proxy::request_lines() const {
  std::lock_guard lock(mu_);
  return lines_;
}

void test_proxy::serve() {
  while (!stopping_) {
    const int fd = ::accept(listen_fd_, nullptr, nullptr);
    if (fd < 0) return;
    handle(fd);
    ::close(fd);
  }
}

void test_proxy::handle(int fd) {
  std::string raw;
  auto req = read_request(fd, &raw);
  if (!req) return;
  {
    std::lock_guard lock(mu_);
    lines_.push_back(raw.substr(0, raw.find("\r\n")));
  }
  // Only loopback targets are reachable from a test: "127.0.0.1:<port>".
  std::string authority = req->target;
  if (req->method != "CONNECT") {
    const auto scheme = authority.find("://");
    if (scheme == std::string::npos) return;
    authority = authority.substr(scheme + 3);
    authority = authority.substr(0, authority.find('/'));
  }
  const auto colon = authority.rfind(':');
  const auto port = static_cast<std::uint16_t>(std::stoi(authority.substr(colon + 1)));
  if (req->method == "CONNECT") {
    if (refuse_connect_) {
      send_all(fd, "HTTP/1.1 407 Proxy Authentication Required\r\ncontent-length: 0\r\n\r\n");
      return;
    }
    const int up = connect_loopback(port);
    if (up < 0) return;
    send_all(fd, "HTTP/1.1 200 Connection established\r\n\r\n");
    pump(fd, up);
    ::close(up);
    return;
  }
  const int up = connect_loopback(port);
  if (up < 0) return;
  // Forward in origin-form, as a real proxy does.
  const std::string origin = req->target.substr(req->target.find('/', req->target.find("://") + 3));
  std::string head = req->method + " " + origin + raw.substr(raw.find(" HTTP/"));
  send_all(up, head + req->body);
  pump(fd, up);
  ::close(up);
}

}  // namespace tether::runtime::native::testing
