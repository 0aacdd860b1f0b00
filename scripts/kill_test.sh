#!/usr/bin/env bash
# Fault injection: kill -9 a real short fit N times at random moments (during training steps,
# during validation, during checkpoint writes), resume after each kill, and check that nothing is
# lost: every checkpoint on disk loads, every resume completes, results.csv has each epoch once,
# the final weights equal those of an uninterrupted run bit for bit (CPU, fp32), and the exported
# last.pt / best.pt hold their checkpoints' EMA weights, equal to the uninterrupted run's.
#
# Usage: scripts/kill_test.sh [N=20] [work folder (default: a temporary folder, removed on success)]
# Env:   TRAINER_BIN (default build/app/trainer), KILL_TEST_SEED (default: random), KILL_TEST_EPOCHS
# Prints one JSON line with the counts; exits 1 when any check fails. Needs the project's venv
# (scripts/setup.sh) for torch.load.
set -euo pipefail
source "$(dirname "$0")/env.sh"

kills=${1:-20}
work=${2:-}
own_work=0
if [ -z "$work" ]; then work=$(mktemp -d -t trainer-kill-XXXXXX); own_work=1; fi
trainer=${TRAINER_BIN:-$TRAINER_ROOT/build/app/trainer}
python=$TRAINER_VENV/bin/python
seed=${KILL_TEST_SEED:-$RANDOM}
epochs=${KILL_TEST_EPOCHS:-$(( kills < 6 ? 6 : kills ))}
RANDOM=$seed
[ -x "$trainer" ] || { echo "kill_test: $trainer not built (scripts/build.sh trainer)" >&2; exit 2; }
[ -x "$python" ] || { echo "kill_test: no venv at $TRAINER_VENV (scripts/setup.sh)" >&2; exit 2; }
mkdir -p "$work"
log() { printf '[kill_test] %s\n' "$*" >&2; }

# A tiny synthetic set and a fit that checkpoints and validates every epoch (2 steps per epoch).
"$trainer" -q synth "$work/data" --train 8 --val 4 --size 96 --max-objects 2 --seed 0 >/dev/null
common=(data="$work/data/synthetic.yaml" model=yolo26t imgsz=64 batch=4 nbs=4 workers=1
        epochs="$epochs" precision=fp32 device=cpu plots=false seed=0 deterministic=true
        project="$work")
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-1}  # one thread: bit-identical reductions on every run

log "reference: $epochs epochs uninterrupted (seed $seed, work $work)"
start=$(date +%s.%N)
"$trainer" fit "${common[@]}" name=reference >"$work/reference.log" 2>&1
reference_s=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.3f", b - a }')
# Random kills fall within start-up plus about two epochs of a segment, so most land mid-run.
window=$(awk -v t="$reference_s" -v e="$epochs" 'BEGIN { printf "%.3f", 1.0 + 2 * t / e }')
log "reference took ${reference_s}s"

run="$work/killed"
weights="$run/weights"
unloadable=0 resumes=0 resumes_failed=0 mid_write=0 in_validation=0 in_steps=0 done=0 stale=0

# Starts the run (fresh, or resumed from its last.ckpt) in the background; sets $pid.
launch() {
  if [ -f "$weights/last.ckpt" ]; then
    resumes=$((resumes + 1))
    stdbuf -oL -eL "$trainer" fit resume="$weights/last.ckpt" >"$work/segment.log" 2>&1 &
  else
    rm -rf "$run"  # killed before its first checkpoint: nothing to keep, start again
    stdbuf -oL -eL "$trainer" fit "${common[@]}" name=killed >"$work/segment.log" 2>&1 &
  fi
  pid=$!
}

# Waits until `$1` (a shell test) holds or the run exits; returns 1 when it exited.
wait_for() {
  while ! eval "$1"; do
    kill -0 "$pid" 2>/dev/null || return 1
    sleep 0.005
  done
}

# Every checkpoint and weights file on disk must load (torch.load of the whole pickle).
check_loadable() { "$python" "$TRAINER_ROOT/scripts/checkpoints.py" unloadable "$weights"; }

