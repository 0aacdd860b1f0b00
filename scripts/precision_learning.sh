#!/usr/bin/env bash
# Does BF16 learn like fp32? Trains the same recipes in both precisions over several seeds and
# reports the final mAP of each run, then the mean and spread per (recipe, precision).
#
# Why a script and not a test: one recipe x seed x precision is a complete fit (20 s to 4 min on 2
# cores); the answer needs several seeds because the seed-to-seed spread of a short fit is as
# large as the effect being looked for.
#
# Usage: scripts/precision_learning.sh [work folder] [recipe ...]
#   recipes: demo (configs/demo.yaml on the generated shapes set), overfit (configs/coco8_overfit.yaml)
# Env:   TRAINER_BIN (default build/app/trainer), SEEDS (default "0 1 2"),
#        PRECISIONS (default "fp32 bf16"), EXTRA (more key=value overrides for every run).
# Prints one JSON line per run and one summary line per (recipe, precision).
set -euo pipefail
source "$(dirname "$0")/env.sh"

work=${1:-$(mktemp -d -t trainer-precision-XXXXXX)}
shift || true
recipes=("$@")
[ ${#recipes[@]} -gt 0 ] || recipes=(demo overfit)
trainer=${TRAINER_BIN:-$TRAINER_ROOT/build/app/trainer}
seeds=${SEEDS:-0 1 2}
precisions=${PRECISIONS:-fp32 bf16}
read -r -a extra <<<"${EXTRA:-}"
[ -x "$trainer" ] || { echo "precision_learning: $trainer not built" >&2; exit 2; }
mkdir -p "$work"
cd "$TRAINER_ROOT"

config_of() {
  case "$1" in
    demo)
      if [ ! -f data/generated/shapes/synthetic.yaml ]; then
        "$trainer" -q synth data/generated/shapes --train 256 --val 64 --size 256 \
          --max-objects 4 --seed 0 >&2
      fi
      echo configs/demo.yaml ;;
    overfit) echo configs/coco8_overfit.yaml ;;
    *) echo "precision_learning: unknown recipe $1 (demo, overfit)" >&2; exit 2 ;;
  esac
}

# The last results.csv row's mAP50-95(B) and total train loss.
last_row() {
  python3 - "$1" <<'EOF'
import csv, json, sys
rows = list(csv.DictReader(open(sys.argv[1])))
last = {k.strip(): v.strip() for k, v in rows[-1].items()}
loss = sum(float(v) for k, v in last.items() if k.startswith("train/") and k.endswith("_loss"))
print(json.dumps({"map50_95": float(last["metrics/mAP50-95(B)"]),
                  "map50": float(last["metrics/mAP50(B)"]), "train_loss": round(loss, 4)}))
EOF
}

results=$work/runs.jsonl
: >"$results"
for recipe in "${recipes[@]}"; do
  config=$(config_of "$recipe")
  for seed in $seeds; do
    for precision in $precisions; do
      name=${recipe}_${precision}_s${seed}
      start=$(date +%s.%N)
      "$trainer" -q fit "$config" seed="$seed" precision="$precision" project="$work" \
        name="$name" exist_ok=true plots=false "${extra[@]}" >"$work/$name.log" 2>&1 ||
        { echo "precision_learning: $name failed, see $work/$name.log" >&2; exit 1; }
      seconds=$(python3 -c "import sys; print(round($(date +%s.%N) - $start, 1))")
      row=$(last_row "$work/$name/results.csv")
      line=$(python3 -c "import json,sys; r=json.loads(sys.argv[1]); r.update(recipe='$recipe', precision='$precision', seed=$seed, seconds=$seconds); print(json.dumps(r))" "$row")
      echo "$line" | tee -a "$results"
    done
  done
done

python3 - "$results" <<'EOF'
import json, statistics, sys
runs = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
keys = sorted({(r["recipe"], r["precision"]) for r in runs})
for recipe, precision in keys:
    sel = [r for r in runs if r["recipe"] == recipe and r["precision"] == precision]
    maps = [r["map50_95"] for r in sel]
    secs = [r["seconds"] for r in sel]
    print(json.dumps({"summary": recipe, "precision": precision, "runs": len(sel),
                      "map50_95_mean": round(statistics.mean(maps), 4),
                      "map50_95_sd": round(statistics.stdev(maps), 4) if len(maps) > 1 else 0.0,
                      "map50_95": [round(m, 4) for m in maps],
                      "seconds_median": round(statistics.median(secs), 1)}))
EOF
