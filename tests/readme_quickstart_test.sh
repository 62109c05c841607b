#!/usr/bin/env bash
# The README's quick start, run as written: the bash block between
# <!-- quickstart:begin --> and <!-- quickstart:end -->, from the checkout
# (where build/src/tether is), with HOME in a temporary directory so the
# user's data directory is fresh. Each command must succeed; a few of its
# outputs are checked. Its server is stopped whatever happens.
set -euo pipefail
source_dir=$1
build_dir=$2
dir=$(mktemp -d)
fail() { echo "FAIL: $*" >&2; exit 1; }
block=$(sed -n '/<!-- quickstart:begin -->/,/<!-- quickstart:end -->/p' "$source_dir/README.md" | sed '1,2d;$d' | sed '$d')
[[ -n $block ]] || fail "no quick start block in the README"
# The block names build/src/tether; a build directory elsewhere is linked there.
work="$dir/checkout"
mkdir -p "$work/build"
ln -s "$build_dir/src" "$work/build/src"
# Whatever fails, the block's background server is stopped with it.
printf 'set -euo pipefail\ntrap '"'"'kill $(jobs -p) 2>/dev/null; wait'"'"' EXIT\n%s\n' "$block" >"$dir/quickstart.sh"
trap 'rm -rf "$dir"' EXIT
set +e
mkdir -p "$dir/tmp"
(cd "$work" && env -u XDG_DATA_HOME -u TETHER_SERVER -u TETHER_TOKEN -u TETHER_CONFIG HOME="$dir/home" TMPDIR="$dir/tmp" \
   bash "$dir/quickstart.sh" >"$dir/out" 2>"$dir/err" </dev/null)
rc=$?
set -e
cat "$dir/out"
[[ $rc -eq 0 ]] || { cat "$dir/err"; fail "the quick start exited $rc"; }
out=$(cat "$dir/out")
grep -q "^hi$" <<<"$out" || fail "hello.txt was not written in the project directory"
grep -q "once more" <<<"$out" || fail "--continue did not answer"
grep -q "from a pipe" <<<"$out" || fail "the piped prompt did not answer"
grep -q "hello over HTTP" <<<"$out" || fail "send did not answer"
grep -q "from chat" <<<"$out" || fail "chat did not answer"
grep -q "^ID .*AGE .*STATUS" <<<"$out" || fail "sessions printed no table"
grep -q "^RUN .*OUTCOME .*DURATION" <<<"$out" || fail "runs printed no table"
[[ -f "$dir/home/.local/share/tether/tether.db" ]] || fail "the data is not in ~/.local/share/tether"
echo "quickstart: ok"
