// What a sandboxed child (an agent program, a tool's shell) must never read,
// though it lies where a sandbox would show it: the server's configuration
// file (it may hold the store's URL and password) and what reaches the
// PostgreSQL store without one: its Unix socket directories (peer
// authentication lets any process of the server's user in) and libpq's
// password and service files. The sandbox masks each (process/sandbox.h).
//
//   auto m = server_secrets("/etc/tether/config.toml", "postgres://t@/db?host=/srv/pg");
//   // {/etc/tether/config.toml, /srv/pg, /run/postgresql, /root/.pgpass, …} (those that exist)
//
// The configuration is `config` when given, else $TETHER_CONFIG. Socket
// directories: Debian's defaults (/run/postgresql, /var/run/postgresql),
// $PGHOST, and every `host=` of the store URL (a query parameter or a
// percent-encoded authority) that is a path. Password files: $PGPASSFILE or
// ~/.pgpass, $PGSERVICEFILE or ~/.pg_service.conf. Paths are canonical;
// ones that do not exist are left out.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace tether::node {

std::vector<std::filesystem::path> server_secrets(const std::string& config, const std::string& store_url);

}  // namespace tether::node
