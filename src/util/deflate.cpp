#include "util/deflate.h"

#include <zlib.h>

#include <new>

#include "util/errors.h"

namespace tether {

std::string deflate_bytes(std::string_view raw) {
  uLongf size = compressBound(static_cast<uLong>(raw.size()));
  std::string out(size, '\0');
  // Level 6 (zlib's default): JSON lines shrink 5-10x; higher levels cost
  // twice the time for a few per cent.
  const int rc = compress2(reinterpret_cast<Bytef*>(out.data()), &size, reinterpret_cast<const Bytef*>(raw.data()),
                           static_cast<uLong>(raw.size()), 6);
  if (rc != Z_OK) throw std::bad_alloc();  // Z_MEM_ERROR: compressBound() always leaves room
  out.resize(size);
  return out;
}

result<std::string> inflate_bytes(std::string_view packed, std::size_t size) {
  std::string out(size, '\0');
  // uncompress() cannot tell "exactly size" from "at least size": one more
  // byte of room shows a longer stream.
  out.push_back('\0');
  auto got = static_cast<uLongf>(out.size());
  const int rc = uncompress(reinterpret_cast<Bytef*>(out.data()), &got, reinterpret_cast<const Bytef*>(packed.data()),
                            static_cast<uLong>(packed.size()));
  if (rc != Z_OK || got != size)
    return make_error(util_errc::invalid_argument, "damaged deflate data (zlib " + std::to_string(rc) + ", " +
                                                       std::to_string(got) + " of " + std::to_string(size) + " bytes)");
  out.resize(size);
  return out;
}

}  // namespace tether
