#include "process/types.h"

#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

namespace tether::process {

exit_status exit_status::from_wait_status(int status) {
  exit_status s;
  if (WIFEXITED(status)) s.code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) s.signal = WTERMSIG(status);
  return s;
}

std::string exit_status::describe() const {
  if (signal > 0) {
    const char* abbrev = ::sigabbrev_np(signal);
    return "killed by signal " + std::to_string(signal) + (abbrev != nullptr ? " (SIG" + std::string(abbrev) + ")" : "");
  }
  if (code >= 0) return "exit code " + std::to_string(code);
  return "exit status unknown";
}

}  // namespace tether::process
