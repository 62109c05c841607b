#!/usr/bin/env bash
# A server whose configuration names a profile with an unset key variable
# still serves the others: that profile is disabled with a warning, a
# session of it is refused saying why, and the default profile answers.
set -euo pipefail
tether=$1
unset TETHER_TOKEN TETHER_SERVER TETHER_CONFIG TETHER_TEST_UNSET_KEY
# shellcheck source=serve_lib.sh
source "$(dirname "$0")/serve_lib.sh"

cat >"$dir/tether.toml" <<'TOML'
[profiles.default]
provider = "scripted"
[profiles.real]
provider = "anthropic"
model = "claude-test"
api_key_env = "TETHER_TEST_UNSET_KEY"
TOML
start_server --config "$dir/tether.toml" --data "$dir/data"
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
