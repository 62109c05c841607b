// The wire formats the Daytona fake speaks besides JSON: multipart bodies
// (the toolbox's bulk upload and download) and the server side of a
// WebSocket (the toolbox's followed command logs: binary frames, then a
// Close with 1000).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tether::test::daytona {

struct part {
  std::string name;          // Content-Disposition name
  std::string filename;      // Content-Disposition filename ("" when absent)
  std::string content_type;  // "" when absent
  std::string body;
};

// The parts of a multipart/form-data body; nullopt when `content_type` has
// no boundary or the body does not follow it.
std::optional<std::vector<part>> parse_multipart(std::string_view content_type, std::string_view body);
// A multipart body with `boundary`, each part with its Content-Length.
std::string write_multipart(std::string_view boundary, const std::vector<part>& parts);

// The Sec-WebSocket-Accept of a client's Sec-WebSocket-Key.
std::string websocket_accept(std::string_view key);
// One unmasked frame from a server (FIN set): opcode 0x2 binary, 0x8 close.
std::string websocket_frame(std::uint8_t opcode, std::string_view payload);
std::string websocket_close(std::uint16_t code);

}  // namespace tether::test::daytona
