// SHA-256 (util/sha256.h) and base64 for image blobs (internal). Small and
// dependency-free: the tools library does not link OpenSSL.
#pragma once

#include <string>
#include <string_view>

#include "util/sha256.h"

namespace tether::runtime::native::tool_detail {

using tether::sha256_hex;  // lowercase hex digest (64 characters)

// Standard alphabet, with '=' padding.
std::string base64_encode(std::string_view data);

// The file an image blob is stored in under the blob directory:
// "<sha256>.<ext>", the extension following the media type.
std::string blob_file_name(std::string_view sha256_hex, std::string_view media_type);

}  // namespace tether::runtime::native::tool_detail
