#!/usr/bin/env bash
# Elastic restarts and multi-node training without a shared file system, end to end on the CPU
# (Gloo), the way users launch them:
#   1. torchrun --max-restarts with a rank killed (kill -9 of itself, TRAINER_FAULT_KILL) mid-epoch:
#      the agent restarts the workers, trainer resumes the same run from its last complete epoch
#      ("restart 1: resuming RUN from epoch E"), the job exits 0 with one run folder, and its final
#      model, EMA and optimizer state and its results rows equal an uninterrupted run's bit for bit.
#   (--quick stops here: the ctest case.)
#   2. two kills at different moments (a training batch, then a validation batch of a later epoch
#      on the restarted attempt); a kill before any epoch completed (the run starts again in its
#      folder); a restart with a different world size (torchrun --nnodes 1:2, one node lost).
#   3. two "nodes" in their own network namespaces joined by a veth pair, each in its own working
#      folder (no shared run folder): a fit with a non-finite rollback on the node without the
#      checkpoint, then a killed run resumed with resume= naming a file only node 0 holds.
# Usage: scripts/elastic_test.sh [--quick] [work folder (default: temporary, removed on success)]
# Env:   TRAINER_BIN (default build/app/trainer). Prints one JSON line; exits 1 when a check fails.
set -euo pipefail
source "$(dirname "$0")/env.sh"

quick=0
if [ "${1:-}" = --quick ]; then quick=1; shift; fi
work=${1:-}
own_work=0
if [ -z "$work" ]; then work=$(mktemp -d -t trainer-elastic-XXXXXX); own_work=1; fi
work=$(realpath -m "$work")
source "$(dirname "$0")/fault_test_lib.sh"
fault_test_setup elastic_test
mkdir -p "$work"
rows() { tail -n +2 "$1/results.csv" 2>/dev/null | grep -c . || true; }
same_state() { [ "$("$python" "$TRAINER_ROOT/scripts/checkpoints.py" equal "$1" "$2")" = true ]; }
same_rows() { [ "$("$python" "$TRAINER_ROOT/scripts/checkpoints.py" rows "$1" "$2")" = true ]; }
seconds_since() { awk -v a="$1" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }'; }
export OMP_NUM_THREADS=1

"$trainer" -q synth "$work/data" --train 32 --val 8 --size 96 --max-objects 3 --seed 0 >/dev/null
common=(data="$work/data/synthetic.yaml" model=yolo26t imgsz=96 batch=8 nbs=8 workers=1
        precision=fp32 device=cpu plots=false seed=0 warmup_epochs=0 close_mosaic=0 epochs=4
        project="$work")
