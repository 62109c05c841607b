// SHA-256 and base64 for image blobs (internal). Small and dependency-free:
// the tools library does not link OpenSSL.
#pragma once

#include <string>
#include <string_view>

namespace tether::runtime::native::tool_detail {

// Lowercase hex digest (64 characters).
std::string sha256_hex(std::string_view data);

// Standard alphabet, with '=' padding.
std::string base64_encode(std::string_view data);

// The file an image blob is stored in under the blob directory:
// "<sha256>.<ext>", the extension following the media type.
std::string blob_file_name(std::string_view sha256_hex, std::string_view media_type);

}  // namespace tether::runtime::native::tool_detail
