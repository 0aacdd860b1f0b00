#!/usr/bin/env bash
# The OBB demo: set up, build, generate the synthetic rotated-shapes dataset (bars, capsules,
# arrows with DOTA-style corner labels), train a small YOLO26 OBB model on it on CPU, print metrics.
# Usage: scripts/obb_demo.sh [key=value ...]   (overrides for configs/obb_demo.yaml)
set -euo pipefail
exec "$(dirname "$0")/synthetic_demo.sh" "OBB demo" data/generated/obb obb.yaml \
  configs/obb_demo.yaml "--task obb --train 256 --val 64 --size 256 --max-objects 4 --seed 0" "$@"
