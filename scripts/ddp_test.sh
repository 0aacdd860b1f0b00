#!/usr/bin/env bash
# Data-parallel training end to end on the CPU (Gloo on loopback), the way users launch it:
#   1. torchrun --nproc-per-node 2 --no-python trainer fit ... device=cpu: trains (the loss falls
#      over the epochs and ends where the same fit in one process ends), decides unused-parameter
#      detection off without c10d's warning, writes one run folder;
#   2. a rank killed with kill -9 mid-run (ranks started by hand with torchrun's variables): the
#      other rank stops by itself with an error naming it, well within dist_timeout, exits
#      non-zero, and every checkpoint on disk still loads (none torn); a rank that hangs (SIGSTOP)
#      fails the other after dist_timeout, within 20 s of a 10 s timeout, naming the wait and the
#      stopped rank; so does a stopped rank 0 (the store's host), the error saying so;
#   3. that run resumed under torchrun with 2 ranks runs to its last epoch, ending bit-identical to
#      the same run uninterrupted (validation sharded over both ranks every epoch); its last.pt
#      scores in a single process (trainer val), and on 2 ranks with the same predictions.json;
#      A NaN loss on one rank rolls the epoch back on every rank.
#   4. trainer's own launcher (device=cpu,cpu, with sync_bn; a rank killed under it; Ctrl-C) and 2
#      "nodes" on loopback (two torchrun
#      invocations, --nnodes 2) complete a short fit.
# Usage: scripts/ddp_test.sh [work folder (default: temporary, removed on success)]
# Env:   TRAINER_BIN (default build/app/trainer). Prints one JSON line; exits 1 when a check fails.
set -euo pipefail
source "$(dirname "$0")/env.sh"

work=${1:-}
own_work=0
if [ -z "$work" ]; then work=$(mktemp -d -t trainer-ddp-XXXXXX); own_work=1; fi
source "$(dirname "$0")/fault_test_lib.sh"
fault_test_setup ddp_test
mkdir -p "$work"
export OMP_NUM_THREADS=1

"$trainer" -q synth "$work/data" --train 32 --val 8 --size 96 --max-objects 3 --seed 0 >/dev/null
common=(data="$work/data/synthetic.yaml" model=yolo26t imgsz=96 batch=8 nbs=8 workers=1
        precision=fp32 device=cpu plots=false seed=0 warmup_epochs=0 close_mosaic=0
        project="$work")

# --- 1. torchrun, 2 ranks, beside the same fit in one process (30 short epochs, AdamW 0.004:
# enough steps for the loss to fall clearly on the synthetic shapes)
learn=(epochs=30 optimizer=AdamW lr0=0.004 val=false)
start=$(date +%s.%N)
torchrun --nproc-per-node 2 --master-port "$(free_port)" \
  --no-python "$trainer" fit "${common[@]}" "${learn[@]}" name=torchrun >"$work/torchrun.log" 2>&1 \
  || { cat "$work/torchrun.log" >&2; }
torchrun_s=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
"$trainer" fit "${common[@]}" "${learn[@]}" name=single >"$work/single.log" 2>&1 \
  || { cat "$work/single.log" >&2; }
check "torchrun fit completes with 30 results rows" \
  test "$(tail -n +2 "$work/torchrun/results.csv" 2>/dev/null | grep -c .)" = 30
check "the run says it is data-parallel on 2 gloo ranks" \
  grep -q "data-parallel: 2 ranks (gloo), batch 4 per rank" "$work/torchrun.log"
check "unused-parameter detection decided off once (every parameter gets a gradient)" \
  grep -q "every trainable parameter gets a gradient: unused-parameter detection off" "$work/torchrun.log"
check "... so no c10d warning about find_unused_parameters" \
  bash -c "! grep -q 'find_unused_parameters=True' '$work/torchrun.log'"
check "rank 0 prints the final mAP" grep -q "final (EMA) mAP50-95" "$work/torchrun.log"
check "one run folder (the other rank writes nothing)" test ! -e "$work/torchrun2"
# The summed training loss, mean of the first and of the last 5 epochs, for both runs.
read -r learns loss_first loss_last single_last <<<"$("$python" - "$work/torchrun/results.csv" "$work/single/results.csv" <<'PY'
import csv, sys
def losses(f):
    return [sum(float(v) for k, v in r.items() if k.startswith("train/")) for r in csv.DictReader(open(f))]
ddp, one = losses(sys.argv[1]), losses(sys.argv[2])
first, last, single_last = (sum(x[i] for i in r) / 5 for x, r in
                            ((ddp, range(5)), (ddp, range(-5, 0)), (one, range(-5, 0))))
