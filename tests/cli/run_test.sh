#!/usr/bin/env bash
# `tether run` as a user runs it, with no model configured: the built-in
# scripted model answers in the current directory, a tool writes a file
# there, the transcript and the data directory are printed, and the exit
# code says how the run ended. Then what people do next: --continue, stdin,
# shortened ids, --json, --answer; and a named provider, which the scripted
# model never answers.
set -euo pipefail
tether=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

# It works in the current directory.
mkdir -p "$dir/project"
cd "$dir/project"
out=$("$tether" run --data "$dir/data" $'Write file notes/hello.txt: hello from tether\nReply with exactly: the file is written' 2>"$dir/err")
echo "$out"
grep -q "^model: scripted, the built-in scripted model" "$dir/err" || { echo "no word about the scripted model:"; cat "$dir/err"; exit 1; }
grep -q "tool call write" <<<"$out" || { echo "no tool call in the transcript"; exit 1; }
grep -q "the file is written" <<<"$out" || { echo "no final answer"; exit 1; }
grep -q "^run succeeded" <<<"$out" || { echo "the run did not succeed"; exit 1; }
workspace=$(sed -n 's/^workspace: //p' <<<"$out")
[[ "$workspace" == "$(pwd -P)" ]] || { echo "the workspace is $workspace, not the current directory"; exit 1; }
[[ "$(cat notes/hello.txt)" == "hello from tether" ]] || { echo "the file is not in the current directory"; exit 1; }
[[ -f "$dir/data/tether.db" ]] || { echo "no database in the data directory"; exit 1; }
first=$(sed -n 's/^session //p' <<<"$out")

# --continue adds a turn to the most recent session; the prompt comes from
# stdin when it is not a terminal, or when it is `-`.
out=$(printf 'Reply with exactly: piped in\n' | "$tether" run --data "$dir/data" --continue 2>/dev/null)
grep -q "piped in" <<<"$out" || { echo "the piped prompt was not answered: $out"; exit 1; }
[[ "$(sed -n 's/^session //p' <<<"$out")" == "$first" ]] || { echo "--continue ran another session: $out"; exit 1; }
grep -q "Write file" <<<"$out" && { echo "--continue printed the history again"; exit 1; }
# A shortened id, in any case, names the session; so does `last`.
short=$(tr 'A-Z' 'a-z' <<<"${first:4:10}")
out=$(printf 'Reply with exactly: dash prompt' | "$tether" run --data "$dir/data" --session "$short" - 2>/dev/null)
[[ "$(sed -n 's/^session //p' <<<"$out")" == "$first" ]] || { echo "--session $short did not find $first: $out"; exit 1; }
grep -q "dash prompt" <<<"$out" || { echo "the prompt from stdin (-) was not answered"; exit 1; }
set +e
"$tether" run --data "$dir/data" --session ses_NOPE "hi" >/dev/null 2>"$dir/nope"
rc=$?
set -e
[[ $rc -eq 1 ]] || { echo "an unknown session exited $rc"; exit 1; }
grep -q "names no session" "$dir/nope" || { echo "an unknown session is not named:"; cat "$dir/nope"; exit 1; }

# --json: one event per line, nothing else on stdout.
"$tether" run --data "$dir/data" --json -s last "Reply with exactly: as json" >"$dir/json" 2>/dev/null
python3 - "$dir/json" "$first" <<'PY'
import json, sys
lines = open(sys.argv[1]).read().splitlines()
events = [json.loads(l) for l in lines]
types = [e["type"] for e in events]
assert all(e["session_id"] == sys.argv[2] for e in events), "another session's events"
assert types[0] == "input.admitted" and types[-1] == "execution.finished", types
started = [e for e in events if e["type"] == "execution.started"]
assert started and started[0]["data"]["model"] == "scripted", started
assert any(e["type"] == "text.ended" and e["data"]["text"] == "as json" for e in events), types
PY

# A workspace that holds the data directory is refused: the tools would reach it.
set +e
(cd "$dir" && "$tether" run --data "$dir/data" "hi" >/dev/null 2>"$dir/holds")
rc=$?
set -e
[[ $rc -eq 2 ]] || { echo "a workspace holding the data directory exited $rc"; exit 1; }
grep -q "holds Tether's data directory" "$dir/holds" || { echo "not said why:"; cat "$dir/holds"; exit 1; }

