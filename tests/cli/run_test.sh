#!/usr/bin/env bash
# `tether run` as a user runs it, with no model configured: the built-in
# scripted model answers, a tool writes a file in the workspace, the
# transcript and the data directory are printed, and the exit code says how
# the run ended.
set -euo pipefail
tether=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

out=$("$tether" run --data "$dir/data" $'Write file notes/hello.txt: hello from tether\nReply with exactly: the file is written' 2>"$dir/err")
echo "$out"
grep -q "built-in scripted model" "$dir/err" || { echo "no word about the scripted model:"; cat "$dir/err"; exit 1; }
grep -q "tool call write" <<<"$out" || { echo "no tool call in the transcript"; exit 1; }
grep -q "the file is written" <<<"$out" || { echo "no final answer"; exit 1; }
grep -q "^run succeeded" <<<"$out" || { echo "the run did not succeed"; exit 1; }
workspace=$(sed -n 's/^workspace: //p' <<<"$out")
[[ "$(cat "$workspace/notes/hello.txt")" == "hello from tether" ]] || { echo "the file is not in $workspace"; exit 1; }
[[ -f "$dir/data/tether.db" ]] || { echo "no database in the data directory"; exit 1; }

# A question ends the run waiting (exit 3); a failing model ends it failed (exit 1).
set +e
"$tether" run --data "$dir/data" $'Ask: Which color? | Red | Blue\nReply with the answer.' >"$dir/ask" 2>/dev/null
rc=$?
set -e
[[ $rc -eq 3 ]] || { echo "a question exited $rc"; cat "$dir/ask"; exit 1; }
grep -q "^question" "$dir/ask" || { echo "the question is not printed"; exit 1; }
set +e
"$tether" run --data "$dir/data" $'Fail with: auth\nReply with exactly: no' >"$dir/fail" 2>/dev/null
rc=$?
set -e
[[ $rc -eq 1 ]] || { echo "an auth failure exited $rc"; cat "$dir/fail"; exit 1; }
grep -q "^run failed" "$dir/fail" || { echo "the failure is not printed"; exit 1; }
# A profile from a configuration file; a typo in it is refused with the key named.
cat >"$dir/tether.toml" <<'TOML'
[profiles.scripted]
provider = "anthropic"
max_steps = 5
TOML
out=$("$tether" run --config "$dir/tether.toml" --profile scripted --data "$dir/data" "Reply with exactly: via anthropic" 2>/dev/null)
grep -q "via anthropic" <<<"$out" || { echo "the profile did not run"; echo "$out"; exit 1; }
printf '[profiles.scripted]\nmodle = "x"\n' >"$dir/bad.toml"
set +e
"$tether" run --config "$dir/bad.toml" --profile scripted --data "$dir/data" "hi" >/dev/null 2>"$dir/bad.err"
rc=$?
set -e
[[ $rc -eq 2 ]] || { echo "a bad config exited $rc"; exit 1; }
grep -q "modle" "$dir/bad.err" || { echo "the bad key is not named"; cat "$dir/bad.err"; exit 1; }
# SIGINT mid-turn stops the run: it finishes interrupted and the command exits 130.
"$tether" run --data "$dir/data" $'Stream slowly: 200\nReply with exactly: a long answer that takes a while to stream out' \
  >"$dir/int" 2>/dev/null &
pid=$!
for _ in $(seq 1 100); do grep -q "assistant:" "$dir/int" && break; sleep 0.05; done
kill -INT "$pid"
set +e
wait "$pid"
rc=$?
set -e
[[ $rc -eq 130 ]] || { echo "an interrupted run exited $rc"; cat "$dir/int"; exit 1; }
grep -q "^run interrupted" "$dir/int" || { echo "the interruption is not printed"; cat "$dir/int"; exit 1; }
echo ok
