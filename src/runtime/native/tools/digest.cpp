#include "runtime/native/tools/digest.h"

#include <cstdint>

namespace tether::runtime::native::tool_detail {

std::string base64_encode(std::string_view data) {
  static constexpr std::string_view alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((data.size() + 2) / 3 * 4);
  std::size_t i = 0;
  const auto byte = [&](std::size_t j) { return static_cast<std::uint32_t>(static_cast<unsigned char>(data[j])); };
  for (; i + 3 <= data.size(); i += 3) {
    const std::uint32_t v = (byte(i) << 16U) | (byte(i + 1) << 8U) | byte(i + 2);
    out += alphabet[(v >> 18U) & 63U];
    out += alphabet[(v >> 12U) & 63U];
    out += alphabet[(v >> 6U) & 63U];
    out += alphabet[v & 63U];
  }
  if (const std::size_t rest = data.size() - i; rest > 0) {
    std::uint32_t v = byte(i) << 16U;
    if (rest == 2) v |= byte(i + 1) << 8U;
    out += alphabet[(v >> 18U) & 63U];
    out += alphabet[(v >> 12U) & 63U];
    out += rest == 2 ? alphabet[(v >> 6U) & 63U] : '=';
    out += '=';
  }
  return out;
}

std::string blob_file_name(std::string_view sha256_hex, std::string_view media_type) {
  std::string_view ext = "bin";
  if (media_type == "image/png") ext = "png";
  else if (media_type == "image/jpeg") ext = "jpg";
  else if (media_type == "image/gif") ext = "gif";
  else if (media_type == "image/webp") ext = "webp";
  return std::string(sha256_hex) + "." + std::string(ext);
}

}  // namespace tether::runtime::native::tool_detail