# Without --data, the data goes to the user's data directory, private to the user.
XDG_DATA_HOME="$dir/xdg" "$tether" run "Reply with exactly: in xdg" >/dev/null 2>&1
[[ -f "$dir/xdg/tether/tether.db" ]] || { echo "no store in \$XDG_DATA_HOME/tether"; ls -R "$dir/xdg"; exit 1; }
[[ "$(stat -c %a "$dir/xdg/tether")" == 700 ]] || { echo "the data directory is not 0700"; exit 1; }
[[ "$(stat -c %a "$dir/xdg/tether/tether.db")" == 600 ]] || { echo "tether.db is not 0600"; exit 1; }
[[ ! -e tether-data ]] || { echo "a tether-data directory appeared in the current directory"; exit 1; }

# A named provider is never answered by the scripted model: it goes to the
# provider's official URL (unreachable here, or refusing a fake key).
set +e
TETHER_TEST_KEY=not-a-key "$tether" run --data "$dir/data" --provider anthropic --model claude-test \
  --api-key-env TETHER_TEST_KEY "Reply with exactly: scripted" >"$dir/real" 2>"$dir/real.err"
rc=$?
set -e
[[ $rc -eq 1 ]] || { echo "a named provider without a reachable URL exited $rc"; cat "$dir/real" "$dir/real.err"; exit 1; }
grep -q "^model: claude-test at https://api.anthropic.com/v1" "$dir/real.err" || { echo "the model is not named:"; cat "$dir/real.err"; exit 1; }
grep -qi "scripted model" "$dir/real.err" && { echo "the scripted model ran for a named provider"; exit 1; }
grep -q "^assistant:" "$dir/real" && { echo "something answered for a named provider"; cat "$dir/real"; exit 1; }
grep -q "^run failed" "$dir/real" || { echo "the failed run is not printed"; cat "$dir/real"; exit 1; }
# ... and needs the model named.
set +e
"$tether" run --data "$dir/data" --provider openai-chat "hi" >/dev/null 2>"$dir/nomodel"
rc=$?
set -e
[[ $rc -eq 2 ]] || { echo "a provider without a model exited $rc"; exit 1; }
grep -q -- "--model: name the model that https://api.openai.com/v1 serves" "$dir/nomodel" || { cat "$dir/nomodel"; exit 1; }

# A question ends the run waiting (exit 3); a failing model ends it failed (exit 1).
set +e
"$tether" run --data "$dir/data" $'Ask: Which color? | Red | Blue\nReply with the answer.' >"$dir/ask" 2>/dev/null
rc=$?
set -e
[[ $rc -eq 3 ]] || { echo "a question exited $rc"; cat "$dir/ask"; exit 1; }
grep -q "^question" "$dir/ask" || { echo "the question is not printed"; exit 1; }
asked=$(sed -n 's/^session //p' "$dir/ask")
# It is answered without a server, and the rest of the turn runs.
out=$("$tether" run --data "$dir/data" --session "$asked" --answer 2 2>/dev/null)
grep -q "^    Blue" <<<"$out" || { echo "the answer did not reach the turn: $out"; exit 1; }
grep -q "^run succeeded" <<<"$out" || { echo "the answered turn did not succeed: $out"; exit 1; }
set +e
"$tether" run --data "$dir/data" --session "$asked" --answer 1 >/dev/null 2>"$dir/noq"
rc=$?
set -e
[[ $rc -eq 2 ]] && grep -q "no question waiting" "$dir/noq" || { echo "answering nothing exited $rc:"; cat "$dir/noq"; exit 1; }
set +e
"$tether" run --data "$dir/data" $'Fail with: auth\nReply with exactly: no' >"$dir/fail" 2>/dev/null
rc=$?
set -e
[[ $rc -eq 1 ]] || { echo "an auth failure exited $rc"; cat "$dir/fail"; exit 1; }
grep -q "^run failed" "$dir/fail" || { echo "the failure is not printed"; exit 1; }
# A profile from a configuration file; a typo in it is refused with the key named.
cat >"$dir/tether.toml" <<'TOML'
[profiles.scripted]
provider = "scripted"
max_steps = 5
TOML
printf '[profiles.real]\nprovider = "anthropic"\n' >"$dir/real.toml"
out=$("$tether" run --config "$dir/tether.toml" --profile scripted --data "$dir/data" "Reply with exactly: via profile" 2>/dev/null)
grep -q "via profile" <<<"$out" || { echo "the profile did not run"; echo "$out"; exit 1; }
set +e
"$tether" run --config "$dir/real.toml" --profile real --data "$dir/data" "hi" >/dev/null 2>"$dir/real-profile"
rc=$?
set -e
[[ $rc -eq 2 ]] || { echo "a real provider without a model exited $rc"; exit 1; }
grep -q "profiles.real.model: name the model that https://api.anthropic.com/v1 serves" "$dir/real-profile" || { cat "$dir/real-profile"; exit 1; }
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
