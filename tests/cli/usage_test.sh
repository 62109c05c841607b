#!/usr/bin/env bash
# The small things of the command line: `--version` and `version` print the
# same line and exit 0; an unknown verb is a usage error (2) that names the
# nearest verb when it looks like a typo, and no verb when nothing is close.
set -euo pipefail
tether=$1
fail() { echo "FAIL: $*" >&2; exit 1; }

v1=$("$tether" --version) || fail "--version exited $?"
v2=$("$tether" version) || fail "version exited $?"
[[ $v1 =~ ^tether\ [0-9]+\.[0-9]+\.[0-9]+$ ]] || fail "--version printed '$v1'"
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
echo "usage: ok"
