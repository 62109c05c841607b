// Private to config/: the toml++ table behind a table_reader.
#pragma once

#include <toml++/toml.h>

namespace tether::config::detail {

struct toml_table {
  const toml::table& t;
};

}  // namespace tether::config::detail
