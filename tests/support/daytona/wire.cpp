#include "support/daytona/wire.h"

#include <openssl/evp.h>
#include <openssl/sha.h>

namespace tether::test::daytona {

namespace {

// The value of `param` in a header like `form-data; name="x"; filename="y"`.
std::string param_of(std::string_view header, std::string_view param) {
  std::size_t at = 0;
  while ((at = header.find(param, at)) != std::string_view::npos) {
    const bool starts = at == 0 || header[at - 1] == ' ' || header[at - 1] == ';';
    const auto eq = at + param.size();
    if (!starts || eq >= header.size() || header[eq] != '=') {
      at = eq;
      continue;
    }
    auto value = header.substr(eq + 1);
    if (!value.empty() && value.front() == '"') {
      const auto close = value.find('"', 1);
      return std::string(value.substr(1, close == std::string_view::npos ? value.size() - 1 : close - 1));
    }
    return std::string(value.substr(0, value.find(';')));
  }
  return {};
}

bool iequals_prefix(std::string_view line, std::string_view name) {
  if (line.size() < name.size()) return false;
  for (std::size_t i = 0; i < name.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(line[i])) != std::tolower(static_cast<unsigned char>(name[i]))) {
      return false;
    }
  }
  return true;
}

}  // namespace

std::optional<std::vector<part>> parse_multipart(std::string_view content_type, std::string_view body) {
  const std::string boundary = param_of(content_type, "boundary");
  if (boundary.empty()) return std::nullopt;
  const std::string delimiter = "--" + boundary;
  std::vector<part> parts;
  auto at = body.find(delimiter);
  if (at == std::string_view::npos) return std::nullopt;
  for (;;) {
    at += delimiter.size();
    if (body.substr(at, 2) == "--") return parts;  // the closing delimiter
    if (body.substr(at, 2) != "\r\n") return std::nullopt;
    at += 2;
    const auto head_end = body.find("\r\n\r\n", at);
    if (head_end == std::string_view::npos) return std::nullopt;
    part p;
    std::string_view head = body.substr(at, head_end - at);
    while (!head.empty()) {
      const auto eol = head.find("\r\n");
      const auto line = head.substr(0, eol);
      if (iequals_prefix(line, "content-disposition:")) {
        p.name = param_of(line, "name");
        p.filename = param_of(line, "filename");
      } else if (iequals_prefix(line, "content-type:")) {
        auto v = line.substr(13);
        while (!v.empty() && v.front() == ' ') v.remove_prefix(1);
        p.content_type = std::string(v);
      }
      head = eol == std::string_view::npos ? std::string_view() : head.substr(eol + 2);
    }
    const auto data = head_end + 4;
    const auto next = body.find("\r\n" + delimiter, data);
    if (next == std::string_view::npos) return std::nullopt;
    p.body = std::string(body.substr(data, next - data));
    parts.push_back(std::move(p));
    at = next + 2;
  }
}

std::string write_multipart(std::string_view boundary, const std::vector<part>& parts) {
  std::string out;
  for (const auto& p : parts) {
    out += "--";
    out += boundary;
    out += "\r\nContent-Disposition: form-data; name=\"" + p.name + "\"";
    if (!p.filename.empty()) out += "; filename=\"" + p.filename + "\"";
    out += "\r\n";
    if (!p.content_type.empty()) out += "Content-Type: " + p.content_type + "\r\n";
    out += "Content-Length: " + std::to_string(p.body.size()) + "\r\n\r\n";
    out += p.body;
    out += "\r\n";
  }
  out += "--";
  out += boundary;
  out += "--\r\n";
  return out;
}

std::string websocket_accept(std::string_view key) {
  const std::string input = std::string(key) + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";
  unsigned char digest[SHA_DIGEST_LENGTH];
  ::SHA1(reinterpret_cast<const unsigned char*>(input.data()), input.size(), digest);
  unsigned char encoded[4 * ((SHA_DIGEST_LENGTH + 2) / 3) + 1];
  const int n = ::EVP_EncodeBlock(encoded, digest, SHA_DIGEST_LENGTH);
  return {reinterpret_cast<const char*>(encoded), static_cast<std::size_t>(n)};
}

std::string websocket_frame(std::uint8_t opcode, std::string_view payload) {
  std::string f;
  f += static_cast<char>(0x80 | (opcode & 0x0f));
  const auto n = payload.size();
  if (n < 126) {
    f += static_cast<char>(n);
  } else if (n <= 0xffff) {
    f += static_cast<char>(126);
    f += static_cast<char>((n >> 8) & 0xff);
    f += static_cast<char>(n & 0xff);
  } else {
    f += static_cast<char>(127);
    for (int shift = 56; shift >= 0; shift -= 8) f += static_cast<char>((static_cast<std::uint64_t>(n) >> shift) & 0xff);
  }
  f += payload;
  return f;
}

std::string websocket_close(std::uint16_t code) {
  const char payload[2] = {static_cast<char>(code >> 8), static_cast<char>(code & 0xff)};
  return websocket_frame(0x8, std::string_view(payload, 2));
}

}  // namespace tether::test::daytona
