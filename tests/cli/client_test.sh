#!/usr/bin/env bash
# The client verbs against a real `tether serve` with the built-in scripted
# model: each verb's output and exit code, --json parsing as JSON, and the
# failures a user meets (no server: 4, a wrong token: 1 with a 401 message,
# bad usage: 2, a question: 3, Ctrl-C: 130).
set -euo pipefail
tether=$1
unset TETHER_TOKEN TETHER_SERVER TETHER_CONFIG
# shellcheck source=serve_lib.sh
source "$(dirname "$0")/serve_lib.sh"

start_server --data "$dir/data"
[[ -n "$url" ]] || fail "the server did not start"
[[ -s "$dir/data/token" ]] || fail "no token file"
# The server from $TETHER_SERVER, the token from <data>/token.
export TETHER_SERVER=$url
t() {
  local verb=$1
  shift
  "$tether" "$verb" --data "$dir/data" "$@"
}
# Runs a verb, keeping its exit code in $rc, stdout in $out, stderr in $dir/err.
run() {
  set +e
  out=$(t "$@" 2>"$dir/err")
  rc=$?
  set -e
}
is_json_lines() { python3 -c 'import json,sys
lines=[l for l in sys.stdin if l.strip()]
assert lines, "no output"
for l in lines: json.loads(l)'; }

run sessions
[[ $rc -eq 0 ]] || fail "sessions exited $rc: $(cat "$dir/err")"
grep -q "no sessions" <<<"$out" || fail "an empty server lists: $out"

run new --title "client test"
[[ $rc -eq 0 ]] || fail "new exited $rc: $(cat "$dir/err")"
s=$out
[[ "$s" == ses_* ]] || fail "new printed '$s'"

# send: the reply streams, the run line closes the turn, exit 0.
run send "$s" "Reply with exactly: hello from the client"
echo "$out"
[[ $rc -eq 0 ]] || fail "send exited $rc: $(cat "$dir/err")"
grep -q "hello from the client" <<<"$out" || fail "send did not print the reply"
grep -q "^run succeeded" <<<"$out" || fail "send did not print the run line"

run sessions
grep -q "$s" <<<"$out" || fail "sessions does not list $s: $out"
grep -q "client test" <<<"$out" || fail "sessions does not show the title"
run sessions --json
is_json_lines <<<"$out" || fail "sessions --json: $out"

# show: the transcript.
run show "$s"
[[ $rc -eq 0 ]] || fail "show exited $rc"
grep -q "Reply with exactly: hello from the client" <<<"$out" || fail "show lacks the user text: $out"
grep -q "    hello from the client" <<<"$out" || fail "show lacks the assistant text: $out"
run show "$s" --json
python3 -c 'import json,sys; d=json.loads(sys.stdin.read()); assert d["session"]["id"]; assert d["messages"]' <<<"$out" \
  || fail "show --json: $out"

# A tool call and its result.
run send "$s" $'Write file notes/a.txt: written by send\nReply with exactly: done writing'
[[ $rc -eq 0 ]] || fail "a tool turn exited $rc: $out"
grep -q "^tool call write" <<<"$out" || fail "no tool call printed: $out"
grep -q "done writing" <<<"$out" || fail "no reply after the tool: $out"

# send --json: one event per line, ending with execution.finished.
run send "$s" --json "Reply with exactly: json turn"
[[ $rc -eq 0 ]] || fail "send --json exited $rc"
is_json_lines <<<"$out" || fail "send --json is not JSON lines: $out"
tail -1 <<<"$out" | grep -q '"execution.finished"' || fail "send --json does not end with execution.finished"

# events: a page, as text and JSON.
run events "$s" --after 0 --limit 5
[[ $rc -eq 0 ]] || fail "events exited $rc"
grep -q "session.created" <<<"$out" || fail "events lacks session.created: $out"
run events "$s" --json
python3 -c 'import json,sys; d=json.loads(sys.stdin.read()); assert any(e["type"]=="execution.finished" for e in d["events"])' \
  <<<"$out" || fail "events --json: $out"

# stop on an idle session, reset.
run stop "$s"
[[ $rc -eq 0 ]] || fail "stop exited $rc"
grep -q "nothing was running" <<<"$out" || fail "stop on an idle session said: $out"
run reset "$s"
[[ $rc -eq 0 ]] || fail "reset exited $rc"
grep -q "generation 1" <<<"$out" || fail "reset said: $out"
run reset "$s" --json
python3 -c 'import json,sys; assert json.loads(sys.stdin.read())["generation"] == 2' <<<"$out" || fail "reset --json: $out"

# A question: exit 3 with numbered options; answer by number; the run goes on.
run send "$s" $'Ask: Which color? | Red | Blue\nReply with the answer.'
echo "$out"
[[ $rc -eq 3 ]] || fail "a question exited $rc"
grep -q "^question (int_.*): Which color?" <<<"$out" || fail "the question is not printed"
grep -q "2. Blue \[blue\]" <<<"$out" || fail "the options are not numbered"
interaction=$(grep -o 'int_[0-9A-Za-z_-]*' <<<"$out" | head -1)
run answer "$interaction" 7
[[ $rc -eq 2 ]] || fail "an unknown option number exited $rc"
grep -q "no option" "$dir/err" || fail "an unknown option is not explained: $(cat "$dir/err")"
# answer prints the rest of the turn, like send, and exits with its outcome.
run answer "$interaction" 2
[[ $rc -eq 0 ]] || fail "answer exited $rc: $(cat "$dir/err")"
grep -q "^    Blue" <<<"$out" || fail "answer did not print the rest of the turn: $out"
grep -q "^run succeeded" <<<"$out" || fail "answer did not print the turn's end: $out"
run show "$s"
grep -q "^    Blue" <<<"$out" || fail "the answer did not reach the run: $out"
run answer "$interaction" 1
[[ $rc -eq 1 ]] || fail "answering twice exited $rc"
grep -q "conflict" "$dir/err" || fail "answering twice: $(cat "$dir/err")"

# --detach returns once admitted.
run send "$s" --detach "Reply with exactly: detached"
[[ $rc -eq 0 ]] || fail "send --detach exited $rc"
grep -q "^admitted msg_" <<<"$out" || fail "send --detach said: $out"

# attach follows a running turn from its start; a shortened id names it.
run send "${s:0:12}" --detach $'Stream slowly: 150\nReply with exactly: a turn that takes a little while to stream'
[[ $rc -eq 0 ]] || fail "send --detach by prefix exited $rc: $(cat "$dir/err")"
run attach last
[[ $rc -eq 0 ]] || fail "attach exited $rc: $(cat "$dir/err")"
grep -q "a turn that takes a little while to stream" <<<"$out" || fail "attach did not print the turn: $out"
grep -q "^run succeeded — [0-9.]*s, " <<<"$out" || fail "the summary has no duration: $out"
run attach "$s"
[[ $rc -eq 0 ]] && grep -q "no turn is running" <<<"$out" || fail "attach to an idle session said ($rc): $out"
run runs "$s"
[[ $rc -eq 0 ]] || fail "runs exited $rc"
grep -q "^exe_.*succeeded .* native / scripted" <<<"$out" || fail "runs lists no succeeded run with its model: $out"
run show "$(tr 'A-Z' 'a-z' <<<"${s:4:10}")"
grep -q "^workspace: $dir/data/workspaces/$s" <<<"$out" || fail "show by lower-case prefix printed no workspace: $out"
run sessions --json
python3 -c 'import json,sys
d=json.loads(sys.stdin.read()); s=d["sessions"][0]
assert s["profile"] == "default" and s["workspace"].endswith("/workspaces/" + s["id"]), s
assert s["usage"]["input_tokens"] > 0, s' <<<"$out" || fail "sessions --json lacks the profile, workspace or usage: $out"

# A failing run exits 1 and says so.
run send "$s" $'Fail with: auth\nReply with exactly: no'
[[ $rc -eq 1 ]] || fail "a failed run exited $rc: $out"
grep -q "^run failed" <<<"$out" || fail "the failure is not printed: $out"

# --no-resume to an idle session only admits: the input waits, pending.
run send "$s" --no-resume "Reply with exactly: later"
[[ $rc -eq 0 ]] || fail "send --no-resume exited $rc: $(cat "$dir/err")"
grep -q "^admitted msg_.*pending" <<<"$out" || fail "send --no-resume said: $out"
run sessions
grep -q "$s.*idle  *1  default/native .*client test" <<<"$out" || fail "the pending input is not counted: $out"

# events --follow --json: one event per line until Ctrl-C (130).
"$tether" events --data "$dir/data" "$s" --after 0 --follow --json >"$dir/follow" 2>"$dir/follow.err" &
pid=$!
for _ in $(seq 1 100); do grep -q '"session.created"' "$dir/follow" && break; sleep 0.05; done
kill -INT "$pid"
set +e
wait "$pid"
rc=$?
set -e
[[ $rc -eq 130 ]] || fail "events --follow exited $rc: $(cat "$dir/follow.err")"
is_json_lines <"$dir/follow" || fail "events --follow --json is not JSON lines"

# chat, scripted: one turn per line, /quit.
set +e
out=$(printf 'Reply with exactly: hi from chat\nReply with exactly: second line\n/quit\n' |
  "$tether" chat --data "$dir/data" 2>"$dir/err")
rc=$?
set -e
echo "$out"
[[ $rc -eq 0 ]] || fail "chat exited $rc: $(cat "$dir/err")"
grep -q "^session ses_.* (new)" <<<"$out" || fail "chat did not create a session"
grep -q "hi from chat" <<<"$out" || fail "chat did not print the first reply"
grep -q "second line" <<<"$out" || fail "chat did not print the second reply"
chatted=$(sed -n 's/^session \(ses_[0-9A-Z]*\) (new)$/\1/p' <<<"$out")

# chat SESSION prints the recent history first; a """ block is one message.
set +e
out=$(printf '"""\nReply with exactly: block reply\nand a second line of the same message\n"""\n/quit\n' |
  "$tether" chat --data "$dir/data" "$chatted" 2>"$dir/err")
rc=$?
set -e
[[ $rc -eq 0 ]] || fail "chat SESSION exited $rc: $(cat "$dir/err")"
grep -q "^    hi from chat" <<<"$out" || fail "chat SESSION did not print the history first: $out"
grep -q "block reply" <<<"$out" || fail "the block was not answered: $out"
run show "$chatted"
python3 - "$out" <<'PY' || fail "the block is not one user message: $out"
import sys
text = sys.argv[1]
assert "user:\n    Reply with exactly: block reply\n    and a second line of the same message\n" in text, text
PY

# chat joins a waiting session, shows its question, and a typed number answers it.
run new
s2=$out
run send "$s2" $'Ask: Which size? | Small | Large\nReply with the answer.'
[[ $rc -eq 3 ]] || fail "a second question exited $rc"
set +e
out=$(printf '2\n/quit\n' | "$tether" chat --data "$dir/data" "$s2" 2>"$dir/err")
rc=$?
set -e
echo "$out"
[[ $rc -eq 0 ]] || fail "chat on a waiting session exited $rc: $(cat "$dir/err")"
grep -q "2. Large \[large\]" <<<"$out" || fail "chat did not show the open question"
grep -q "^    Large" <<<"$out" || fail "the typed number did not answer the question"

# Failures: an unknown session, no server, a wrong token, bad usage.
run show ses_nosuchsession
[[ $rc -eq 1 ]] || fail "an unknown session exited $rc"
grep -q "^tether: 'ses_nosuchsession' names no session" "$dir/err" || fail "an unknown session: $(cat "$dir/err")"
run sessions --server http://127.0.0.1:1
[[ $rc -eq 4 ]] || fail "no server exited $rc"
grep -q "cannot reach the server at http://127.0.0.1:1 (connection refused)" "$dir/err" \
  || fail "no server: $(cat "$dir/err")"
run sessions --token wrong
[[ $rc -eq 1 ]] || fail "a wrong token exited $rc"
grep -q "unauthorized.*--token" "$dir/err" || fail "a wrong token: $(cat "$dir/err")"
set +e
TETHER_TOKEN=wrong "$tether" sessions --data "$dir/data" >/dev/null 2>"$dir/err"
rc=$?
set -e
[[ $rc -eq 1 ]] || fail "a wrong \$TETHER_TOKEN exited $rc"
grep -q 'TETHER_TOKEN' "$dir/err" || fail "a wrong \$TETHER_TOKEN: $(cat "$dir/err")"
run send
[[ $rc -eq 2 ]] || fail "send without arguments exited $rc"

# doctor: the server is reachable and the token accepted.
run doctor --json
python3 -c 'import json,sys; d=json.loads(sys.stdin.read()); c={x["check"]:x for x in d["checks"]}; assert c["server"]["status"]=="ok", c; assert c["token"]["status"]=="ok", c' \
  <<<"$out" || fail "doctor --json: $out"
[[ $rc -eq 0 ]] || fail "doctor exited $rc: $out"

# Ctrl-C during send interrupts the session's turn and exits 130.
# (not through t: a backgrounded function is a subshell, which the signal would not pass)
"$tether" send --data "$dir/data" "$s" $'Stream slowly: 200\nReply with exactly: a long answer that takes a while to stream out' \
  >"$dir/int" 2>"$dir/int.err" &
pid=$!
for _ in $(seq 1 100); do grep -q "assistant:" "$dir/int" && break; sleep 0.05; done
kill -INT "$pid"
set +e
wait "$pid"
rc=$?
set -e
[[ $rc -eq 130 ]] || fail "an interrupted send exited $rc: $(cat "$dir/int")"
grep -q "^run interrupted" "$dir/int" || fail "the interruption is not printed: $(cat "$dir/int")"
echo ok
