#!/usr/bin/env bash
# Fault injection: a full disk. Runs synth, predict and fit with their output on a tiny tmpfs
# and checks what the README promises: exit status 1 (the machine, not the input), exactly one
# `error:` line naming the file, no library text, no `*.tmp.*` or `*.partial.*` file left, no
# folder left by a command that produced nothing (synth, predict), and a fit that trained keeps
# its run folder with no truncated checkpoint in it.
#
# Usage: scripts/full_disk_test.sh [work folder (default: a temporary folder, removed on success)]
# Env:   TRAINER_BIN (default build/app/trainer)
# Needs root (it mounts a tmpfs) and prints one JSON line; exits 1 when any check fails, 2 when it
# cannot run here (no binary, no permission to mount).
set -euo pipefail
source "$(dirname "$0")/env.sh"

work=${1:-}
own_work=0
if [ -z "$work" ]; then work=$(mktemp -d -t trainer-full-disk-XXXXXX); own_work=1; fi
trainer=$(realpath "${TRAINER_BIN:-$TRAINER_ROOT/build/app/trainer}")
[ -x "$trainer" ] || { echo "full_disk_test: $trainer not built (scripts/build.sh trainer)" >&2; exit 2; }
log() { printf '[full_disk_test] %s\n' "$*" >&2; }
failures=()
check() {  # check NAME CONDITION...
  local name=$1; shift
  if "$@"; then log "ok: $name"; else log "FAILED: $name"; failures+=("$name"); fi
}

disk="$work/disk"
mkdir -p "$disk"
if ! mount -t tmpfs -o size=256k tmpfs "$disk" 2>/dev/null; then
  echo "full_disk_test: cannot mount a tmpfs at $disk (needs root and mount permission)" >&2
  exit 2
fi
trap 'umount "$disk" 2>/dev/null || true' EXIT
fill_disk() {  # leaves about N KiB free
  rm -rf "${disk:?}"/*
  local free_kib; free_kib=$(df -k --output=avail "$disk" | tail -1)
  dd if=/dev/zero of="$disk/fill" bs=1k count=$(( free_kib - $1 )) status=none 2>/dev/null || true
}
one_error_line() { [ "$(grep -c '^error:' "$1")" = 1 ]; }
names_no_space() { grep -q '^error: .*No space left on device' "$1"; }
no_library_text() { ! grep -qE 'basic_filebuf|filesystem error|Assertion|frame #|c10::|terminate called' "$1"; }
nothing_partial() { [ -z "$(find "$disk" \( -name '*.tmp.*' -o -name '*.partial.*' \) -print -quit)" ]; }
run_expect_1() {  # run_expect_1 LOG ARGS...: runs the trainer, true when it exits 1
  local out=$1; shift
  local rc=0
  "$trainer" "$@" >"$out" 2>&1 || rc=$?
  [ "$rc" = 1 ] || { log "exit status $rc, expected 1 (see $out)"; return 1; }
}

# Data and weights on the real disk: a tiny set and a 1-epoch fit.
"$trainer" -q synth "$work/data" --train 4 --val 2 --size 64 --max-objects 2 --seed 0 >/dev/null
"$trainer" -q fit data="$work/data/synthetic.yaml" model=yolo26t imgsz=64 batch=2 epochs=1 \
  workers=0 device=cpu precision=fp32 plots=false project="$work" name=weights >/dev/null 2>&1
weights="$work/weights/weights/best.pt"
[ -f "$weights" ] || { echo "full_disk_test: the 1-epoch fit wrote no $weights" >&2; exit 1; }

log "synth into a full disk"
fill_disk 8
check "synth exits 1" run_expect_1 "$work/synth.log" synth "$disk/s" --train 20 --val 4 --size 256
check "synth: one error line" one_error_line "$work/synth.log"
check "synth: the error says the disk is full" names_no_space "$work/synth.log"
check "synth: no library text" no_library_text "$work/synth.log"
check "synth: its folder is removed" test ! -e "$disk/s"

log "predict into a full disk"
fill_disk 4
check "predict exits 1" run_expect_1 "$work/predict.log" predict weights="$weights" \
  source="$work/data/images/val" project="$disk" name=p save_txt=true
check "predict: one error line" one_error_line "$work/predict.log"
check "predict: the error says the disk is full" names_no_space "$work/predict.log"
check "predict: no library text" no_library_text "$work/predict.log"
check "predict: no partial file" nothing_partial
check "predict: no run folder" test ! -e "$disk/p"

log "fit into a disk with room for its logs but not its checkpoints"
fill_disk 160
check "fit exits 1" run_expect_1 "$work/fit.log" fit data="$work/data/synthetic.yaml" \
  model=yolo26n imgsz=64 batch=2 epochs=1 workers=0 device=cpu precision=fp32 project="$disk" name=f
check "fit: one error line" one_error_line "$work/fit.log"
check "fit: the error says the disk is full" names_no_space "$work/fit.log"
check "fit: no library text" no_library_text "$work/fit.log"
check "fit: no partial file" nothing_partial
check "fit: the run folder it trained in is kept, with its args.yaml" test -f "$disk/f/args.yaml"
check "fit: no checkpoint written short" test -z "$(find "$disk/f/weights" -name '*.ckpt' -print -quit)"

status=pass
[ ${#failures[@]} = 0 ] || status=fail
failed_json=""
for f in "${failures[@]}"; do failed_json+="${failed_json:+, }\"$f\""; done
printf '{"test": "full_disk", "checks_failed": %d, "failed": [%s], "status": "%s"}\n' \
  ${#failures[@]} "$failed_json" "$status"
if [ "$status" = pass ] && [ "$own_work" = 1 ]; then umount "$disk"; trap - EXIT; rm -rf "$work"; fi
[ "$status" = pass ]
