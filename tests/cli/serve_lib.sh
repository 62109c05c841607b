# Sourced by the shell tests that run a real `tether serve` (with $tether
# set): a scratch directory $dir, fail() (which shows the end of the server's
# log), and start_server ARGS… which starts `tether serve ARGS… --listen
# 127.0.0.1:0` and sets $server (its pid) and $url once it listens. The EXIT
# trap stops the server and removes $dir.
dir=$(mktemp -d)
server=
cleanup() {
  if [[ -n "$server" ]]; then
    kill "$server" 2>/dev/null || true
    wait "$server" 2>/dev/null || true
  fi
  rm -rf "$dir"
}
trap cleanup EXIT
fail() {
  echo "FAIL: $*"
  echo "--- server log:"
  tail -20 "$dir/serve.err" 2>/dev/null || true
  exit 1
}
start_server() {
  "$tether" serve "$@" --listen 127.0.0.1:0 >"$dir/serve.out" 2>"$dir/serve.err" &
  server=$!
  for _ in $(seq 1 200); do grep -q "^listening on" "$dir/serve.out" && break; sleep 0.05; done
  url=$(sed -n 's/^listening on //p' "$dir/serve.out")
}
