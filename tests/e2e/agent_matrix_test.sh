#!/usr/bin/env bash
# The agent programs' profiles of suites/profiles.toml through every suite:
# each cell passes, is marked not applicable or is skipped (Daytona without
# DAYTONA_API_KEY; the ssh cells run on a real sshd here), every selected profile passes
# at least one cell, and the campaign exits 0.
#
# TETHER_E2E_AGENT_PROFILES: the profiles to run, separated by spaces;
# default "codex-exec claude-print". The third per-turn one, opencode-run,
# runs in `make e2e` (and here when named): opencode boots for every turn, so
# its 24 cells took 530 s of this test's 700, and the server suite's
# AgentRuntime tests already drive opencode-run through each behaviour the
# cells check (reply, tool, approval, resume, SIGKILL, stop, reset, question,
# usage, crash, silence). The warm ones are codex-app-server, claude-stream,
# opencode-serve, acp-codex, acp-claude and acp-opencode, e.g.
#   TETHER_E2E_AGENT_PROFILES="codex-app-server acp-claude" ctest -R e2e.agent_matrix
#
# The CLIs come from scripts/install-agents (TETHER_AGENTS_PREFIX, default
# .agents/); with CI set a missing one fails the test, otherwise it is skipped
# (exit 77).
set -euo pipefail
tether=$1
suites=$2
results=$3
prefix=${TETHER_AGENTS_PREFIX:-$(cd "$(dirname "$0")/../.." && pwd)/.agents}
read -ra profiles <<<"${TETHER_E2E_AGENT_PROFILES:-codex-exec claude-print}"
[[ ${#profiles[@]} -gt 0 ]] || { echo "TETHER_E2E_AGENT_PROFILES names no profile"; exit 1; }

# The binaries each profile's runtime runs ("a|b": either one).
binaries_of() {
  case $1 in
    codex-exec | codex-app-server) echo codex ;;
    claude-print | claude-stream) echo claude ;;
    opencode-run | opencode-serve | acp-opencode) echo opencode ;;
    acp-codex) echo "codex-acp-linux-x64|codex-acp" ;;
    acp-claude) echo "claude-agent-acp claude" ;;
    *) echo "unknown agent profile $1" >&2; return 1 ;;
  esac
}
installed() {  # installed "a|b": one of them is in the prefix
  local alt
  IFS='|' read -ra alts <<<"$1"
  for alt in "${alts[@]}"; do [[ -x $prefix/node_modules/.bin/$alt ]] && return 0; done
  return 1
}
for profile in "${profiles[@]}"; do
  bins=$(binaries_of "$profile") || exit 1
  for bin in $bins; do
    if ! installed "$bin"; then
      echo "$bin ($profile) is not installed in $prefix (scripts/install-agents installs it)"
      [[ -n ${CI:-} ]] && exit 1
      exit 77
    fi
  done
done

dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
export TMPDIR=$dir/tmp
mkdir -p "$TMPDIR"
rm -rf "$results"
selection=$(IFS=,; echo "${profiles[*]}")
set +e
"$tether" e2e run --suites "$suites" --profile "$selection" --out "$results" --jobs 2 >"$dir/run.out" 2>&1
rc=$?
set -e
cat "$dir/run.out"
[[ $rc -eq 0 ]] || { echo "the agent matrix exited $rc"; exit 1; }
python3 - "$results" "$suites" "${profiles[@]}" <<'PY'
import json, pathlib, sys, tomllib
out, suites, profiles = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2]), sys.argv[3:]
# Every (suite, profile, case) the selection names, from the definitions.
defs = [tomllib.loads(f.read_text()) for f in sorted(suites.glob("*.toml"))]
runtime = {id: p["runtime"] for d in defs for id, p in d.get("profiles", {}).items()}
expected = sum(len(d["cases"]) * len(d["suite"]["environments"])
               for d in defs if "suite" in d for p in d["suite"]["profiles"] if p in profiles)
latest = json.loads((out / "history.json").read_text())["latest"]
camp = json.loads((out / "campaigns" / latest / "campaign.json").read_text())
t = camp["totals"]
assert t["failed"] == 0 and t["incomplete"] == 0, t
# Daytona's cells run with an account's key only; without one they are skipped, saying why.
assert t["passed"] == t["selected"] and t["passed"] + t.get("notApplicable", 0) + t.get("skipped", 0) == expected, (t, expected)
passed = set()
for rec_file in (out / "campaigns" / latest / "cells").glob("*.json"):
    rec = json.loads(rec_file.read_text())
    if rec["status"] == "passed": passed.add(rec["runtime"])
    if rec["status"] == "not_applicable": assert rec["notApplicableReason"], rec["cell"]
    if rec["status"] == "skipped": assert rec["skippedReason"] and rec["environmentId"] == "daytona", rec["cell"]
    if rec["environmentId"] == "ssh" and rec["status"] == "passed":
        # the turns ran there: each in a lease of that host
        lease = rec["billing"]["runtime"]
        assert lease["provider"] == "ssh" and lease["leaseCount"] >= 1, (rec["cell"], lease)
        assert all(t["leaseOutcome"] for t in rec["turns"] if t["runId"]), (rec["cell"], rec["turns"])
assert {runtime[p] for p in profiles} <= passed, (profiles, passed)
print("agent matrix:", " ".join(profiles), t)
PY
