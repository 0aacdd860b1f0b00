#!/usr/bin/env bash
# The pose demo: set up, build, generate the synthetic stick-figure dataset (7 keypoints with
# flip_idx), train a small YOLO26 pose model on it on CPU, print the box and keypoint metrics.
# Usage: scripts/pose_demo.sh [key=value ...]   (overrides for configs/pose_demo.yaml)
set -euo pipefail
source "$(dirname "$0")/env.sh"

"$TRAINER_ROOT/scripts/setup.sh"
"$TRAINER_ROOT/scripts/build.sh" trainer
cd "$TRAINER_ROOT"
trainer=build/app/trainer
"$trainer" --version
data=data/generated/poses
if [ ! -f "$data/pose.yaml" ]; then
  "$trainer" synth "$data" --task pose --train 256 --val 64 --size 256 --max-objects 3 --seed 0
fi
start=$(date +%s)
"$trainer" fit configs/pose_demo.yaml "$@"
echo "pose demo finished in $(( $(date +%s) - start )) s"