for ((k = 1; k <= kills; k++)); do
  launch
  mode=$((k % 3))  # 0: random moment, 1: during a checkpoint write, 2: during validation
  after=$((RANDOM % 3))  # write and validation kills: after 0-2 epochs of this segment
  case $mode in
    0) sleep "$(awk -v r=$RANDOM -v w="$window" 'BEGIN { printf "%.3f", 0.3 + r % 1000 * w / 1000 }')"
       kill -0 "$pid" 2>/dev/null && in_steps=$((in_steps + 1)) ;;
    1) wait_for '[ "$(grep -c "^epoch .* done in" "$work/segment.log")" -ge $after ] &&
                 compgen -G "$weights/*.tmp.*" >/dev/null' && mid_write=$((mid_write + 1)) ;;
    2) wait_for '[ "$(grep -c "^validation" "$work/segment.log")" -gt $after ]' &&
         in_validation=$((in_validation + 1)) ;;
  esac
  if kill -9 "$pid" 2>/dev/null; then
    wait "$pid" 2>/dev/null || true
    # Provably mid-write: the temporary file is still there after the kill.
    if [ $mode = 1 ] && ! compgen -G "$weights/*.tmp.*" >/dev/null; then mid_write=$((mid_write - 1)); fi
    log "kill $k ($([ $mode = 0 ] && echo random || { [ $mode = 1 ] && echo write || echo validation; })): $(ls "$weights" 2>/dev/null | tr '\n' ' ')"
  else
    wait "$pid" && { done=1; log "the run finished before kill $k"; } || resumes_failed=$((resumes_failed + 1))
  fi
  if [ -d "$weights" ]; then unloadable=$((unloadable + $(check_loadable))); fi
  # A kill that lands after the last epoch's checkpoint (the run was exiting): nothing to resume.
  if [ $done = 0 ] && [ -f "$weights/last.ckpt" ] &&
     [ "$("$python" "$TRAINER_ROOT/scripts/checkpoints.py" epochs-done "$run")" -ge "$epochs" ]; then
    done=1
    log "kill $k landed after the last epoch was saved: the run is complete"
  fi
  [ $done = 1 ] && break
done

# The last resume runs to the end.
if [ $done = 0 ]; then
  launch
  wait "$pid" || { resumes_failed=$((resumes_failed + 1)); cat "$work/segment.log" >&2; }
fi
stale=$(compgen -G "$weights/*.tmp.*" | wc -l || true)
unloadable=$((unloadable + $(check_loadable)))

# The same weights, EMA and optimizer state as the uninterrupted run; the same results.csv rows
# (all columns but the wall time).
weights_equal=$("$python" "$TRAINER_ROOT/scripts/checkpoints.py" equal "$work/reference" "$run")
rows_equal=$("$python" "$TRAINER_ROOT/scripts/checkpoints.py" rows "$work/reference" "$run")
# The exported last.pt / best.pt: the EMA weights of last.ckpt / best.ckpt, equal to the reference's.
exports_equal=$("$python" "$TRAINER_ROOT/scripts/checkpoints.py" exports "$work/reference" "$run")
kills_done=$((in_steps + mid_write + in_validation))
printf '{"kills": %d, "kills_in_steps": %d, "kills_mid_checkpoint_write": %d, "kills_in_validation": %d, "resumes": %d, "resumes_failed": %d, "unloadable_checkpoints": %d, "stale_temporary_files": %d, "final_weights_equal": %s, "results_rows_equal": %s, "exports_equal": %s, "epochs": %d, "seed": %d, "work": "%s"}\n' \
  "$kills_done" "$in_steps" "$mid_write" "$in_validation" "$resumes" "$resumes_failed" "$unloadable" \
  "$stale" "$weights_equal" "$rows_equal" "$exports_equal" "$epochs" "$seed" "$work"
if [ "$unloadable" = 0 ] && [ "$resumes_failed" = 0 ] && [ "$weights_equal" = true ] &&
   [ "$rows_equal" = true ] && [ "$exports_equal" = true ]; then
  [ $own_work = 1 ] && rm -rf "$work"  # kept for inspection when a check fails
  exit 0
fi
exit 1
