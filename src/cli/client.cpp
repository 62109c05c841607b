#include "cli/client.h"

namespace tether::cli {

int exit_code_for(const error& e) {
  if (e == client_errc::unreachable) return 4;
  if (e == client_errc::interrupted) return 130;
  return 1;
}

}  // namespace tether::cli
