#include "env/environment.h"

#include "util/sha256.h"

namespace tether::env {

std::string provider_name(std::string_view key) {
  std::string name = "tether-";
  for (char c : key.substr(0, 40)) {
    const bool keep = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-';
    name += keep ? c : (c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : '-');
  }
  name += '-';
  name += sha256_hex(key).substr(0, 8);
  return name;
}

std::string_view to_string(lease_outcome o) {
  switch (o) {
    case lease_outcome::created: return "created";
    case lease_outcome::resumed: return "resumed";
    case lease_outcome::replaced: return "replaced";
  }
  return "created";
}

std::string_view to_string(command_record::state s) {
  switch (s) {
    case command_record::state::running: return "running";
    case command_record::state::exited: return "exited";
    case command_record::state::indeterminate: return "indeterminate";
  }
  return "indeterminate";
}

}  // namespace tether::env
