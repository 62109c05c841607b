#include "env/ssh/command.h"

#include "env/errors.h"

namespace tether::env::ssh {

std::string quote(std::string_view s) {
  std::string q = "'";
  for (char c : s) {
    if (c == '\'') {
      q += "'\\''";
    } else {
      q += c;
    }
  }
  q += '\'';
  return q;
}

namespace {

bool is_id(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-';
    if (!ok) return false;
  }
  return true;
}

bool is_name(std::string_view s) {
  if (s.empty() || (s[0] >= '0' && s[0] <= '9')) return false;
  for (char c : s) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
    if (!ok) return false;
  }
  return true;
}

// argv[0] in the journal: one line, no NUL.
std::string one_line(std::string_view s) {
  std::string out;
  for (char c : s) out += (c == '\n' || c == '\r' || c == '\0') ? '?' : c;
  return out;
}

}  // namespace

result<std::string> remote_command(const remote_spec& spec) {
  if (spec.argv.empty() || spec.argv[0].empty()) return error(env_errc::invalid, "a remote command needs argv[0]");
  if (spec.argv[0].find('=') != std::string::npos) {
    return error(env_errc::invalid, "a remote program's name may not contain '=': " + spec.argv[0]);
  }
  if (!is_id(spec.id)) return error(env_errc::invalid, "a command id is [A-Za-z0-9-]+: " + spec.id);
  for (const auto& v : spec.env) {
    const auto eq = v.find('=');
    if (eq == std::string::npos || !is_name(std::string_view(v).substr(0, eq))) {
      return error(env_errc::invalid, "not an environment variable (NAME=value): " + v.substr(0, 64));
    }
  }
  const std::string j = quote(spec.journal + "/" + spec.id);
  // The shell outlives a signal to its group (a no-op trap, reset to the
  // default in the command by exec), so it records the command's status.
  std::string line = "trap : TERM INT HUP; J=" + j + "; printf '%s %s\\n' \"$$\" " + quote(one_line(spec.argv[0])) +
                     " > \"$J.pid\" || exit 125; ";
  line += "cd -- " + quote(spec.cwd.empty() ? "." : spec.cwd) +
          " || { echo 126 > \"$J.exit\"; exit 126; }; ";
  line += "env -i --";
  for (const auto& v : spec.env) line += ' ' + quote(v);
  for (const auto& a : spec.argv) line += ' ' + quote(a);
  line += "; rc=$?; printf '%s\\n' \"$rc\" > \"$J.exit\"; exit \"$rc\"";
  return line;
}

std::string journal_listing(std::string_view journal) {
  return "cd -- " + quote(journal) +
         " 2>/dev/null || exit 0; for p in *.pid; do [ -e \"$p\" ] || continue; id=${p%.pid}; "
         "read -r pid prog < \"$p\"; "
         "if [ -e \"$id.exit\" ]; then printf '%s exited %s %s\\n' \"$id\" \"$(cat \"$id.exit\")\" \"$prog\"; "
         "elif kill -0 \"$pid\" 2>/dev/null; then printf '%s running - %s\\n' \"$id\" \"$prog\"; "
         "else printf '%s indeterminate - %s\\n' \"$id\" \"$prog\"; fi; done";
}

}  // namespace tether::env::ssh
