#!/usr/bin/env bash
# Rehearses scripts/gpu_check.sh's budget and kill handling on this CPU machine with the CPU build's
# binaries (build/), so the one GPU run a session gets does not find them broken:
#   1. budget: a step made slow on purpose (GPU_CHECK_FAKE_SLOW) is stopped at its cap, the later
#      steps still run or are recorded as skipped, the whole run ends within its budget (plus the
#      last step's kill grace), and every finished step's output is in the output folder;
#   2. kill: a TERM sent while a step runs stops the run at once (exit 1), and gpu_check.json, its
#      log and the finished steps' files are there, the interruption noted.
# Prints one JSON line and exits non-zero on the first broken expectation.
# Usage: scripts/gpu_check_test.sh   (after scripts/build.sh; about 5 minutes on 2 cores)
set -euo pipefail
source "$(dirname "$0")/env.sh"

for bin in "$TRAINER_BUILD/app/trainer" "$TRAINER_BUILD/tests/cuda/test_cuda_smoke"; do
  [ -x "$bin" ] || { echo "gpu_check_test: $bin is missing (run scripts/build.sh)" >&2; exit 2; }
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "gpu_check_test: FAILED: $*" >&2; exit 1; }
check_json() {  # FOLDER PYTHON-EXPRESSION MESSAGE: the expression over j (gpu_check.json) is true
  "$TRAINER_VENV/bin/python" - "$1/gpu_check.json" "$2" <<'EOF' || fail "$3"
import json, sys
j = json.load(open(sys.argv[1]))
steps = {s["name"]: s for s in j["steps"] if "name" in s}
sys.exit(0 if eval(sys.argv[2], {"j": j, "steps": steps}) else 1)
EOF
}
common=(env GPU_CHECK_ALLOW_CPU=1 GPU_CHECK_BUILD_DIR="$TRAINER_BUILD" GPU_CHECK_STEPS=smoke,bench
        GPU_CHECK_PYTHON="$TRAINER_VENV/bin/python")

# --- 1. budget: bench_precision sleeps far past its cap
budget=240
start=$SECONDS
set +e
"${common[@]}" GPU_CHECK_BUDGET_S=$budget GPU_CHECK_FAKE_SLOW=bench_precision=600 \
  GPU_CHECK_OUT="$tmp/budget" "$TRAINER_ROOT/scripts/gpu_check.sh" > "$tmp/budget.log" 2>&1
rc=$?
set -e
budget_s=$((SECONDS - start))
[ "$rc" = 1 ] || fail "budget run exited $rc, expected 1 (a step timed out)"
# The last step may take its kill grace (10 s) past its cap, and publishing a few seconds.
[ "$budget_s" -le $((budget + 25)) ] || fail "budget run took ${budget_s}s against its ${budget}s budget"
check_json "$tmp/budget" 'j["finished"] and j["exit_code"] == 1' "gpu_check.json not finished"
check_json "$tmp/budget" 'steps["bench_precision"]["status"] == "timeout"' \
  "the slow step was not stopped at its cap"
check_json "$tmp/budget" 'steps["bench_precision"]["seconds"] <= 30' "the slow step outlasted its cap"
check_json "$tmp/budget" '"bench_abba" in steps' "the last step was neither run nor recorded as skipped"
for s in bench_interval bench_fit; do  # each finished step's JSON is in the output folder
  if grep -qP "^$s\tok\t" "$TRAINER_BUILD/gpu-check-work/steps.tsv"; then
    [ -f "$tmp/budget/$s.json" ] || fail "$s finished but $s.json is not in the output folder"
  fi
done
[ -f "$tmp/budget/gpu_check.log" ] && [ -f "$tmp/budget/cuda_smoke.log" ] || fail "logs missing"

# --- 2. kill: TERM while bench_interval sleeps, after the smoke step has published
set +e
"${common[@]}" GPU_CHECK_BUDGET_S=480 GPU_CHECK_FAKE_SLOW=bench_interval=600 \
  GPU_CHECK_OUT="$tmp/kill" "$TRAINER_ROOT/scripts/gpu_check.sh" > "$tmp/kill.log" 2>&1 &
pid=$!
for _ in $(seq 1 120); do
  grep -q 'bench_interval: running' "$tmp/kill.log" 2>/dev/null && break
  sleep 1
done
grep -q 'bench_interval: running' "$tmp/kill.log" || { kill -9 "$pid"; fail "the kill run never reached bench_interval"; }
check_json "$tmp/kill" 'not j["finished"] and steps["cuda_smoke"]["status"] == "ok"' \
  "the smoke step's result was not published before the next step"
sleep 2
kill -TERM "$pid"
killed_at=$SECONDS
wait "$pid"
rc=$?
set -e
stop_s=$((SECONDS - killed_at))
[ "$rc" = 1 ] || fail "killed run exited $rc, expected 1"
[ "$stop_s" -le 15 ] || fail "killed run took ${stop_s}s to stop"
check_json "$tmp/kill" 'j["finished"] and any("interrupted" in n for n in j["notes"])' \
  "the interruption is not in gpu_check.json"
[ -f "$tmp/kill/cuda_smoke.log" ] || fail "the smoke log was lost to the kill"
pgrep -f "sleep 600" >/dev/null && fail "the slow step's process outlived the kill"

printf '{"budget_run": {"budget_s": %d, "seconds": %d, "exit": 1}, "kill_run": {"stopped_after_s": %d, "exit": 1}, "ok": true}\n' \
  "$budget" "$budget_s" "$stop_s"
