#!/usr/bin/env bash
# Runs the fuzz targets for a while each (`make fuzz`):
#   fuzz/run.sh BUILD_DIR SECONDS TARGET...
# Each target starts from its repository corpus (fuzz/corpus/<target>/) and
# its regressions (fuzz/regressions/<target>/); what it finds goes to
# BUILD_DIR/corpus/<target>/ (never into the repository), crashes to
# BUILD_DIR/artifacts/<target>/, its log to BUILD_DIR/logs/<target>.log.
# FUZZ_PARALLEL targets run at once (default 2), at nice 19.
# Prints each target's final line (executions, exec/s, coverage) and fails
# when any target crashed.
set -uo pipefail
cd "$(dirname "$0")/.."
build=$1
seconds=$2
shift 2
parallel=${FUZZ_PARALLEL:-2}

run_one() {
  local t=$1
  mkdir -p "$build/corpus/$t" "$build/artifacts/$t" "$build/logs" "fuzz/regressions/$t"
  nice -n 19 "$build/fuzz_$t" -max_total_time="$seconds" -timeout=25 -rss_limit_mb=2048 -print_final_stats=1 \
    -artifact_prefix="$build/artifacts/$t/" "$build/corpus/$t" "fuzz/regressions/$t" "fuzz/corpus/$t" \
    >"$build/logs/$t.log" 2>&1
  local rc=$?
  local done_line
  done_line=$(grep -E '^#[0-9]+[[:space:]]+DONE' "$build/logs/$t.log" | tail -1)
  if ((rc == 0)); then
    echo "fuzz $t: ${done_line:-no DONE line}"
  else
    echo "fuzz $t: CRASHED (exit $rc), see $build/logs/$t.log and $build/artifacts/$t/"
  fi
  return $rc
}

failed=0
pids=()
names=()
for t in "$@"; do
  run_one "$t" &
  pids+=($!)
  names+=("$t")
  if ((${#pids[@]} >= parallel)); then
    wait "${pids[0]}" || failed=1
    pids=("${pids[@]:1}")
    names=("${names[@]:1}")
  fi
done
for p in "${pids[@]}"; do wait "$p" || failed=1; done
exit $failed
