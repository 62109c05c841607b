#include "http_client.h"

#include <sys/socket.h>
#include <sys/time.h>

#include <cctype>

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>

namespace tether::mock::test {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = net::ip::tcp;

namespace {

void set_receive_timeout(tcp::socket& socket) {
  timeval tv{};
  tv.tv_sec = 20;
  ::setsockopt(socket.native_handle(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
}

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

http::request<http::string_body> make_request(const std::string& method, const std::string& target,
                                              const std::string& body,
                                              const std::vector<std::pair<std::string, std::string>>& headers) {
  http::request<http::string_body> req;
  req.method_string(method);
  req.target(target);
  req.version(11);
  req.set(http::field::host, "127.0.0.1");
  req.set(http::field::authorization, "Bearer dummy");
  if (!body.empty()) req.set(http::field::content_type, "application/json");
  for (const auto& [k, v] : headers) req.set(k, v);
  req.body() = body;
  req.prepare_payload();
  return req;
}

}  // namespace

struct http_client::state {
  net::io_context io;
  tcp::socket socket{io};
  beast::flat_buffer buffer;
};

http_client::http_client(std::uint16_t port) : s_(std::make_unique<state>()) {
  s_->socket.connect(tcp::endpoint(net::ip::make_address("127.0.0.1"), port));
  set_receive_timeout(s_->socket);
}

http_client::~http_client() { close(); }

void http_client::close() {
  boost::system::error_code ignored;
  s_->socket.shutdown(tcp::socket::shutdown_both, ignored);
  s_->socket.close(ignored);
}

http_response http_client::send(const std::string& method, const std::string& target, const std::string& body,
                                const std::vector<std::pair<std::string, std::string>>& headers) {
  auto req = make_request(method, target, body, headers);
  http_response out;
  boost::system::error_code ec;
  http::write(s_->socket, req, ec);
  if (ec) return out;
  http::response_parser<http::string_body> parser;
  parser.body_limit(256U << 20U);
  if (method == "HEAD") parser.skip(true);
  http::read(s_->socket, s_->buffer, parser, ec);
  out.complete = !ec;
  if (!parser.is_header_done()) return out;
  const auto& res = parser.get();
  out.status = res.result_int();
  out.chunked = parser.chunked();
  for (const auto& f : res) out.headers[lower(std::string(f.name_string()))] = std::string(f.value());
  out.body = res.body();
  return out;
}

std::string http_client::send_and_read_some(const std::string& method, const std::string& target,
                                            const std::string& body, std::size_t bytes) {
  auto req = make_request(method, target, body, {});
  boost::system::error_code ec;
  http::write(s_->socket, req, ec);
  std::string got;
  char chunk[512];
  while (!ec && got.size() < bytes) {
    const auto n = s_->socket.read_some(net::buffer(chunk), ec);
    got.append(chunk, n);
  }
  return got;
}

std::string http_client::read_rest(bool& eof) {
  std::string got(static_cast<const char*>(s_->buffer.data().data()), s_->buffer.size());
  s_->buffer.consume(s_->buffer.size());
  boost::system::error_code ec;
  char chunk[512];
  while (!ec) {
    const auto n = s_->socket.read_some(net::buffer(chunk), ec);
    got.append(chunk, n);
  }
  eof = ec == net::error::eof || ec == net::error::connection_reset;
  return got;
}

http_response http_call(std::uint16_t port, const std::string& method, const std::string& target,
                        const std::string& body) {
  http_client c(port);
  return c.send(method, target, body);
}

std::string raw_exchange(std::uint16_t port, const std::string& bytes) {
  net::io_context io;
  tcp::socket socket(io);
  socket.connect(tcp::endpoint(net::ip::make_address("127.0.0.1"), port));
  set_receive_timeout(socket);
  net::write(socket, net::buffer(bytes));
  std::string got;
  boost::system::error_code ec;
  char chunk[512];
  while (!ec) {
    const auto n = socket.read_some(net::buffer(chunk), ec);
    got.append(chunk, n);
  }
  return got;
}

std::vector<sse_message> parse_sse(const std::string& body) {
  std::vector<sse_message> out;
  sse_message current;
  bool any = false;
  std::size_t pos = 0;
  while (pos <= body.size()) {
    auto nl = body.find('\n', pos);
    if (nl == std::string::npos) nl = body.size();
    const std::string line = body.substr(pos, nl - pos);
    pos = nl + 1;
    if (line.empty()) {
      if (any) out.push_back(current);
      current = {};
      any = false;
      if (nl == body.size()) break;
      continue;
    }
    if (line.starts_with("event: "))
      current.event = line.substr(7);
    else if (line.starts_with("data: "))
      current.data += line.substr(6);
    any = true;
  }
  return out;
}

}  // namespace tether::mock::test
