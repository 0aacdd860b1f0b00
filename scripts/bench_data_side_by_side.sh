#!/usr/bin/env bash
# The loader against the reference's, side by side (BENCHMARKS.md "Data loader"): ROUNDS rounds,
# each running `trainer bench data` (cache ram, none and disk) and then the reference's loader
# (scripts/bench_reference_data.py, cache ram and none) for each worker count, so both see the
# same machine state. Prints one JSON object: per setting the median over rounds of each round's
# median images/s, and the ratios.
# Usage: scripts/bench_data_side_by_side.sh [ROUNDS=3] [WORKERS=1,2] [EPOCHS=10]
#   env: TRAINER_SHARED_DATA (coco128 inside), IMGSZ (640), BATCH (16)
set -euo pipefail
source "$(dirname "$0")/env.sh"
rounds=${1:-3}
workers=${2:-1,2}
epochs=${3:-10}
imgsz=${IMGSZ:-640}
batch=${BATCH:-16}
trainer=$TRAINER_BUILD/app/trainer
py=$TRAINER_VENV/bin/python
[ -x "$trainer" ] || { echo "build trainer first (scripts/build.sh trainer)" >&2; exit 1; }
[ -d "$TRAINER_SHARED_DATA/coco128" ] || { echo "no $TRAINER_SHARED_DATA/coco128" >&2; exit 1; }
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
for r in $(seq 1 "$rounds"); do
  "$trainer" -q bench data --data "$TRAINER_ROOT/configs/data/coco128.yaml" --imgsz "$imgsz" \
    --batch "$batch" --epochs "$epochs" --workers "$workers" --cache ram,none,disk \
    --json "$out/ours_$r.json" > /dev/null
  for w in ${workers//,/ }; do
    for c in ram none; do
      "$py" "$TRAINER_ROOT/scripts/bench_reference_data.py" --imgsz "$imgsz" --batch "$batch" \
        --epochs "$epochs" --workers "$w" --cache "$c" > "$out/ref_${r}_${w}_$c.json" 2> /dev/null
    done
  done
  echo "round $r of $rounds done" >&2
done
"$py" - "$out" "$imgsz" "$batch" "$epochs" "$rounds" <<'PY'
import glob, json, statistics, sys
out = sys.argv[1]
ours, ref = {}, {}
for f in sorted(glob.glob(f"{out}/ours_*.json")):
    for r in json.load(open(f))["runs"]:
        ours.setdefault((r["cache"], r["workers"]), []).append(r)
for f in sorted(glob.glob(f"{out}/ref_*.json")):
    j = json.load(open(f))
    ref.setdefault((j["cache"], j["workers"]), []).append(j)
rows = []
for (cache, w), runs in sorted(ours.items()):
    row = {"cache": cache, "workers": w, "store": runs[0]["store"],
           "images_per_s": statistics.median(r["images_per_s_median"] for r in runs),
           "rounds": [round(r["images_per_s_median"], 1) for r in runs],
           "peak_rss_mib": max(r["peak_rss_bytes"] for r in runs) // 2**20,
           "cache_ram_mib": runs[0]["cache_ram_bytes"] // 2**20,
           "stages_ms_per_image": {k: round(statistics.median(r["stages"].get(k, {}).get("ms_per_image", 0) for r in runs), 3)
                                   for k in runs[0]["stages"]}}
    if (cache, w) in ref:
        rr = ref[(cache, w)]
        row["reference_images_per_s"] = statistics.median(j["images_per_s_median"] for j in rr)
        row["reference_rounds"] = [round(j["images_per_s_median"], 1) for j in rr]
        row["reference_peak_rss_mib"] = max(j["peak_rss_bytes_self_plus_largest_worker"] for j in rr) // 2**20
        row["ratio"] = round(row["images_per_s"] / row["reference_images_per_s"], 2)
    rows.append(row)
print(json.dumps({"bench": "data_side_by_side", "imgsz": int(sys.argv[2]), "batch": int(sys.argv[3]),
                  "epochs": int(sys.argv[4]), "rounds": int(sys.argv[5]), "rows": rows}, indent=2))
PY
