#!/usr/bin/env bash
# A server whose configuration names a profile with an unset key variable
# still serves the others: that profile is disabled with a warning, a
# session of it is refused saying why, and the default profile answers.
set -euo pipefail
tether=$1
dir=$(mktemp -d)
unset TETHER_TOKEN TETHER_SERVER TETHER_CONFIG TETHER_TEST_UNSET_KEY
server=
cleanup() {
  if [[ -n "$server" ]]; then
    kill "$server" 2>/dev/null || true
    wait "$server" 2>/dev/null || true
  fi
  rm -rf "$dir"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; tail -20 "$dir/serve.err" || true; exit 1; }

cat >"$dir/tether.toml" <<'TOML'
[profiles.default]
provider = "scripted"
[profiles.real]
provider = "anthropic"
model = "claude-test"
api_key_env = "TETHER_TEST_UNSET_KEY"
TOML
"$tether" serve --config "$dir/tether.toml" --data "$dir/data" --listen 127.0.0.1:0 >"$dir/serve.out" 2>"$dir/serve.err" &
server=$!
for _ in $(seq 1 200); do grep -q "^listening on" "$dir/serve.out" && break; sleep 0.05; done
url=$(sed -n 's/^listening on //p' "$dir/serve.out")
[[ -n "$url" ]] || fail "the server did not start with a profile whose key is unset"
grep -q "profile real is disabled: TETHER_TEST_UNSET_KEY is not set" "$dir/serve.err" || fail "no warning about the disabled profile"
export TETHER_SERVER=$url
rc=0
"$tether" new --data "$dir/data" --profile real >"$dir/new.out" 2>"$dir/new.err" || rc=$?
[[ $rc -eq 1 ]] || fail "a session of the disabled profile: exit $rc"
grep -q "profile 'real' is disabled on this node: TETHER_TEST_UNSET_KEY is not set" "$dir/new.err" ||
  fail "the refusal does not say why: $(cat "$dir/new.err")"
s=$("$tether" new --data "$dir/data")
out=$("$tether" send --data "$dir/data" "$s" "Reply with exactly: still serving")
grep -q "still serving" <<<"$out" || fail "the default profile did not answer: $out"
echo "serve profiles: ok"
