#!/usr/bin/env bash
# The work verbs against a real `tether serve` with the built-in scripted
# model: a project over a local bare repository, a planning task whose plan
# is rejected, revised and approved, then done; what `task show` and the
# listings print, --json, and the refusals a user meets.
set -euo pipefail
tether=$1
unset TETHER_TOKEN TETHER_SERVER TETHER_CONFIG
# shellcheck source=serve_lib.sh
source "$(dirname "$0")/serve_lib.sh"

start_server --data "$dir/data"
[[ -n "$url" ]] || fail "the server did not start"
export TETHER_SERVER=$url
run() {
  set +e
  out=$("$tether" "$@" --data "$dir/data" 2>"$dir/err")
  rc=$?
  set -e
}

# A bare repository with one commit on main.
git init -q -b main "$dir/src"
echo "the api" >"$dir/src/README"
git -C "$dir/src" add README
git -C "$dir/src" -c user.name=t -c user.email=t@example.com commit -qm init
git clone -q --bare "$dir/src" "$dir/api.git"

run project new shop --repo "$dir/api.git#main" --description "the shop"
[[ $rc -eq 0 ]] || fail "project new exited $rc: $(cat "$dir/err")"
project=$out
[[ $project == prj_* ]] || fail "project new printed: $project"
run project new shop --repo "$dir/api.git"
[[ $rc -eq 1 ]] || fail "a second project named shop exited $rc"
grep -q "taken" "$dir/err" || fail "the name clash says: $(cat "$dir/err")"
run project new bare
[[ $rc -eq 2 ]] || fail "project new without --repo exited $rc"
run project list
grep -q "shop" <<<"$out" && grep -q "api  $dir/api.git (main)" <<<"$out" || fail "project list: $out"

script='Tool: write_plan {"content":"1. one\n2. two\nDRAFT-CLI"}
Tool: request_plan_approval {}
Tool: write_plan {"content":"1. Tool: finish {\"status\":\"done\",\"summary\":\"did it\"}\n2. Reply with exactly: CLI-DONE\n3. three"}
Tool: request_plan_approval {}
Reply with exactly: PLANNED'
run task new "plan from the cli" --mode planning --project "$project" --message "$script"
[[ $rc -eq 0 ]] || fail "task new exited $rc: $(cat "$dir/err")"
task=$out
[[ $task == tsk_* ]] || fail "task new printed: $task"

waiting() {  # waits until `task show` says the plan waits for approval
  for _ in $(seq 1 200); do
    run task show "$task"
    grep -q "waiting for approval" <<<"$out" && return 0
    sleep 0.05
  done
  fail "the plan never waited for approval: $out"
}
waiting
grep -q "plan: revision 1 of 1" <<<"$out" || fail "task show: $out"
grep -q "DRAFT-CLI" <<<"$out" || fail "task show lacks the draft: $out"
run task reject "$task"
[[ $rc -eq 2 ]] || fail "reject without --reason exited $rc"
run task approve tsk_nosuchtask
[[ $rc -eq 1 ]] || fail "approve of an unknown task exited $rc"
run task reject "$task" --reason "three steps"
[[ $rc -eq 0 ]] || fail "reject exited $rc: $(cat "$dir/err")"
sleep 0.2
waiting
grep -q "plan: revision 2 of 2" <<<"$out" || fail "after the rejection: $out"
run task approve "$task"
[[ $rc -eq 0 ]] || fail "approve exited $rc: $(cat "$dir/err")"
grep -q "approved the plan of $task" <<<"$out" || fail "approve printed: $out"
for _ in $(seq 1 200); do
  run task show "$task" --json
  python3 -c 'import json,sys; d=json.loads(sys.stdin.read())
sys.exit(0 if d["task"]["status"]=="done" and all(r["status"]=="finished" for r in d["runs"]) else 1)' <<<"$out" && break
  sleep 0.05
done
python3 - "$out" <<'PY' || fail "task show --json: $out"
import json, sys
d = json.loads(sys.argv[1])
assert d["task"]["status"] == "done", d["task"]["status"]
assert [r["accepted"] for r in d["plan"]] == [False, True], d["plan"]
assert d["comments"][0]["text"] == "did it", d["comments"]
assert d["preparations"][0]["workspace"]["decision"] == "create", d["preparations"][0]
PY
[[ -f "$dir/data/workspaces/$task/api/README" ]] || fail "the workspace has no checkout of api"
run task list --status done
grep -q "$task  done" <<<"$out" || fail "task list --status done: $out"
run task list --project "$project" --json
python3 -c 'import json,sys; d=json.loads(sys.stdin.read()); assert len(d["tasks"])==1' <<<"$out" || fail "task list --json: $out"
# A message into the done task reopens it and starts a run.
run task send "$task" "Reply with exactly: AGAIN"
[[ $rc -eq 0 ]] || fail "task send exited $rc: $(cat "$dir/err")"
grep -q "AGAIN" <<<"$out" || fail "task send printed: $out"
run task show "$task"
grep -q "status in_progress" <<<"$out" || fail "the message did not reopen the task: $out"
echo "task verbs: ok"
