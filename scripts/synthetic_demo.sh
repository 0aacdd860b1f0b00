#!/usr/bin/env bash
# Shared by demo.sh, pose_demo.sh and obb_demo.sh: set up, build, generate one of the project's
# synthetic datasets (once), train on it with a config on CPU, print the time it took.
# Usage: scripts/synthetic_demo.sh NAME DATA_DIR DATA_YAML CONFIG "SYNTH ARGS" [key=value ...]
set -euo pipefail
source "$(dirname "$0")/env.sh"

name=$1 data=$2 yaml=$3 config=$4 synth_args=$5
shift 5
"$TRAINER_ROOT/scripts/setup.sh"
"$TRAINER_ROOT/scripts/build.sh" trainer
cd "$TRAINER_ROOT"
trainer=build/app/trainer
"$trainer" --version
if [ ! -f "$data/$yaml" ]; then
  # shellcheck disable=SC2086  # the synth arguments are words
  "$trainer" synth "$data" $synth_args
fi
start=$(date +%s)
"$trainer" fit "$config" "$@"
echo "$name finished in $(( $(date +%s) - start )) s"
