// The web interface's static files (src/web/assets/), compiled into the
// binary: the server serves exactly these bytes and no file from disk.
//
//   if (const auto* a = web::find_asset("app.js")) reply(a->content_type, a->body, a->etag);
//
// A build step (cmake/embed_assets.cmake) turns every file of the directory
// into an entry: its name (flat: [a-z0-9._-]), its content type by
// extension, a strong ETag (a SHA-256 prefix of the bytes, quoted) and the
// bytes. Adding or editing a file there needs no code change.
#pragma once

#include <span>
#include <string_view>

namespace tether::web {

struct asset {
  std::string_view name;          // "app.js"
  std::string_view content_type;  // "text/javascript; charset=utf-8"
  std::string_view etag;          // "\"3fa2…\"", as sent in the ETag header
  std::string_view body;
};

// Every asset, by name in byte order; static storage.
std::span<const asset> assets();
// The asset called `name` ("index.html" for ""), or null.
const asset* find_asset(std::string_view name);

}  // namespace tether::web
