#!/usr/bin/env bash
# `tether e2e` as an operator runs it:
#   1. the native matrix of suites/*.toml (its native profiles; the agent
#      programs' profiles need their CLIs): every cell passes, exit 0, the
#      records, campaign, history, dashboard and its Chromium screenshot are
#      written (kept in RESULTS for people to look at);
#   2. a case whose matcher cannot pass: exit 1, the record says why; a
#      transient failure is retried once and passes; a case that does not
#      apply to the runtime is not run and does not fail the campaign; an
#      unknown selection: exit 2;
#   3. Ctrl-C in the middle of a campaign: exit 130, no process left behind.
set -euo pipefail
tether=$1
suites=$2
results=$3
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
export TMPDIR=$dir/tmp
mkdir -p "$TMPDIR"
native=native-openai-chat,native-openai-responses,native-anthropic
# fail WHY [FILE...]: the files, then WHY as the last line (a log shown by
# its head and tail still says what failed).
fail() {
  local why=$1
  shift
  (($# == 0)) || cat "$@"
  echo "FAILED: $why"
  exit 1
}

# ---- 1. the native matrix ----
rm -rf "$results"
set +e
"$tether" e2e run --suites "$suites" --profile "$native" --out "$results" --jobs 2 --screenshot >"$dir/run.out" 2>&1
rc=$?
set -e
cat "$dir/run.out"
[[ $rc -eq 0 ]] || fail "the native matrix exited $rc"
"$tether" e2e list --suites "$suites" >"$dir/list.out"
python3 - "$results" "$dir/list.out" "$native" <<'PY'
import json, pathlib, sys
out = pathlib.Path(sys.argv[1])
history = json.loads((out / "history.json").read_text())
assert history["schema"] == "tether.e2e.history/v1", history.get("schema")
latest = history["latest"]
assert history["latestGreen"] == latest, "the campaign is not the latest green one"
camp_dir = out / "campaigns" / latest
camp = json.loads((camp_dir / "campaign.json").read_text())
assert camp["schema"] == "tether.e2e.campaign/v1"
t = camp["totals"]
# 4 suites with 3 + 2 + 7 + 8 cases on 3 profiles, the 2 + 8 of session-integrity
# and persistent-chat also on postgres-2node (two nodes on one database);
# warm-continuity and the two agent-session cases do not apply to native (no
# agent process, no agent session of its own): 72 cells run, 18 (9 per
# environment) are not applicable. The 20 cases and daytona-warm-continuity's
# 2 also on ssh (a real sshd per cell: the turns run in a lease there): 57
# more run, 9 not applicable; on daytona the same 57 are skipped without
# $DAYTONA_API_KEY, 9 not applicable.
assert t["selected"] == 129 and t["passed"] == 129 and t["notApplicable"] == 36, t
assert t.get("skipped", 0) == 57, t
suites = {s["suiteId"] for s in camp["suites"]}
assert suites == {"core-compatibility", "session-integrity", "persistent-chat", "task-work",
                  "daytona-warm-continuity"}, suites
# The binary that ran, with its revision; the suites' checkout revision.
assert camp["binary"]["version"].startswith("tether ") and "(revision " in camp["binary"]["version"], camp["binary"]
assert camp["source"]["sha"] and len(camp["source"]["sha"]) == 40, camp["source"]
# Cells in the order the suites define them (`e2e list`: suite, profile,
# environment, case), whatever order the two jobs finished them in.
listed = [l.split()[0] for l in (pathlib.Path(sys.argv[2])).read_text().splitlines() if l.startswith("  ")]
native = set(sys.argv[3].split(","))
expected = [c for c in listed if c.split(".")[1] in native]
seen = list(dict.fromkeys(c["cell"] for c in camp["cells"]))
assert seen == expected, (seen, expected)
for ref in camp["cells"]:
    r = json.loads((camp_dir / ref["result"]).read_text())
    assert r["schema"] == "tether.e2e.result/v1"
    if r["status"] == "not_applicable":
        agent_session = r["caseId"] in ("agent-session-across-sigkill", "stop-then-continue-after-sigkill")
        assert (r["caseId"] == "warm-continuity" and r["notApplicableReason"] == "no agent process") or (
            agent_session and "no agent session of its own" in r["notApplicableReason"]), r
        continue
    if r["status"] == "skipped":
        assert r["environmentId"] == "daytona" and "DAYTONA_API_KEY" in r["skippedReason"], r
        continue
    assert r["status"] == "passed", (r["cell"], r["matcherResults"])
    assert r["cleanup"]["status"] == "passed", r["cleanup"]
    assert r["failureClass"] is None
    assert len(r["suiteDefinitionHash"]) == 64
    assert r["runIds"] and all(m["passed"] for m in r["matcherResults"])
    llm = r["billing"]["llm"]
    assert llm["runCount"] == len(r["runIds"]) and llm["runsWithTokenUsage"] >= 1, llm
    assert llm["costStatus"] in ("unpriced", "partial", "reported"), llm["costStatus"]
    leased = r["environmentId"] == "ssh"
    # the test's ssh host has no price: unpriced, never $0
    assert r["billing"]["runtime"]["costStatus"] == ("unpriced" if leased else "not_metered"), r["billing"]
    if leased:
        assert r["billing"]["runtime"]["leaseCount"] >= 1 and r["billing"]["runtime"]["leaseDurationMs"] > 0, r["billing"]
        assert all(turn["leaseOutcome"] in ("created", "resumed") for turn in r["turns"]), r["turns"]
    for turn in r["turns"]:
        assert turn["runId"], (r["cell"], turn)
    art = camp_dir / "cells" / r["artifacts"]
    # one server's log, or on postgres-2node one per node (and the database's)
    logs = {"local": ["server.log"], "ssh": ["server.log", "sshd.log"]}.get(
        r["environmentId"], ["server-node-a.log", "server-node-b.log", "database.log"])
    assert all((art / l).exists() for l in logs) and (art / "transcript.json").exists(), art
    assert (art / "model-requests.jsonl").stat().st_size > 0, art
PY
[[ -s "$results/dashboard.html" ]] || fail "no dashboard"
if grep -Eq '(src|href)="https?://' "$results/dashboard.html"; then fail "the dashboard loads something from the network"; fi
[[ $(head -c 8 "$results/dashboard.png" | od -An -tx1 | tr -d ' \n') == 89504e470d0a1a0a ]] || fail "dashboard.png is not a PNG"
png_size=$(stat -c %s "$results/dashboard.png")
(( png_size > 20000 )) || fail "dashboard.png is only $png_size bytes"

# ---- 2. a case that cannot pass, and a selection that names nothing ----
# Python that loads OUT (argv[1])'s latest campaign as camp, in camp_dir.
latest_campaign='import json, pathlib, sys
out = pathlib.Path(sys.argv[1])
latest = json.loads((out / "history.json").read_text())["latest"]
camp_dir = out / "campaigns" / latest
camp = json.loads((camp_dir / "campaign.json").read_text())'
mkdir -p "$dir/bad"
cp "$suites/profiles.toml" "$dir/bad/"
cat >"$dir/bad/wrong.toml" <<'TOML'
[suite]
id = "wrong"
title = "A matcher that cannot pass"
description = "Expects a text the model is not asked for."
profiles = ["native-openai-chat"]
environments = ["local"]

[[cases]]
id = "wrong-answer"
title = "Expects a text the model is not asked for"
steps = [
  { do = "create_session" },
  { do = "send", text = "Reply with exactly: {marker1}" },
  { do = "wait", for = "idle" },
]
matchers = [{ kind = "message_exact", text = "{marker2}" }]
TOML
set +e
"$tether" e2e run --suites "$dir/bad" --out "$dir/bad-out" >"$dir/bad.out" 2>&1
rc=$?
set -e
[[ $rc -eq 1 ]] || fail "a failing cell exited $rc" "$dir/bad.out"
python3 - "$dir/bad-out" <<PY
$latest_campaign
assert camp["totals"]["failed"] == 1 and camp["totals"]["retries"] == 0, camp["totals"]
r = json.loads((camp_dir / camp["cells"][0]["result"]).read_text())
assert r["status"] == "failed" and r["failureClass"] == "candidate_failure", r
m = r["matcherResults"][0]
assert not m["passed"] and m["expected"].startswith("MARK2-") and m["actual"].startswith("MARK1-"), m
assert m["why"], m
PY
# A transient failure (the scripted model dies at start, once) is retried
# once, as a fresh cell, and the campaign is green on the retry.
cat >"$dir/flaky-tether" <<SH
#!/usr/bin/env bash
if [[ \$1 == mock-llm && ! -e "$dir/flaked" ]]; then touch "$dir/flaked"; exit 3; fi
exec "$tether" "\$@"
SH
chmod +x "$dir/flaky-tether"
set +e
"$tether" e2e run --suites "$suites" --suite core-compatibility --profile native-openai-chat --env local --case basic-reply \
  --tether "$dir/flaky-tether" --out "$dir/flaky-out" >"$dir/flaky.out" 2>&1
rc=$?
set -e
[[ $rc -eq 0 ]] || fail "a cell that passed on its retry exited $rc" "$dir/flaky.out"
python3 - "$dir/flaky-out" <<PY
$latest_campaign
assert camp["totals"]["passed"] == 1 and camp["totals"]["retries"] == 1, camp["totals"]
first, second = (json.loads((camp_dir / c["result"]).read_text()) for c in camp["cells"])
assert first["attempt"] == 1 and first["status"] == "error", first
assert first["failureClass"] == "transient_infrastructure", first
assert second["attempt"] == 2 and second["status"] == "passed", second
assert first["nonce"] != second["nonce"] and second["nonce"].endswith("-2"), (first["nonce"], second["nonce"])
PY

# A case that does not apply to native profiles is not run, is recorded as
# not_applicable with its reason, and leaves the campaign green.
mkdir -p "$dir/na"
cp "$suites/profiles.toml" "$dir/na/"
cat >"$dir/na/na.toml" <<'TOML'
[suite]
id = "na"
title = "A case that does not apply"
description = "One case runs, the other is not applicable to native profiles."
profiles = ["native-openai-chat"]
environments = ["local"]

[[cases]]
id = "runs"
title = "A reply, and a file whose path is a template"
steps = [
  { do = "create_session" },
  { do = "send", text = "Write file out/{marker}.txt: {phrase}\nReply with exactly: {marker}" },
  { do = "wait", for = "idle" },
  { do = "wait", for = "file", path = "out/{marker}.txt", timeout_ms = 5000 },
]
matchers = [
  { kind = "message_exact", text = "{marker}" },
  { kind = "runtime", value = "{runtime}" },
  { kind = "file_exact", path = "out/{marker}.txt", content = "{phrase}" },
]

[[cases]]
id = "agents-only"
title = "Would fail if it ran"
not_applicable = { native = "only agent programs start a process per turn" }
steps = [
  { do = "create_session" },
  { do = "send", text = "Reply with exactly: {marker1}" },
  { do = "wait", for = "idle" },
]
matchers = [{ kind = "message_exact", text = "{marker2}" }]
TOML
set +e
"$tether" e2e run --suites "$dir/na" --out "$dir/na-out" >"$dir/na.out" 2>&1
rc=$?
set -e
[[ $rc -eq 0 ]] || fail "a campaign with a not-applicable cell exited $rc" "$dir/na.out"
python3 - "$dir/na-out" <<PY
$latest_campaign
t = camp["totals"]
assert t["selected"] == 1 and t["passed"] == 1 and t["notApplicable"] == 1, t
assert camp["status"] == "passed", camp["status"]
na = [json.loads((camp_dir / c["result"]).read_text()) for c in camp["cells"] if c["cell"].endswith("agents-only")]
assert len(na) == 1 and na[0]["status"] == "not_applicable", na
assert na[0]["notApplicableReason"] == "only agent programs start a process per turn", na[0]
assert na[0]["runIds"] == [] and na[0]["sessionId"] is None, na[0]
PY
grep -q 'chip na' "$dir/na-out/dashboard.html" || fail "the dashboard does not show the not-applicable cell"
# `e2e report --campaign`: a stored campaign's page again; an unknown id is a usage error naming it.
na_id=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["latest"])' "$dir/na-out/history.json")
"$tether" e2e report --out "$dir/na-out" --campaign "$na_id" | grep -q "^dashboard: $dir/na-out/dashboard.html$" ||
  fail "report --campaign $na_id did not write the dashboard"
set +e
"$tether" e2e report --out "$dir/na-out" --campaign 20000101T000000Z-beef >/dev/null 2>"$dir/report.err"
rc=$?
set -e
[[ $rc -eq 2 ]] || fail "report of an unknown campaign exited $rc"
grep -q "20000101T000000Z-beef" "$dir/report.err" || fail "the error does not name the campaign" "$dir/report.err"

set +e
"$tether" e2e run --suites "$suites" --suite no-such-suite --out "$dir/none" >/dev/null 2>"$dir/none.err"
rc=$?
set -e
[[ $rc -eq 2 ]] || fail "an unknown suite exited $rc"
grep -q "no-such-suite" "$dir/none.err" || fail "the error does not name the suite" "$dir/none.err"

# ---- 3. Ctrl-C ----
"$tether" e2e run --suites "$suites" --suite persistent-chat --profile "$native" --out "$dir/int-out" --jobs 2 \
  >"$dir/int.out" 2>&1 &
pid=$!
# In the middle: once a cell has started (a signal that came before the
# harness installed its handler would be ignored: a background job of a
# script starts with SIGINT ignored), and a second into it.
for _ in $(seq 600); do
  grep -q ' start ' "$dir/int.out" && break
  kill -0 $pid 2>/dev/null || break
  sleep 0.1
done
grep -q ' start ' "$dir/int.out" || { kill -KILL $pid 2>/dev/null; fail "no cell started within 60 s" "$dir/int.out"; }
sleep 1
kill -INT $pid
set +e
wait $pid
rc=$?
set -e
[[ $rc -eq 130 ]] || fail "Ctrl-C exited $rc" "$dir/int.out"
sleep 0.2
if pgrep -f "$TMPDIR" >/dev/null; then fail "processes left behind: $(pgrep -af "$TMPDIR" | tr '\n' ';')" "$dir/int.out"; fi
echo "e2e matrix: ok"
