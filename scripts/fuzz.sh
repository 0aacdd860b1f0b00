#!/usr/bin/env bash
# Builds the libFuzzer targets (tests/fuzz, clang + ASan + UBSan in build-fuzz/) and runs each one
# in turn, niced, for SECONDS; prints one JSON summary line per target on stdout.
#
# Why: the readers of user files (configs, dataset yamls, labels, COCO json, results, checkpoints,
# image headers, Exif, pickles) must reject every bad input with an error, never crash; a fuzzer finds the
# inputs nobody writes by hand. The corpus grows in $TRAINER_CACHE/fuzz/<target> (outside the clone,
# reused by the next run), seeded from tests/fuzz/seeds/<target>; every crash, leak, timeout or
# out-of-memory input is copied into tests/fuzz/regressions/<target>/, which ctest replays in the
# normal build (fuzz_replay_<target>) once the defect is fixed. Logs: $TRAINER_CACHE/fuzz/logs.
#
# Usage: scripts/fuzz.sh [SECONDS] [TARGET...]   (default 600 s each, every target)
# Extra libFuzzer flags: TRAINER_FUZZ_FLAGS="-max_len=8192 ...".
set -euo pipefail
source "$(dirname "$0")/env.sh"

ALL_TARGETS=(config dataset_yaml yolo_labels coco_json coco_results checkpoint weights pickle
             image_header exif results_csv predict_sources label_cache disk_cache)
MAX_RESTARTS=3  # after a crash the target restarts with the time left, at most this many times

seconds=600
if [[ "${1:-}" =~ ^[0-9]+$ ]]; then
  seconds=$1
  shift
fi
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=("${ALL_TARGETS[@]}")
for t in "${targets[@]}"; do
  [[ " ${ALL_TARGETS[*]} " == *" $t "* ]] || { echo "unknown target '$t' (${ALL_TARGETS[*]})" >&2; exit 2; }
done

log() { printf '[fuzz] %s\n' "$*" >&2; }

"$TRAINER_ROOT/scripts/setup.sh" --fuzz
"$TRAINER_ROOT/scripts/build.sh" --fuzz "${targets[@]/#/fuzz_}" >&2

# Findings stop the input at once: ASan reports, UBSan (no recover) aborts.
export ASAN_OPTIONS=${ASAN_OPTIONS:-abort_on_error=1:symbolize=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

# The last value of `key: N` (libFuzzer's progress lines) or `stat::key: N` in a log, or 0.
last_value() {
  local v
  v=$(grep -oE "$1:? +[0-9]+" "$2" | tail -1 | grep -oE '[0-9]+$' || true)
  echo "${v:-0}"
}

fuzz_one() {
  local t=$1
  local exe=$TRAINER_BUILD_FUZZ/tests/fuzz/fuzz_$t
  local corpus=$TRAINER_CACHE/fuzz/$t
  local artifacts=$TRAINER_CACHE/fuzz/artifacts/$t
  local logs=$TRAINER_CACHE/fuzz/logs
  local seeds=$TRAINER_ROOT/tests/fuzz/seeds/$t
  local regressions=$TRAINER_ROOT/tests/fuzz/regressions/$t
  mkdir -p "$corpus" "$artifacts" "$logs"
  local flags=() asan_options=$ASAN_OPTIONS
  # LibTorch leaks on some corrupt inputs, outside the project: miniz's reader state when it
  # refuses a zip, and dicts, strings and tensors the unpickler built (indirect leaks, as from a
  # reference cycle). Leak checking, per input and at exit, would stop this target on those.
  if [ "$t" = checkpoint ] || [ "$t" = weights ]; then
    flags+=(-detect_leaks=0)
    asan_options=$asan_options:detect_leaks=0
  fi
  local start=$SECONDS executions=0 crashes=0 restarts=0 saved=()
  local run_log
  while :; do
    local left=$((seconds - (SECONDS - start)))
    [ "$left" -gt 0 ] || break
    run_log=$logs/$t-$(date +%Y%m%d-%H%M%S).log
    log "$t: running for ${left} s (log $run_log)"
    local before
    before=$(ls "$artifacts" | sort)
    set +e
    # Timeouts are generous: at nice 19 beside a build a 0.1 s input can take seconds of wall time.
    # shellcheck disable=SC2086  # TRAINER_FUZZ_FLAGS is a list of flags
    ASAN_OPTIONS=$asan_options nice -n 19 "$exe" -max_total_time="$left" -print_final_stats=1 \
      -timeout=60 -report_slow_units=60 -rss_limit_mb=2048 -artifact_prefix="$artifacts/" \
      "${flags[@]}" ${TRAINER_FUZZ_FLAGS:-} "$corpus" "$seeds" >"$run_log" 2>&1
    local rc=$?
    set -e
    executions=$((executions + $(last_value 'stat::number_of_executed_units' "$run_log")))
    local new
    new=$(comm -13 <(echo "$before") <(ls "$artifacts" | grep -v '^slow-unit-' | sort) || true)
    for f in $new; do
      mkdir -p "$regressions"
      cp "$artifacts/$f" "$regressions/$f"
      saved+=("$f")
      crashes=$((crashes + 1))
      log "$t: finding saved as tests/fuzz/regressions/$t/$f"
    done
    if [ $rc -eq 0 ] || [ -z "$new" ] || [ $restarts -ge $MAX_RESTARTS ]; then
      [ $rc -eq 0 ] || [ -n "$new" ] || log "$t: exited with $rc and no artifact (see $run_log)"
      break
    fi
    restarts=$((restarts + 1))
  done
  local elapsed=$((SECONDS - start))
  local names=""
  [ ${#saved[@]} -eq 0 ] || names=$(printf '"%s",' "${saved[@]}")
  printf '{"target": "%s", "seconds": %d, "executions": %d, "exec_per_s": %d, "cov": %d, "features": %d, "corpus": %d, "crashes": %d, "regressions": [%s]}\n' \
    "$t" "$elapsed" "$executions" "$((executions / (elapsed > 0 ? elapsed : 1)))" \
    "$(last_value cov "$run_log")" "$(last_value ft "$run_log")" "$(ls "$corpus" | wc -l)" \
    "$crashes" "${names%,}"
}

for t in "${targets[@]}"; do
  fuzz_one "$t"
done
