#!/usr/bin/env bash
# `tether mock-llm` as a user runs it: it prints where it listens, answers
# HTTP there, and exits 0 on SIGTERM; a taken address exits 2 with a message.
# With --tls it answers HTTPS to a client trusting the --tls-cert-out PEM.
set -euo pipefail
tether=$1
out=$(mktemp)
cert=$(mktemp -u)
trap 'rm -f "$out" "$out.tls" "$cert"; [[ -n "${pid:-}" ]] && kill "$pid" 2>/dev/null || true' EXIT

"$tether" mock-llm --listen 127.0.0.1:0 >"$out" 2>&1 &
pid=$!
for _ in $(seq 1 200); do
  grep -q "listening on" "$out" && break
  sleep 0.05
done
line=$(grep "listening on" "$out") || { echo "no listening line:"; cat "$out"; exit 1; }
port=${line##*:}
echo "listening on port $port"

# A health check over plain HTTP (bash's /dev/tcp: no curl needed).
exec 3<>"/dev/tcp/127.0.0.1/$port"
printf 'GET /_mock/health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n' >&3
reply=$(cat <&3)
exec 3>&-
[[ $reply == "HTTP/1.1 200"* ]] || { echo "unexpected reply: $reply"; exit 1; }
[[ $reply == *'"ok"'* ]] || { echo "no ok in: $reply"; exit 1; }

# The same address again is refused with exit code 2.
set +e
"$tether" mock-llm --listen "127.0.0.1:$port" >/dev/null 2>"$out.err"
rc=$?
set -e
[[ $rc -eq 2 ]] || { echo "a taken address exited $rc"; cat "$out.err"; exit 1; }
rm -f "$out.err"

kill -TERM "$pid"
set +e
wait "$pid"
rc=$?
set -e
pid=
[[ $rc -eq 0 ]] || { echo "SIGTERM exit code $rc"; exit 1; }

# HTTPS with a certificate made at start, written where the client reads it.
# Its own output file: the background child truncates a redirected file only
# once it runs, so polling the first server's file could still see its line.
tls_out=$out.tls
"$tether" mock-llm --listen 127.0.0.1:0 --tls --tls-cert-out "$cert" >"$tls_out" 2>&1 &
pid=$!
for _ in $(seq 1 200); do
  grep -q "listening on" "$tls_out" 2>/dev/null && break
  sleep 0.05
done
url=$(sed -n 's/^mock-llm listening on //p' "$tls_out")
[[ $url == https://127.0.0.1:* ]] || { echo "no https listening line:"; cat "$tls_out"; exit 1; }
reply=$(curl -sS --max-time 20 --cacert "$cert" -d '{"model":"m","messages":[{"role":"user","content":"Reply with exactly: sealed"}]}' \
  "${url/127.0.0.1/localhost}/v1/chat/completions")
[[ $reply == *'"content":"sealed"'* ]] || { echo "unexpected HTTPS reply: $reply"; exit 1; }
# Without trusting the certificate, the handshake fails.
if curl -sS --max-time 20 "$url/_mock/health" >/dev/null 2>&1; then echo "an untrusting client connected"; exit 1; fi
kill -TERM "$pid"
wait "$pid"
pid=
echo "ok"
