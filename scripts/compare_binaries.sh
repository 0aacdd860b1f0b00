#!/usr/bin/env bash
# Behaviour check for refactors: runs the same jobs with two trainer binaries and compares what
# they wrote. A refactor must leave every one of them identical.
#
# Jobs (CPU, fp32, one thread, deterministic): the four overfit configs (detect, pose and
# segmentation on coco8's train images, OBB on `trainer synth --task obb`), a short fit killed after
# its first epoch's checkpoint (test hook) and resumed, a `val` with save_json of each overfit
# run's last.pt (every task's scorer), and a `predict` with save_txt of coco8's val images (the
# detect and the segment weights, the latter with save_json), coco8-pose's (the pose weights) and
# the OBB set's (the OBB weights), both with save_json: every task's predict output.
# Compared: results.csv rows (every column but the wall time), every tensor, counter and RNG state
# of every weights/*.ckpt and weights/*.pt (scripts/checkpoints.py same-files), every
# predictions.json (and OBB's DOTA files) and the predict label files byte for byte.
#
# Usage: scripts/compare_binaries.sh OLD_TRAINER NEW_TRAINER [work folder]
# Env:   COMPARE_EPOCHS=N shortens the overfit configs to N epochs (default: their own, 100-200
#        epochs, about 20 minutes for both binaries here); COMPARE_KEEP=1 keeps the work folder.
# Prints one JSON line; exits 1 when anything differs. Needs the shared data (coco8, coco8-pose,
# coco128) and the project's venv (scripts/setup.sh) for torch.load.
set -euo pipefail
source "$(dirname "$0")/env.sh"

