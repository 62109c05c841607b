// Value types of the process layer: an owned descriptor and how a child ended.
#pragma once

#include <sys/types.h>

#include <string>

#include "util/fd.h"

namespace tether::process {

// An owned file descriptor (the util layer's).
using unique_fd = tether::unique_fd;


// How a reaped child ended: exactly one of code (>= 0) and signal (> 0) is set.
struct exit_status {
  int code = -1;    // exit code, or -1
  int signal = 0;   // the signal that killed it, or 0

  static exit_status from_wait_status(int status);
  [[nodiscard]] bool success() const { return code == 0; }
  // The shell's convention: the code, or 128 + signal.
  [[nodiscard]] int shell_code() const { return signal > 0 ? 128 + signal : code; }
  // "exit code N" or "killed by signal N (SIGNAME)".
  [[nodiscard]] std::string describe() const;
};

}  // namespace tether::process
