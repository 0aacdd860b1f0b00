#!/usr/bin/env bash
# The embedded demo: set up, build, generate the synthetic shapes dataset, train a small YOLO26 on
# it on CPU, print the metrics and the run folder.
# Usage: scripts/demo.sh [key=value ...]   (overrides for configs/demo.yaml, e.g. epochs=3)
set -euo pipefail
source "$(dirname "$0")/env.sh"

"$TRAINER_ROOT/scripts/setup.sh"
"$TRAINER_ROOT/scripts/build.sh" trainer
cd "$TRAINER_ROOT"
trainer=build/app/trainer
"$trainer" --version
data=data/generated/shapes
if [ ! -f "$data/synthetic.yaml" ]; then
  "$trainer" synth "$data" --train 256 --val 64 --size 256 --max-objects 4 --seed 0
fi
start=$(date +%s)
"$trainer" fit configs/demo.yaml "$@"
echo "demo finished in $(( $(date +%s) - start )) s"