ok = len(ddp) == 30 and last < first - 0.4 and abs(last - single_last) < 0.5
print("true" if ok else "false", f"{first:.3f} {last:.3f} {single_last:.3f}")
PY
)"
log "train loss (mean of 5 epochs): 2 ranks first $loss_first, last $loss_last; one process last $single_last"
check "the loss falls (by > 0.4) and ends within 0.5 of the single-process run" test "$learns" = true

# Waits until run NAME has a results row (its first epoch is done) or process PID has exited.
wait_first_epoch() {
  while [ "$(tail -n +2 "$work/$1/results.csv" 2>/dev/null | grep -c .)" -lt 1 ]; do
    kill -0 "$2" 2>/dev/null || break
    sleep 0.1
  done
}

# Starts ranks 0 and 1 by hand with torchrun's variables (run NAME, extra overrides); sets
# rank_pid0/rank_pid1 and waits until the run has finished its first epoch.
start_two_ranks_past_epoch_one() {
  local name=$1 port r
  shift
  port=$(free_port)
  for r in 0 1; do
    RANK=$r LOCAL_RANK=$r WORLD_SIZE=2 LOCAL_WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=$port \
      "$trainer" fit "${common[@]}" epochs=6 name="$name" "$@" >"$work/$name$r.log" 2>&1 &
    eval "rank_pid$r=$!"
  done
  wait_first_epoch "$name" "$rank_pid0"
}

