#!/usr/bin/env bash
# The OBB demo: set up, build, generate the synthetic rotated-shapes dataset (bars, capsules,
# arrows with DOTA-style corner labels), train a small YOLO26 OBB model on it on CPU, print metrics.
# Usage: scripts/obb_demo.sh [key=value ...]   (overrides for configs/obb_demo.yaml)
set -euo pipefail
source "$(dirname "$0")/env.sh"

"$TRAINER_ROOT/scripts/setup.sh"
"$TRAINER_ROOT/scripts/build.sh" trainer
cd "$TRAINER_ROOT"
trainer=build/app/trainer
"$trainer" --version
data=data/generated/obb
if [ ! -f "$data/obb.yaml" ]; then
  "$trainer" synth "$data" --task obb --train 256 --val 64 --size 256 --max-objects 4 --seed 0
fi
start=$(date +%s)
"$trainer" fit configs/obb_demo.yaml "$@"
echo "OBB demo finished in $(( $(date +%s) - start )) s"
