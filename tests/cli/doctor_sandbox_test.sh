#!/usr/bin/env bash
# tether doctor reports the bash sandbox: bubblewrap works, a profile with
# sandbox = "off" is a loud warning, and without bubblewrap every sandboxed
# profile is named as running without one. It lists every agent runtime with
# its version, where it was found and the path, or "not installed" and where
# it looked.
set -euo pipefail
tether=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

cat >"$dir/config.toml" <<'TOML'
[profiles.loose]
sandbox = "off"
[profiles.strict]
sandbox = "read-only"
TOML

# The sandbox checks run with no agent CLI to be found (an empty prefix, a
# PATH without them): doctor's smoke turn per installed agent is slow and is
# not what these two cases are about.
mkdir -p "$dir/none"
export TETHER_AGENTS_PREFIX=$dir/none
out=$(PATH=/usr/bin:/bin "$tether" doctor --json --config "$dir/config.toml" --data "$dir/data" --server http://127.0.0.1:1 || true)
python3 - "$out" <<'PY' || fail "doctor with bubblewrap: $out"
import json, sys
c = {x["check"]: x for x in json.loads(sys.argv[1])["checks"]}
assert c["sandbox"]["status"] == "ok" and "bubblewrap works" in c["sandbox"]["detail"], c["sandbox"]
assert c["sandbox off"]["status"] == "warn" and "loose" in c["sandbox off"]["detail"], c["sandbox off"]
assert "WARNING" in c["sandbox off"]["detail"], c["sandbox off"]
assert "strict" not in c["sandbox off"]["detail"], c["sandbox off"]
assert "sandbox read-only" in c["profile strict"]["detail"], c["profile strict"]
PY

# No bubblewrap on PATH: the sandboxed profiles are named.
out=$(PATH=/nonexistent "$tether" doctor --json --config "$dir/config.toml" --data "$dir/data" --server http://127.0.0.1:1 || true)
python3 - "$out" <<'PY' || fail "doctor without bubblewrap: $out"
import json, sys
c = {x["check"]: x for x in json.loads(sys.argv[1])["checks"]}
s = c["sandbox"]
assert s["status"] == "warn" and "not installed" in s["detail"] and "WITHOUT a sandbox" in s["detail"], s
assert "strict" in s["detail"] and "default" in s["detail"] and "loose" not in s["detail"], s
PY
# The agent runtimes: one fake CLI in a prefix given by TETHER_AGENTS_PREFIX,
# the others missing (PATH holds none of them).
mkdir -p "$dir/agents/node_modules/.bin"
printf '#!/bin/sh\necho "codex-cli 0.171.0"\n' >"$dir/agents/node_modules/.bin/codex"
chmod +x "$dir/agents/node_modules/.bin/codex"
out=$(TETHER_AGENTS_PREFIX=$dir/agents PATH=/usr/bin:/bin "$tether" doctor --json --config "$dir/config.toml" \
        --data "$dir/data" --server http://127.0.0.1:1 || true)
python3 - "$out" "$dir/agents/node_modules/.bin" <<'PY' || fail "doctor agents: $out"
import json, sys
c = {x["check"]: x for x in json.loads(sys.argv[1])["checks"]}
bin = sys.argv[2]
codex = c["agent codex"]
assert codex["status"] == "ok", codex
assert codex["detail"] == "0.171.0, found in prefix: " + bin + "/codex", codex
for kind in ["claude", "opencode", "codex-acp", "claude-agent-acp"]:
    a = c["agent " + kind]
    assert a["status"] == "warn", a
    assert a["detail"].startswith(kind + " not installed (looked in " + bin), a
    assert "PATH /usr/bin:/bin" in a["detail"], a
# The smoke turn of each runtime of that CLI ran and failed: the fake codex
# only prints its version. Runtimes of missing CLIs are not checked.
for kind in ["codex-exec", "codex"]:
    r = c["runtime " + kind]
    assert r["status"] == "warn" and "a turn against the scripted model failed" in r["detail"], r
for kind in ["claude-print", "opencode-run", "claude", "opencode", "acp-codex", "acp-claude", "acp-opencode"]:
    r = c["runtime " + kind]
    assert r["status"] == "warn" and r["detail"].startswith("not checked: "), r
PY
echo "doctor sandbox and agents: ok"
