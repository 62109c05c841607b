#!/usr/bin/env bash
# tether doctor reports the bash sandbox: bubblewrap works, a profile with
# sandbox = "off" is a loud warning, and without bubblewrap every sandboxed
# profile is named as running without one. It reports what exists and what
# is configured: each installed agent CLI with its version, where it was
# found and the path; a missing one only when a profile needs it ("not
# installed" and where it looked); a turn only through the runtimes a
# profile uses.
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
# the others missing (PATH holds none of them). Nothing configured uses an
# agent: the installed one is listed, the missing ones are not, no turn runs.
mkdir -p "$dir/agents/node_modules/.bin"
printf '#!/bin/sh\necho "codex-cli 0.171.0"\n' >"$dir/agents/node_modules/.bin/codex"
chmod +x "$dir/agents/node_modules/.bin/codex"
doctor_agents() {
  TETHER_AGENTS_PREFIX=$dir/agents PATH=/usr/bin:/bin "$tether" doctor --json --config "$1" \
    --data "$dir/data" --server http://127.0.0.1:1 || true
}
out=$(doctor_agents "$dir/config.toml")
python3 - "$out" "$dir/agents/node_modules/.bin" <<'PY' || fail "doctor agents, none configured: $out"
import json, sys
c = {x["check"]: x for x in json.loads(sys.argv[1])["checks"]}
bin = sys.argv[2]
codex = c["agent codex"]
assert codex["status"] == "ok", codex
assert codex["detail"] == "0.171.0, found in prefix: " + bin + "/codex", codex
for kind in ["claude", "opencode", "codex-acp", "claude-agent-acp"]:
    assert "agent " + kind not in c, c["agent " + kind]
assert not [k for k in c if k.startswith("runtime ")], [k for k in c if k.startswith("runtime ")]
# Without a token file there is no token-file line, and the data dir says it is not made yet.
assert "token file" not in c, c["token file"]
assert "not created yet" in c["data dir"]["detail"], c["data dir"]
PY

# Profiles that use codex-exec and claude: the missing claude is broken and
# names the profile; the turn through codex-exec runs and fails (the fake
# codex only prints its version), so it is broken too; nothing else runs.
cat >"$dir/agents.toml" <<'TOML'
[profiles.cx]
runtime = "codex-exec"
[profiles.cl]
runtime = "claude-print"
TOML
out=$(doctor_agents "$dir/agents.toml")
python3 - "$out" "$dir/agents/node_modules/.bin" <<'PY' || fail "doctor agents, two configured: $out"
import json, sys
doc = json.loads(sys.argv[1])
c = {x["check"]: x for x in doc["checks"]}
bin = sys.argv[2]
assert doc["ok"] is False, doc
a = c["agent claude"]
assert a["status"] == "broken", a
assert a["detail"].startswith("claude not installed (looked in " + bin), a
assert "PATH /usr/bin:/bin" in a["detail"] and "profiles cl need it" in a["detail"], a
for kind in ["opencode", "codex-acp", "claude-agent-acp"]:
    assert "agent " + kind not in c, c["agent " + kind]
r = c["runtime codex-exec"]
assert r["status"] == "broken" and "a turn against the scripted model failed" in r["detail"], r
assert sorted(k for k in c if k.startswith("runtime ")) == ["runtime codex-exec"], c
assert "runtime codex-exec" in c["profile cx"]["detail"], c["profile cx"]
PY

# --all-runtimes: a turn through every runtime of an installed CLI (the fake
# codex's two), configured or not: failures of unconfigured ones only warn.
out=$(TETHER_AGENTS_PREFIX=$dir/agents PATH=/usr/bin:/bin "$tether" doctor --json --all-runtimes \
        --config "$dir/config.toml" --data "$dir/data" --server http://127.0.0.1:1 || true)
python3 - "$out" <<'PY' || fail "doctor --all-runtimes: $out"
import json, sys
c = {x["check"]: x for x in json.loads(sys.argv[1])["checks"]}
assert sorted(k for k in c if k.startswith("runtime ")) == ["runtime codex", "runtime codex-exec"], c
for kind in ["codex-exec", "codex"]:
    r = c["runtime " + kind]
    assert r["status"] == "warn" and "a turn against the scripted model failed" in r["detail"], r
PY
echo "doctor sandbox and agents: ok"
