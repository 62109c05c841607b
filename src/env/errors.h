// Error codes of the environment layer (env/).
#pragma once

#include <system_error>

namespace tether::env {

enum class env_errc {
  unreachable = 1,  // the host or service cannot be reached, or the connection dropped
  refused,          // reached, but it refused us: a host key that does not match, a key not accepted
  not_found,        // no such lease, file or command
  lost,             // the lease is gone (its machine stopped, its sandbox deleted) mid-operation
  failed,           // a remote command or a transfer failed (the message says which and why)
  no_space,         // the remote ran out of disk
  invalid,          // an argument or a setting the kind cannot use
};

const std::error_category& env_category();
inline std::error_code make_error_code(env_errc e) { return {static_cast<int>(e), env_category()}; }

}  // namespace tether::env

template <>
struct std::is_error_code_enum<tether::env::env_errc> : std::true_type {};
