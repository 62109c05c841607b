// The CLI's names for the API client (client/client.h), and what a failed
// request means for the process's exit status.
#pragma once

#include "client/client.h"

namespace tether::cli {

using client = ::tether::client::api_client;
using ::tether::client::client_errc;
using ::tether::client::client_options;
using ::tether::client::event_stream;
using ::tether::client::install_sigint_handler;
using ::tether::client::parse_server_url;
using ::tether::client::server_address;
using ::tether::client::sigint_count;

// The process exit code for a failed request (commands.h): 4 unreachable,
// 130 interrupted, 1 otherwise.
int exit_code_for(const error& e);

}  // namespace tether::cli
