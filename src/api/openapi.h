// The OpenAPI 3.1 document of the HTTP API, served at GET /v1/openapi.json.
//
// The text is docs/openapi.json, compiled in at build time (a rule in
// src/CMakeLists.txt generates the definition), so what the server serves is
// exactly the file kept in the repository. Edit the JSON file, not code.
#pragma once

#include <string_view>

namespace tether::api {

// The document's JSON text; static storage, valid for the whole process.
std::string_view openapi_document();

}  // namespace tether::api
