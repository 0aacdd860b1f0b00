#!/usr/bin/env bash
# The pose demo: set up, build, generate the synthetic stick-figure dataset (7 keypoints with
# flip_idx), train a small YOLO26 pose model on it on CPU, print the box and keypoint metrics.
# Usage: scripts/pose_demo.sh [key=value ...]   (overrides for configs/pose_demo.yaml)
set -euo pipefail
exec "$(dirname "$0")/synthetic_demo.sh" "pose demo" data/generated/poses pose.yaml \
  configs/pose_demo.yaml "--task pose --train 256 --val 64 --size 256 --max-objects 3 --seed 0" "$@"
