#!/usr/bin/env bash
# The small things of the command line: `--version` and `version` print the
# same line and exit 0; an unknown verb is a usage error (2) that names the
# nearest verb when it looks like a typo, and no verb when nothing is close;
# a port in use is exit 7.
set -euo pipefail
tether=$1
fail() { echo "FAIL: $*" >&2; exit 1; }

v1=$("$tether" --version) || fail "--version exited $?"
v2=$("$tether" version) || fail "version exited $?"
[[ $v1 =~ ^tether\ [0-9]+\.[0-9]+\.[0-9]+\ \(revision\ [0-9a-f]+(-dirty)?\)$ ]] || fail "--version printed '$v1'"
[[ $v1 == "$v2" ]] || fail "--version '$v1' and version '$v2' differ"

check_unknown() {  # word, expected suggestion ("" for none)
  local rc=0 err
  err=$("$tether" "$1" 2>&1 >/dev/null) || rc=$?
  [[ $rc -eq 2 ]] || fail "'$1' exited $rc, not 2"
  [[ $err == *"unknown command '$1'"* ]] || fail "'$1' said: $err"
  if [[ -n $2 ]]; then
    [[ $err == *"did you mean $2?"* ]] || fail "'$1' suggested no '$2': $err"
  else
    [[ $err != *"did you mean"* ]] || fail "'$1' suggested something: $err"
  fi
}
check_unknown sesions sessions
check_unknown sned send
check_unknown doctr doctor
check_unknown quux-frobnicate ""
check_unknown runss runs
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

# Completion and the man page come from the same help text.
"$tether" completion bash >"$dir/tether.bash"
bash -n "$dir/tether.bash" || fail "the bash completion does not parse"
words=$(bash -c 'source "$1"; COMP_WORDS=(tether ses); COMP_CWORD=1; _tether; echo "${COMPREPLY[*]}"' _ "$dir/tether.bash")
[[ $words == *sessions* ]] || fail "completing 'ses' gave '$words'"
opts=$(bash -c 'source "$1"; COMP_WORDS=(tether run --con); COMP_CWORD=2; _tether; echo "${COMPREPLY[*]}"' _ "$dir/tether.bash")
[[ $opts == *--continue* && $opts == *--config* ]] || fail "completing 'run --con' gave '$opts'"
"$tether" completion zsh >"$dir/_tether"
grep -q '^#compdef tether' "$dir/_tether" || fail "the zsh completion has no #compdef"
if command -v zsh >/dev/null; then zsh -n "$dir/_tether" || fail "the zsh completion does not parse"; fi
"$tether" man >"$dir/tether.1"
grep -q '^\.SS "tether runs' "$dir/tether.1" || fail "the man page lacks the runs verb"
grep -q 'a unique prefix' "$dir/tether.1" || fail "the man page lacks the options' help"

# A port in use is its own exit code (7), not "bad usage".
python3 -c 'import socket,sys,time
s=socket.socket(); s.bind(("127.0.0.1",0)); s.listen(1); print(s.getsockname()[1], flush=True); time.sleep(60)' >"$dir/port" &
holder=$!
trap 'kill $holder 2>/dev/null; wait $holder 2>/dev/null || true; rm -rf "$dir"' EXIT
for _ in $(seq 1 100); do [[ -s $dir/port ]] && break; sleep 0.05; done
rc=0
err=$("$tether" serve --data "$dir/data" --listen "127.0.0.1:$(cat "$dir/port")" 2>&1 >/dev/null) || rc=$?
[[ $rc -eq 7 ]] || fail "serve on a port in use exited $rc: $err"
[[ $err == *"is in use"* ]] || fail "serve on a port in use said: $err"
echo "usage: ok"
