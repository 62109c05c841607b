#!/usr/bin/env bash
# The agent programs' profiles of suites/profiles.toml (codex-exec,
# claude-print, opencode-run) through every suite: each cell passes or is
# marked not applicable, and the campaign exits 0. The CLIs come from
# scripts/install-agents; with CI set a missing one fails the test, otherwise
# it is skipped (exit 77).
set -euo pipefail
tether=$1
suites=$2
results=$3
prefix=${TETHER_AGENTS_PREFIX:-$(cd "$(dirname "$0")/../.." && pwd)/.agents}
for bin in codex claude opencode; do
  if [[ ! -x $prefix/node_modules/.bin/$bin ]]; then
    echo "$bin is not installed in $prefix (scripts/install-agents installs it)"
    [[ -n ${CI:-} ]] && exit 1
    exit 77
  fi
done
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
export TMPDIR=$dir/tmp
mkdir -p "$TMPDIR"
rm -rf "$results"
set +e
"$tether" e2e run --suites "$suites" --profile codex-exec,claude-print,opencode-run --out "$results" --jobs 2 \
  >"$dir/run.out" 2>&1
rc=$?
set -e
cat "$dir/run.out"
[[ $rc -eq 0 ]] || { echo "the agent matrix exited $rc"; exit 1; }
python3 - "$results" <<'PY'
import json, pathlib, sys
out = pathlib.Path(sys.argv[1])
latest = json.loads((out / "history.json").read_text())["latest"]
camp = json.loads((out / "campaigns" / latest / "campaign.json").read_text())
t = camp["totals"]
assert t["failed"] == 0 and t["incomplete"] == 0, t
assert t["passed"] + t.get("notApplicable", 0) >= 27, t
runtimes = set()
for rec_file in (out / "campaigns" / latest / "cells").glob("*.json"):
    rec = json.loads(rec_file.read_text())
    if rec["status"] == "passed": runtimes.add(rec["runtime"])
assert {"codex-exec", "claude-print", "opencode-run"} <= runtimes, runtimes
print("agent matrix:", t)
PY
