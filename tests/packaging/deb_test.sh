#!/usr/bin/env bash
# The Debian package as a user installs it: CPack builds it from this build
# tree, it is unpacked into a temporary root (dpkg -x), and the installed
# binary answers --version and runs doctor; the package declares its library
# dependencies, holds the man page, completions, unit and license, and its
# binary is stripped.
set -euo pipefail
build=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

cpack --config "$build/CPackConfig.cmake" -B "$dir/out" >"$dir/cpack.log" 2>&1 || { cat "$dir/cpack.log"; fail "cpack failed"; }
deb=$(ls "$dir"/out/tether_*.deb 2>/dev/null | head -1)
[[ -n $deb ]] || { cat "$dir/cpack.log"; fail "no tether_*.deb"; }
echo "package: $(basename "$deb"), $(du -k "$deb" | cut -f1) KiB"

depends=$(dpkg-deb -f "$deb" Depends)
for lib in libsqlite3 libssl3 libfmt libspdlog libboost-json; do
  [[ $depends == *"$lib"* ]] || fail "Depends lacks $lib: $depends"
done
dpkg-deb -e "$deb" "$dir/control"
[[ -x "$dir/control/postinst" ]] || fail "no postinst (the tether user)"

dpkg -x "$deb" "$dir/root"
bin="$dir/root/usr/bin/tether"
[[ -x $bin ]] || fail "no /usr/bin/tether in the package"
for f in usr/share/man/man1/tether.1 usr/share/bash-completion/completions/tether \
         usr/share/zsh/vendor-completions/_tether usr/lib/systemd/system/tether.service usr/share/doc/tether/copyright; do
  [[ -s "$dir/root/$f" ]] || fail "the package lacks $f"
done
readelf -S "$bin" | grep -q "\.debug_info" && fail "the packaged binary carries debug information"
size=$(stat -c %s "$bin")
echo "installed binary: $((size / 1024 / 1024)) MiB"

version=$("$bin" --version)
[[ $version == "tether $(dpkg-deb -f "$deb" Version | sed 's/-.*//') (revision "* ]] || fail "--version says '$version'"
rc=0
HOME="$dir/home" "$bin" doctor --data "$dir/data" >"$dir/doctor" 2>&1 || rc=$?
grep -q "tether" "$dir/doctor" || { cat "$dir/doctor"; fail "doctor printed nothing useful"; }
[[ $rc -eq 0 || $rc -eq 1 ]] || { cat "$dir/doctor"; fail "doctor exited $rc"; }
grep -q "ExecStart=.*tether serve --data /var/lib/tether" "$dir/root/usr/lib/systemd/system/tether.service" ||
  fail "the unit does not serve /var/lib/tether"
grep -q '^\.TH TETHER 1' "$dir/root/usr/share/man/man1/tether.1" || fail "the man page has no .TH"
grep -q '"tether run' "$dir/root/usr/share/man/man1/tether.1" || fail "the man page lacks the run verb"
echo "deb: ok"