# 2 ranks on this machine under the elastic agent; extra torchrun options before `--`.
elastic() {  # elastic NAME KILLS [torchrun options...] -- [fit overrides...]
  local name=$1 kills=$2 opts=()
  shift 2
  while [ $# -gt 0 ] && [ "$1" != -- ]; do opts+=("$1"); shift; done
  [ $# -gt 0 ] && shift
  TRAINER_TEST_HOOKS=1 TRAINER_FAULT_KILL=$kills torchrun --nproc-per-node 2 \
    --master-port "$(free_port)" "${opts[@]}" --no-python "$trainer" fit "${common[@]}" \
    name="$name" "$@" >"$work/$name.log" 2>&1
}

# --- 1. one kill, one restart
start=$(date +%s.%N)
elastic uninterrupted "" || cat "$work/uninterrupted.log" >&2
uninterrupted_s=$(seconds_since "$start")
start=$(date +%s.%N)
once_rc=0
elastic once 0:1:1:1 --max-restarts 1 || once_rc=$?
once_s=$(seconds_since "$start")
log "uninterrupted ${uninterrupted_s}s; killed once and restarted ${once_s}s (rc $once_rc)"
check "killed once under --max-restarts 1: the job exits 0" test "$once_rc" = 0
check "... the restart resumes the same run from epoch 2" \
  grep -q "restart 1: resuming $work/once from epoch 2" "$work/once.log"
check "... in one run folder" test ! -e "$work/once2"
check "... with the uninterrupted run's 4 results rows" same_rows "$work/uninterrupted" "$work/once"
check "... and its final model, EMA and optimizer state, bit for bit" \
  same_state "$work/uninterrupted" "$work/once"

if [ $quick = 0 ]; then
  # --- 2. two kills (the second during validation, on the restarted attempt)
  twice_rc=0
  elastic twice 0:1:1:1,1:0:2:v0 --max-restarts 2 || twice_rc=$?
  check "killed twice (a training batch, then validation): the job exits 0" test "$twice_rc" = 0
  check "... restart 1 resumes from epoch 2" grep -q "restart 1: resuming $work/twice from epoch 2" "$work/twice.log"
  check "... restart 2 from epoch 3 (the epoch whose validation was cut is redone)" \
    grep -q "restart 2: resuming $work/twice from epoch 3" "$work/twice.log"
  check "... one run folder" test ! -e "$work/twice2"
  check "... the uninterrupted rows" same_rows "$work/uninterrupted" "$work/twice"
  check "... and state, bit for bit" same_state "$work/uninterrupted" "$work/twice"

  # A kill before the first epoch completed: the run starts again in its folder.
  early_rc=0
  elastic early 0:0:0:1 --max-restarts 1 || early_rc=$?
  check "killed in the first epoch: the job exits 0" test "$early_rc" = 0
  check "... starting the run again in its folder" \
    grep -q "restart 1: $work/early completed no epoch before the failure; starting it again there" "$work/early.log"
  check "... one run folder" test ! -e "$work/early2"
  check "... equal to the uninterrupted run" same_state "$work/uninterrupted" "$work/early"

  # More restarts than allowed: the job fails, and its run folder still resumes by hand.
  spent_rc=0
  elastic spent 0:1:1:1,1:1:2:1 --max-restarts 1 || spent_rc=$?
  check "a second kill with --max-restarts 1: the job fails" test "$spent_rc" -ne 0
  "$trainer" fit resume="$work/spent/weights/last.ckpt" device=cpu >"$work/spent_resume.log" 2>&1 \
    || cat "$work/spent_resume.log" >&2
  check "... and resumes by hand to its 4 epochs" test "$(rows "$work/spent")" = 4

  # A node lost for good under --nnodes 1:2: the other restarts alone (world size 2 -> 1). The
  # rendezvous waits 10 s (last_call_timeout) for the second node before it closes. Node 0
  # starts first, so that it hosts the rendezvous and (as rendezvous rank 0) the workers' store,
  # which keep the job's records; the node lost is the other one (torch's own design: losing the
  # store's host ends the job).
  port=$(free_port)
  shrink=(--nnodes 1:2 --nproc-per-node 1 --rdzv-backend c10d --rdzv-endpoint "127.0.0.1:$port"
          --rdzv-id shrink --max-restarts 1 --rdzv-conf last_call_timeout=10,join_timeout=60
          --no-python "$trainer" fit "${common[@]}" epochs=8 name=shrink)
  "$python" -m torch.distributed.run "${shrink[@]}" >"$work/shrink0.log" 2>&1 &
  agent0=$!
  until "$python" -c "import socket,sys; socket.create_connection(('127.0.0.1',$port),1)" 2>/dev/null; do
    sleep 0.2
  done
  "$python" -m torch.distributed.run "${shrink[@]}" >"$work/shrink1.log" 2>&1 &
  agent1=$!
  while [ "$(rows "$work/shrink")" -lt 2 ] && kill -0 "$agent0" 2>/dev/null; do sleep 0.1; done
  # The node whose worker (the agent's child) is rank 1 goes, agent and worker, as a lost VM.
  lost=$agent1
  for pid in $(pgrep -P "$agent0"); do
    tr '\0' '\n' <"/proc/$pid/environ" 2>/dev/null | grep -qx "RANK=1" && lost=$agent0
  done
  check "node 0 holds rank 0 (hosts the stores)" test "$lost" = "$agent1"
  pkill -9 -P "$lost" || true
  kill -9 "$lost" || true
  shrink_rc=0
  wait "$agent0" || shrink_rc=$?
  wait "$agent1" 2>/dev/null || true
  check "a node lost under --nnodes 1:2: the job first ran on both nodes" \
    grep -q "data-parallel: 2 ranks" "$work/shrink0.log"
  check "... the other node's job exits 0" test "$shrink_rc" = 0
  check "... resuming the run on 1 rank, with the per-rank share warning" \
    bash -c "grep -q 'restart 1: resuming $work/shrink' '$work/shrink0.log' && grep -q 'was trained on 2 rank(s) and resumes on 1' '$work/shrink0.log'"
  check "... to its 8 epochs in one run folder" bash -c "[ $(rows "$work/shrink") = 8 ] && [ ! -e '$work/shrink2' ]"

  # --- 3. two nodes, each in its own network namespace and working folder
  netns_ok=0
  if ip netns add trnA 2>/dev/null; then
    ip netns add trnB
    ip link add trnvA type veth peer name trnvB
    ip link set trnvA netns trnA
    ip link set trnvB netns trnB
    ip -n trnA addr add 10.77.0.1/24 dev trnvA
    ip -n trnB addr add 10.77.0.2/24 dev trnvB
    for ns in trnA trnB; do ip -n $ns link set lo up; done
    ip -n trnA link set trnvA up
    ip -n trnB link set trnvB up
    netns_ok=1
  fi
  cleanup_netns() { ip netns del trnA 2>/dev/null || true; ip netns del trnB 2>/dev/null || true; }
  trap cleanup_netns EXIT
  if [ $netns_ok = 1 ]; then
    mkdir -p "$work/nodeA" "$work/nodeB"
    two_nodes() {  # two_nodes NAME [env...] -- overrides...: node A and node B, each in its folder
      local name=$1 envs=() port=29500 node
      shift
      while [ $# -gt 0 ] && [ "$1" != -- ]; do envs+=("$1"); shift; done
      [ $# -gt 0 ] && shift
      for node in A B; do
        local rank=0 ifname=trnvA
        [ $node = B ] && rank=1 ifname=trnvB
        (cd "$work/node$node" && ip netns exec trn$node env GLOO_SOCKET_IFNAME=$ifname "${envs[@]}" \
          "$python" -m torch.distributed.run --nnodes 2 --node-rank $rank --nproc-per-node 1 \
          --master-addr 10.77.0.1 --master-port $port --no-python "$trainer" fit \
          "$@" >"$work/$name$node.log" 2>&1) &
        eval "node_pid$node=$!"
      done
      nodes_rc=0
      wait "$node_pidA" || nodes_rc=$?
      wait "$node_pidB" || nodes_rc=$?
    }
    local_common=("${common[@]/project=$work/project=runs}")
    # A NaN on rank 1 (node B) in epoch 2: the rollback needs last.ckpt, which only node A has.
    two_nodes nan TRAINER_TEST_HOOKS=1 TRAINER_FAULT_NON_FINITE=1:1:0 -- "${local_common[@]}" epochs=3 name=nan
    check "two namespaces: a fit with a rollback on the node without the checkpoint completes" \
      bash -c "[ $nodes_rc = 0 ] && [ $(rows "$work/nodeA/runs/nan") = 3 ]"
    check "... rank 1 received the checkpoint from rank 0" \
      grep -q "checkpoint of epoch 1 from rank 0 (.*) sent to rank(s) 1" "$work/nanA.log"
    check "... and node B holds no run folder" test ! -e "$work/nodeB/runs"
    # A run killed in epoch 3 (both ranks stop), then resumed: resume= names node A's file.
    two_nodes cut TRAINER_TEST_HOOKS=1 TRAINER_FAULT_KILL=0:1:2:1 -- "${local_common[@]}" name=cut
    check "two namespaces: the killed run stopped after 2 epochs" test "$(rows "$work/nodeA/runs/cut")" = 2
    two_nodes resumed -- resume=runs/cut/weights/last.ckpt device=cpu
    check "... resume= naming a file only node A holds completes the run" \
      bash -c "[ $nodes_rc = 0 ] && [ $(rows "$work/nodeA/runs/cut") = 4 ]"
    check "... the checkpoint went to rank 1" grep -q "sent to rank(s) 1" "$work/resumedA.log"
    check "... node B still holds no run folder" test ! -e "$work/nodeB/runs"
    cleanup_netns
  else
    log "skipped: network namespaces (ip netns add needs root)"
    [ "${CI:-}" = true ] && check "network namespaces available under CI" false
  fi
fi

printf '{"checks_failed": %d, "quick": %d, "uninterrupted_s": %s, "killed_once_restarted_s": %s, "work": "%s"}\n' \
  "${#failures[@]}" "$quick" "$uninterrupted_s" "$once_s" "$work"
if [ ${#failures[@]} = 0 ]; then
  [ $own_work = 1 ] && rm -rf "$work"
  exit 0
fi
exit 1