[ $# -ge 2 ] || { sed -n '2,19p' "$0" >&2; exit 2; }
old=$(realpath "$1")
new=$(realpath "$2")
work=${3:-}
own_work=0
if [ -z "$work" ]; then work=$(mktemp -d -t trainer-compare-XXXXXX); own_work=1; fi
python=$TRAINER_VENV/bin/python
data=$TRAINER_SHARED_DATA
for bin in "$old" "$new"; do [ -x "$bin" ] || { echo "compare_binaries: $bin is not executable" >&2; exit 2; }; done
[ -x "$python" ] || { echo "compare_binaries: no venv at $TRAINER_VENV (scripts/setup.sh)" >&2; exit 2; }
for d in coco8 coco8-pose coco128; do
  [ -d "$data/$d" ] || { echo "compare_binaries: $data/$d missing (TRAINER_SHARED_DATA)" >&2; exit 2; }
done
mkdir -p "$work"
log() { printf '[compare_binaries] %s\n' "$*" >&2; }
export OMP_NUM_THREADS=1  # bit-identical reductions on every run

# Inputs both binaries read: the OBB micro set, coco8's images with coco128's polygons, a synth set.
"$old" -q synth "$work/obb" --task obb --train 4 --val 1 --size 256 --max-objects 4 --seed 0 >/dev/null
sed -i 's#^val: .*#val: images/train#' "$work/obb/obb.yaml"
"$old" -q synth "$work/shapes" --train 8 --val 4 --size 96 --max-objects 2 --seed 0 >/dev/null
"$python" - "$data/coco128" "$work/seg" <<'PY'
import json, pathlib, sys
coco128, out = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
full = json.loads((coco128 / "annotations" / "instances_train2017.json").read_text())
keep = {"000000000009.jpg", "000000000025.jpg", "000000000030.jpg", "000000000034.jpg"}
images = [i for i in full["images"] if i["file_name"] in keep]
ids = {i["id"] for i in images}
subset = {"images": images, "annotations": [a for a in full["annotations"] if a["image_id"] in ids],
          "categories": full["categories"]}
out.mkdir(parents=True, exist_ok=True)
(out / "coco8_seg.json").write_text(json.dumps(subset))
names = "".join(f"  {i}: {c['name']}\n" for i, c in enumerate(full["categories"]))
(out / "coco8_seg.yaml").write_text(
    f"path: {coco128}\ntrain: images/train2017\nval: images/train2017\n"
    f"train_json: {out / 'coco8_seg.json'}\nval_json: {out / 'coco8_seg.json'}\nnames:\n{names}")
PY

epochs_override=()
[ -n "${COMPARE_EPOCHS:-}" ] && epochs_override=(epochs="$COMPARE_EPOCHS" close_mosaic="$COMPARE_EPOCHS")
cfg=$TRAINER_ROOT/configs
run_jobs() {  # BINARY OUT
  local bin=$1 out=$2
  mkdir -p "$out"
  local quiet=(-q)
  "$bin" "${quiet[@]}" fit "$cfg/coco8_overfit.yaml" "${epochs_override[@]}" project="$out" name=detect >"$out/detect.log" 2>&1
  "$bin" "${quiet[@]}" fit "$cfg/coco8_pose_overfit.yaml" "${epochs_override[@]}" project="$out" name=pose >"$out/pose.log" 2>&1
  "$bin" "${quiet[@]}" fit "$cfg/coco8_seg_overfit.yaml" data="$work/seg/coco8_seg.yaml" "${epochs_override[@]}" project="$out" name=segment >"$out/segment.log" 2>&1
  "$bin" "${quiet[@]}" fit "$cfg/obb_overfit.yaml" data="$work/obb/obb.yaml" "${epochs_override[@]}" project="$out" name=obb >"$out/obb.log" 2>&1
  local short=(data="$work/shapes/synthetic.yaml" model=yolo26t imgsz=64 batch=4 nbs=4 workers=1 epochs=3
               precision=fp32 device=cpu plots=false seed=0 deterministic=true project="$out" name=resume)
  set +e
  TRAINER_TEST_HOOKS=1 TRAINER_FAULT_EXIT_AFTER=last.ckpt:1 "$bin" "${quiet[@]}" fit "${short[@]}" >"$out/resume-killed.log" 2>&1
  local rc=$?
  set -e
  [ "$rc" = 137 ] || { log "$bin: the killed fit exited $rc, not 137 (see $out/resume-killed.log)"; return 1; }
  "$bin" "${quiet[@]}" fit resume="$out/resume/weights/last.ckpt" >"$out/resume.log" 2>&1
  "$bin" "${quiet[@]}" val "$cfg/coco8.yaml" model=yolo26t weights="$out/detect/weights/last.pt" \
    data="$cfg/data/coco8.yaml" imgsz=256 batch=4 workers=1 device=cpu precision=fp32 conf=0.001 \
    save_json=true plots=false project="$out" name=val >"$out/val.log" 2>&1
  "$bin" "${quiet[@]}" predict weights="$out/detect/weights/last.pt" source="$data/coco8/images/val" \
    imgsz=256 device=cpu conf=0.01 save_txt=true project="$out" name=predict >"$out/predict.log" 2>&1
  # Each task's scorer with save_json (segmentation: native masks and RLE; OBB: DOTA files too),
  # and predict's mask path.
  "$bin" "${quiet[@]}" val "$cfg/coco8_pose_overfit.yaml" weights="$out/pose/weights/last.pt" \
    save_json=true plots=false project="$out" name=val_pose >"$out/val_pose.log" 2>&1
  "$bin" "${quiet[@]}" val "$cfg/coco8_seg_overfit.yaml" data="$work/seg/coco8_seg.yaml" \
    weights="$out/segment/weights/last.pt" save_json=true plots=false project="$out" \
    name=val_segment >"$out/val_segment.log" 2>&1
  "$bin" "${quiet[@]}" val "$cfg/obb_overfit.yaml" data="$work/obb/obb.yaml" \
    weights="$out/obb/weights/last.pt" save_json=true plots=false project="$out" \
    name=val_obb >"$out/val_obb.log" 2>&1
  "$bin" "${quiet[@]}" predict weights="$out/segment/weights/last.pt" \
    source="$data/coco8/images/val" imgsz=256 device=cpu conf=0.01 save_txt=true save_json=true \
    project="$out" name=predict_segment >"$out/predict_segment.log" 2>&1
  # Every task's predict output (keypoints, rotated boxes): labels, predictions.json, pictures.
  "$bin" "${quiet[@]}" predict weights="$out/pose/weights/last.pt" \
    source="$data/coco8-pose/images/val" imgsz=256 device=cpu conf=0.01 save_txt=true \
    save_json=true project="$out" name=predict_pose >"$out/predict_pose.log" 2>&1
  "$bin" "${quiet[@]}" predict weights="$out/obb/weights/last.pt" source="$work/obb/images/train" \
    imgsz=256 device=cpu conf=0.01 save_txt=true save_json=true project="$out" \
    name=predict_obb >"$out/predict_obb.log" 2>&1
}

declare -A seconds
for side in old new; do
  bin=$old; [ "$side" = new ] && bin=$new
  log "$side: $bin"
  start=$(date +%s)
  run_jobs "$bin" "$work/$side"
  seconds[$side]=$(( $(date +%s) - start ))
done

failed=()
for run in detect pose segment obb resume; do
  [ "$("$python" "$TRAINER_ROOT/scripts/checkpoints.py" rows "$work/old/$run" "$work/new/$run")" = true ] || failed+=("$run/results.csv")
  [ "$("$python" "$TRAINER_ROOT/scripts/checkpoints.py" same-files "$work/old/$run" "$work/new/$run")" = true ] || failed+=("$run/weights")
done
for val in val val_pose val_segment val_obb; do
  cmp -s "$work/old/$val/predictions.json" "$work/new/$val/predictions.json" || failed+=("$val/predictions.json")
done
for dota in predictions_txt predictions_merged_txt; do
  [ -e "$work/old/val_obb/$dota" ] || [ -e "$work/new/val_obb/$dota" ] || continue
  if ! diff -r -q "$work/old/val_obb/$dota" "$work/new/val_obb/$dota" >/dev/null 2>&1; then failed+=("val_obb/$dota"); fi
done
for predict in predict predict_segment predict_pose predict_obb; do
  # Labels (a folder only when something was predicted), predictions.json and the annotated images.
  if ! diff -r -q "$work/old/$predict" "$work/new/$predict" >/dev/null; then failed+=("$predict"); fi
done
compared=$(find "$work/old" -path '*/weights/*' \( -name '*.ckpt' -o -name '*.pt' \) | wc -l)
list=""
[ ${#failed[@]} -eq 0 ] || list=$(printf '"%s",' "${failed[@]}")
printf '{"old":"%s","new":"%s","old_s":%d,"new_s":%d,"weights_files":%d,"differing":[%s],"identical":%s}\n' \
  "$old" "$new" "${seconds[old]}" "${seconds[new]}" "$compared" "${list%,}" \
  "$([ ${#failed[@]} -eq 0 ] && echo true || echo false)"
if [ ${#failed[@]} -ne 0 ]; then log "differing: ${failed[*]} (work folder kept: $work)"; exit 1; fi
if [ "$own_work" = 1 ] && [ -z "${COMPARE_KEEP:-}" ]; then rm -rf "$work"; fi
