#!/usr/bin/env bash
# `tether doctor` runs one turn of every installed agent program against the
# scripted model (through `tether run`): none may fail, and each installed
# one says how long it took.
set -euo pipefail
tether=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
HOME="$dir/home" "$tether" doctor --data "$dir/data" >"$dir/out" 2>&1 || true
cat "$dir/out"
if grep -q "a turn against the scripted model failed" "$dir/out"; then
  echo "FAIL: an agent's smoke turn failed"
  exit 1
fi
grep -q "^ok .*runtime .*answered in [0-9]* ms" "$dir/out" || grep -q "not checked: .* is not installed" "$dir/out" ||
  { echo "FAIL: no runtime was checked"; exit 1; }
echo "doctor agents: ok"
