#!/usr/bin/env bash
# `tether doctor --all-runtimes` runs one turn of every installed agent runtime against the
# scripted model (through `tether run`): none may fail, and each installed
# one says how long it took.
set -euo pipefail
tether=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
HOME="$dir/home" "$tether" doctor --all-runtimes --data "$dir/data" >"$dir/out" 2>&1 || true
cat "$dir/out"
if grep -q "a turn against the scripted model failed" "$dir/out"; then
  echo "FAIL: an agent's smoke turn failed"
  exit 1
fi
# Every installed agent CLI had its runtimes checked (none installed: no line).
if grep -q "^ok .*agent " "$dir/out"; then
  grep -q "^ok .*runtime .*answered in [0-9]* ms" "$dir/out" || { echo "FAIL: no runtime was checked"; exit 1; }
fi
echo "doctor agents: ok"