# --- 2. kill -9 one of two ranks mid-run
start_two_ranks_past_epoch_one killed dist_timeout=60
pid0=$rank_pid0 pid1=$rank_pid1
sleep 0.5  # into the next epoch
kill -9 "$pid1"
killed_at=$(date +%s.%N)
rc0=0
wait "$pid0" || rc0=$?
stop_s=$(awk -v a="$killed_at" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
log "rank 0 exited with $rc0, ${stop_s}s after rank 1 was killed"
check "the surviving rank exits non-zero" test "$rc0" -ne 0
check "it stops well within dist_timeout (60 s)" awk -v s="$stop_s" 'BEGIN { exit !(s < 30) }'
check "its error names the rank and the cause" grep -q "rank 0 of 2: .* failed: another rank has stopped" "$work/killed0.log"
unloadable=$("$python" "$TRAINER_ROOT/scripts/checkpoints.py" unloadable "$work/killed/weights")
check "every checkpoint on disk loads" test "$unloadable" = 0

# Stops (SIGSTOP) one rank of run NAME past its first epoch and times the other until it exits;
# sets stop_rc (the other's exit status) and stop_s (seconds), then kills the stopped one.
stop_one_rank() {  # stop_one_rank NAME STOPPED_RANK overrides...
  local name=$1 stopped=$2 stopped_pid other_pid at
  shift 2
  start_two_ranks_past_epoch_one "$name" "$@"
  if [ "$stopped" = 0 ]; then stopped_pid=$rank_pid0 other_pid=$rank_pid1; else stopped_pid=$rank_pid1 other_pid=$rank_pid0; fi
  kill -STOP "$stopped_pid"
  at=$(date +%s.%N)
  stop_rc=0
  wait "$other_pid" || stop_rc=$?
  stop_s=$(awk -v a="$at" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
  kill -9 "$stopped_pid" 2>/dev/null || true
  wait "$stopped_pid" 2>/dev/null || true
}
within_20s() { awk -v s="$1" -v rc="$2" 'BEGIN { exit !(rc != 0 && s >= 9 && s < 20) }'; }

# --- 2b. a rank that hangs (SIGSTOP): the other fails after dist_timeout (10 s here) and within
# 20 s, naming the wait and the stopped rank (its heartbeat stopped)
stop_one_rank hung 1 dist_timeout=10
hrc0=$stop_rc hang_s=$stop_s
log "rank 0 exited with $hrc0, ${hang_s}s after rank 1 hung"
check "a hung rank: the other exits non-zero after dist_timeout, within 20 s" within_20s "$hang_s" "$hrc0"
check "... with an error naming the wait and its timeout" \
  grep -q "rank 0 of 2: .* failed: no answer within dist_timeout=10 s (the wait for the other ranks in a steady-state collective)" "$work/hung0.log"
check "... and the stopped rank" \
  grep -q "rank 1 stopped sending heartbeats (killed, stopped or frozen; its last beat" "$work/hung0.log"

# --- 2c. the store's host hangs (SIGSTOP of rank 0): rank 1 fails within 20 s all the same,
# saying the store does not answer (its reads would otherwise block for the join timeout)
stop_one_rank storehost 0 dist_timeout=10
src1=$stop_rc store_s=$stop_s
log "rank 1 exited with $src1, ${store_s}s after rank 0 (the store's host) hung"
check "the store's host hung: rank 1 exits non-zero within 20 s" within_20s "$store_s" "$src1"
check "... saying the store does not answer" \
  grep -q "the rendezvous store does not answer (its host, rank 0" "$work/storehost1.log"

# A run of 2 ranks resumed by one process: it continues, with a warning that says what changes.
"$trainer" fit resume="$work/hung/weights/last.ckpt" >"$work/hung_resume.log" 2>&1 \
  || cat "$work/hung_resume.log" >&2
check "a 2-rank checkpoint resumes in one process, with a warning" \
  grep -q "was trained on 2 rank(s) and resumes on 1" "$work/hung_resume.log"
check "... and runs to its 6th epoch" \
  test "$(tail -n +2 "$work/hung/results.csv" 2>/dev/null | grep -c .)" = 6

# --- 3. resume the killed run under torchrun, then score it in one process
torchrun --nproc-per-node 2 --master-port "$(free_port)" --no-python "$trainer" fit \
  resume="$work/killed/weights/last.ckpt" >"$work/resume.log" 2>&1 || cat "$work/resume.log" >&2
check "the resumed run reaches its 6th epoch" \
  test "$(tail -n +2 "$work/killed/results.csv" 2>/dev/null | grep -c .)" = 6
# The same 6 epochs uninterrupted under torchrun: rank 0's final model, EMA and optimizer state must
# be bit-identical to the killed-and-resumed run's (the other rank's BatchNorm statistics are not
# saved, and need not be: training uses batch statistics).
torchrun --nproc-per-node 2 --master-port "$(free_port)" --no-python "$trainer" fit "${common[@]}" \
  epochs=6 name=uninterrupted >"$work/uninterrupted.log" 2>&1 || cat "$work/uninterrupted.log" >&2
resume_equal=$("$python" "$TRAINER_ROOT/scripts/checkpoints.py" equal "$work/uninterrupted" \
  "$work/killed")
check "resumed on the same 2 ranks = uninterrupted, bit for bit (model, EMA, optimizer)" \
  test "$resume_equal" = true
score=(weights="$work/killed/weights/last.pt" model=yolo26t data="$work/data/synthetic.yaml"
       imgsz=96 batch=2 conf=0.0001 project="$work")
check "its checkpoint scores in a single process" \
  "$trainer" val "${score[@]}" device=cpu name=val_single >"$work/val_single.log" 2>&1
# Sharded `trainer val`: 2 ranks (trainer's own launcher) score 4 batches in turn; rank 0 writes
# exactly the single process's predictions.json and metrics.
"$trainer" val "${score[@]}" device=cpu,cpu name=val_sharded >"$work/val_sharded.log" 2>&1 \
  || cat "$work/val_sharded.log" >&2
check "trainer val on 2 ranks writes the single process's predictions.json, byte for byte" \
  cmp -s "$work/val_single/predictions.json" "$work/val_sharded/predictions.json"
check "... and prints its metrics" bash -c "diff <(grep -E '^ +all ' '$work/val_single.log') \
  <(grep -E '^ +all ' '$work/val_sharded.log') && grep -qE '^ +all ' '$work/val_single.log'"

# --- 4. trainer's own launcher, then two "nodes" on loopback
"$trainer" fit "${common[@]}" epochs=2 name=launcher device=cpu,cpu sync_bn=true \
  >"$work/launcher.log" 2>&1 || cat "$work/launcher.log" >&2
check "device=cpu,cpu starts 2 ranks itself and completes" \
  grep -q "starting 2 ranks on this machine" "$work/launcher.log"
check "... with its results" test -f "$work/launcher/weights/last.ckpt"
check "... with BatchNorm statistics over both ranks (sync_bn)" \
  grep -q "sync_bn: [0-9]* BatchNorm layers take their batch statistics over all 2 ranks" "$work/launcher.log"
# trainer's launcher when a rank dies: it names the rank and stops the other one.
"$trainer" fit "${common[@]}" epochs=30 name=launcher_kill device=cpu,cpu >"$work/launcher_kill.log" 2>&1 &
launcher_pid=$!
wait_first_epoch launcher_kill "$launcher_pid"
for child in $(pgrep -P "$launcher_pid"); do
  tr '\0' '\n' <"/proc/$child/environ" 2>/dev/null | grep -qx "RANK=1" && kill -9 "$child"
done
launcher_rc=0
wait "$launcher_pid" || launcher_rc=$?
check "a rank killed under trainer's launcher: it exits non-zero" test "$launcher_rc" -ne 0
check "... naming the rank and stopping the others" \
  grep -q "rank 1 (pid [0-9]*) was killed by signal 9: stopping the other ranks" "$work/launcher_kill.log"
check "... and leaves no rank running" bash -c "! pgrep -P $launcher_pid >/dev/null"

# A non-finite loss on rank 1 only: every rank rolls the epoch back and the run completes.
TRAINER_TEST_HOOKS=1 TRAINER_FAULT_NON_FINITE=1:1:0 torchrun --nproc-per-node 2 --master-port "$(free_port)" --no-python \
  "$trainer" fit "${common[@]}" epochs=3 name=nonfinite >"$work/nonfinite.log" 2>&1 \
  || cat "$work/nonfinite.log" >&2
check "a NaN on rank 1: rank 0 rolls back too" \
  grep -q "^non-finite loss or gradient in epoch 2: discarding its updates" "$work/nonfinite.log"
check "... so does rank 1" \
  grep -q "^\[rank 1\] non-finite loss or gradient in epoch 2: discarding its updates" "$work/nonfinite.log"
check "... and the run completes its 3 epochs" \
  test "$(tail -n +2 "$work/nonfinite/results.csv" 2>/dev/null | grep -c .)" = 3

# Ctrl-C (SIGINT) to trainer's launcher stops every rank.
"$trainer" fit "${common[@]}" epochs=30 name=launcher_int device=cpu,cpu >"$work/launcher_int.log" 2>&1 &
launcher_pid=$!
wait_first_epoch launcher_int "$launcher_pid"
children=$(pgrep -P "$launcher_pid" | tr '\n' ' ')
kill -INT "$launcher_pid"
int_rc=0
wait "$launcher_pid" || int_rc=$?
check "Ctrl-C to the launcher: it exits 130 and no rank is left" \
  bash -c "[ $int_rc = 130 ] && ! ps -p ${children// /,}0 -o pid= | grep -q ."

# A global batch that does not divide among the ranks is refused before training.
bad_rc=0
torchrun --nproc-per-node 2 --master-port "$(free_port)" --no-python "$trainer" fit "${common[@]}" \
  epochs=1 batch=7 name=bad_batch >"$work/bad_batch.log" 2>&1 || bad_rc=$?
check "batch=7 on 2 ranks is a config error naming both numbers" \
  bash -c "[ $bad_rc -ne 0 ] && grep -q 'batch: 7 is the global batch and does not divide among the 2 ranks' '$work/bad_batch.log'"

# Real COCO images (coco8, when ../shared/data has it): a 2-rank epoch validates and prints mAP.
if [ -d "$TRAINER_SHARED_DATA/coco8" ]; then
  torchrun --nproc-per-node 2 --master-port "$(free_port)" --no-python "$trainer" fit \
    data="$TRAINER_ROOT/configs/data/coco8.yaml" model=yolo26t imgsz=160 batch=4 workers=1 \
    precision=fp32 device=cpu plots=false epochs=1 project="$work" name=coco8 \
    >"$work/coco8.log" 2>&1 || cat "$work/coco8.log" >&2
  check "coco8 on 2 ranks: validated, mAP printed" grep -q "final (EMA) mAP50-95" "$work/coco8.log"
elif [ "${CI:-}" = true ]; then
  check "coco8 present under CI (TRAINER_SHARED_DATA)" false
else
  log "skipped: coco8 not found (set TRAINER_SHARED_DATA)"
fi

port=$(free_port)
for node in 0 1; do
  torchrun --nnodes 2 --node-rank $node --nproc-per-node 1 --master-addr 127.0.0.1 \
    --master-port "$port" --no-python "$trainer" fit "${common[@]}" epochs=1 name=nodes \
    >"$work/node$node.log" 2>&1 &
  eval "node_pid$node=$!"
done
node_rc=0
wait "$node_pid0" || node_rc=$?
wait "$node_pid1" || node_rc=$?
check "2 nodes x 1 rank complete a fit" test "$node_rc" = 0
check "... as one 2-rank run" grep -q "data-parallel: 2 ranks" "$work/node0.log"

printf '{"checks_failed": %d, "torchrun_fit_s": %s, "loss_first5_2ranks": %s, "loss_last5_2ranks": %s, "loss_last5_single": %s, "survivor_stop_s": %s, "hung_rank_stop_s": %s, "hung_store_host_stop_s": %s, "work": "%s"}\n' \
  "${#failures[@]}" "$torchrun_s" "$loss_first" "$loss_last" "$single_last" "$stop_s" "$hang_s" "$store_s" "$work"
if [ ${#failures[@]} = 0 ]; then
  [ $own_work = 1 ] && rm -rf "$work"
  exit 0
fi
exit 1
