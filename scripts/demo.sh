#!/usr/bin/env bash
# The embedded demo: set up, build, generate the synthetic shapes dataset, train a small YOLO26 on
# it on CPU, print the metrics and the run folder.
# Usage: scripts/demo.sh [key=value ...]   (overrides for configs/demo.yaml, e.g. epochs=3)
set -euo pipefail
exec "$(dirname "$0")/synthetic_demo.sh" demo data/generated/shapes synthetic.yaml configs/demo.yaml \
  "--train 256 --val 64 --size 256 --max-objects 4 --seed 0" "$@"
