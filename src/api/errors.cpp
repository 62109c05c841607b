#include "api/errors.h"

#include <string>

#include "session/errors.h"
#include "store/errors.h"

namespace tether::api {

namespace {
class api_category_impl final : public std::error_category {
 public:
  const char* name() const noexcept override { return "api"; }
  std::string message(int c) const override {
    switch (static_cast<api_errc>(c)) {
      case api_errc::unauthorized:
        return "unauthorized";
      case api_errc::not_found:
        return "not found";
      case api_errc::method_not_allowed:
        return "method not allowed";
      case api_errc::conflict:
        return "conflict";
      case api_errc::too_large:
        return "payload too large";
      case api_errc::bad_request:
        return "bad request";
      case api_errc::listen_failed:
        return "listen failed";
      case api_errc::unsupported_media_type:
        return "unsupported media type";
      case api_errc::unavailable:
        return "unavailable";
      case api_errc::headers_too_large:
        return "request header fields too large";
      case api_errc::forbidden:
        return "forbidden";
      case api_errc::too_many_requests:
        return "too many requests";
      case api_errc::misdirected:
        return "misdirected request";
    }
    return "unknown api error";
  }
};

constexpr http_error bad_request{400, "bad_request"};
constexpr http_error unauthorized{401, "unauthorized"};
constexpr http_error not_found{404, "not_found"};
constexpr http_error method_not_allowed{405, "method_not_allowed"};
constexpr http_error conflict{409, "conflict"};
constexpr http_error too_large{413, "payload_too_large"};
constexpr http_error headers_too_large{431, "headers_too_large"};
constexpr http_error forbidden{403, "forbidden"};
constexpr http_error too_many_requests{429, "too_many_requests"};
constexpr http_error misdirected{421, "misdirected_request"};
constexpr http_error unsupported_media_type{415, "unsupported_media_type"};
constexpr http_error internal{500, "internal"};
constexpr http_error unavailable{503, "unavailable"};
constexpr http_error storage_unavailable{503, "storage_unavailable"};

http_error from_api(api_errc e) {
  switch (e) {
    case api_errc::unauthorized:
      return unauthorized;
    case api_errc::not_found:
      return not_found;
    case api_errc::method_not_allowed:
      return method_not_allowed;
    case api_errc::conflict:
      return conflict;
    case api_errc::too_large:
      return too_large;
    case api_errc::bad_request:
      return bad_request;
    case api_errc::listen_failed:
      return internal;
    case api_errc::unsupported_media_type:
      return unsupported_media_type;
    case api_errc::unavailable:
      return unavailable;
    case api_errc::headers_too_large:
      return headers_too_large;
    case api_errc::forbidden:
      return forbidden;
    case api_errc::too_many_requests:
      return too_many_requests;
    case api_errc::misdirected:
      return misdirected;
  }
  return internal;
}

http_error from_session(session::session_errc e) {
  using session::session_errc;
  switch (e) {
    case session_errc::unknown_session:
    case session_errc::unknown_interaction:
    case session_errc::unknown_input:
      return not_found;
    case session_errc::input_conflict:
    case session_errc::interaction_closed:
    case session_errc::quarantined:
    case session_errc::input_not_pending:
    case session_errc::lease_lost:
    case session_errc::session_conflict:
    case session_errc::cannot_fork:
      return conflict;
    case session_errc::invalid_input:
      return bad_request;
    case session_errc::stopped:
    case session_errc::storage_failed:
      return unavailable;
    case session_errc::turn_over:
      return internal;
  }
  return internal;
}

http_error from_store(store::store_errc e) {
  using store::store_errc;
  switch (e) {
    case store_errc::unknown_session:
    case store_errc::not_found:
      return not_found;
    case store_errc::session_exists:
    case store_errc::duplicate_input:
    case store_errc::input_conflict:
    case store_errc::interaction_not_pending:
    case store_errc::quarantined:
    case store_errc::fence_failed:
    case store_errc::lease_held:
    case store_errc::lease_lost:
    case store_errc::conflict:
      return conflict;
    case store_errc::rejected:
      return bad_request;
    case store_errc::closed:
    case store_errc::read_failed:
    case store_errc::lagged:
      return unavailable;
    case store_errc::write_failed:  // full disk, I/O error: the store is degraded and retries
    case store_errc::storage_unavailable:
      return storage_unavailable;
    case store_errc::schema_too_new:
    case store_errc::open_failed:
    case store_errc::corrupt:
    case store_errc::damaged:
      return internal;
  }
  return internal;
}

http_error from_util(util_errc e) {
  switch (e) {
    case util_errc::too_large:
      return too_large;
    case util_errc::not_found:
      return not_found;
    case util_errc::invalid_argument:
    case util_errc::malformed_id:
    case util_errc::invalid_utf8:
    case util_errc::malformed_json:
      return bad_request;
  }
  return internal;
}
}  // namespace

const std::error_category& api_category() {
  static const api_category_impl c;
  return c;
}

http_error to_http(const error& e) {
  const auto& cat = e.code.category();
  const int v = e.code.value();
  if (cat == api_category()) return from_api(static_cast<api_errc>(v));
  if (cat == session::session_category()) return from_session(static_cast<session::session_errc>(v));
  if (cat == store::store_category()) return from_store(static_cast<store::store_errc>(v));
  if (cat == util_category()) return from_util(static_cast<util_errc>(v));
  return internal;
}

}  // namespace tether::api
