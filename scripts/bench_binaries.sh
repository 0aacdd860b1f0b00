#!/usr/bin/env bash
# Run time of two trainer binaries side by side: a build change (unity units, a precompiled
# header, other flags) must not cost speed at run time. PAIRS rounds, each running the training
# interval benchmark (`trainer bench interval`, configs/bench/cpu_short_fit.yaml) and the loader
# benchmark (`trainer bench data`, coco128, no cache) with both binaries, the order alternating
# (old new, new old, ...) so both see the same machine state. Prints one JSON object: per
# benchmark the median over rounds of each binary's median, and the ratio new/old.
# Usage: scripts/bench_binaries.sh OLD_TRAINER NEW_TRAINER [PAIRS=3]
#   env: TRAINER_SHARED_DATA (coco128 inside), MEASURE (intervals per arm, 12), EPOCHS (loader, 3)
set -euo pipefail
source "$(dirname "$0")/env.sh"
[ $# -ge 2 ] || { sed -n '2,9p' "$0" >&2; exit 2; }
old=$(realpath "$1")
new=$(realpath "$2")
pairs=${3:-3}
measure=${MEASURE:-12}
epochs=${EPOCHS:-3}
for bin in "$old" "$new"; do [ -x "$bin" ] || { echo "bench_binaries: $bin is not executable" >&2; exit 2; }; done
[ -d "$TRAINER_SHARED_DATA/coco128" ] || { echo "bench_binaries: no $TRAINER_SHARED_DATA/coco128" >&2; exit 2; }
out=$(mktemp -d -t trainer-bench-binaries-XXXXXX)
trap 'rm -rf "$out"' EXIT

arm() {  # arm NAME BINARY ROUND
  "$2" -q bench interval "$TRAINER_ROOT/configs/bench/cpu_short_fit.yaml" --warmup 4 \
    --measure "$measure" --no-breakdown --json "$out/interval_$1_$3.json" > /dev/null
  "$2" -q bench data --data "$TRAINER_ROOT/configs/data/coco128.yaml" --imgsz 320 --batch 4 \
    --epochs "$epochs" --workers 2 --cache none --json "$out/data_$1_$3.json" > /dev/null
}
for r in $(seq 1 "$pairs"); do
  if [ $((r % 2)) -eq 1 ]; then arm old "$old" "$r"; arm new "$new" "$r"
  else arm new "$new" "$r"; arm old "$old" "$r"; fi
  echo "[bench_binaries] round $r of $pairs done" >&2
done
python3 - "$out" "$old" "$new" "$pairs" <<'PY'
import glob, json, statistics, sys
out, old, new, pairs = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
def medians(kind, arm, pick):
    return [pick(json.load(open(f))) for f in sorted(glob.glob(f"{out}/{kind}_{arm}_*.json"))]
result = {"bench": "binaries", "old": old, "new": new, "pairs": pairs}
for kind, pick, unit in (("interval", lambda d: d["interval_ms"]["median"], "ms"),
                         ("data", lambda d: d["runs"][0]["images_per_s_median"], "images/s")):
    o, n = medians(kind, "old", pick), medians(kind, "new", pick)
    result[kind] = {"unit": unit, "old_per_round": o, "new_per_round": n,
                    "old_median": statistics.median(o), "new_median": statistics.median(n),
                    "new_over_old": statistics.median(n) / statistics.median(o)}
result["revisions"] = {arm: json.load(open(f"{out}/interval_{arm}_1.json"))["record"]["git_revision"]
                       for arm in ("old", "new")}
print(json.dumps(result, indent=1))
PY
