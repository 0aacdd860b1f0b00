#!/usr/bin/env bash
# Sets up, builds and runs the embedded demo.
# For now (until the fit issue lands) it prints the version report and the resolved demo config;
# then it will generate the synthetic dataset, train on it, and print where the run folder is.
set -euo pipefail
source "$(dirname "$0")/env.sh"

"$TRAINER_ROOT/scripts/setup.sh"
"$TRAINER_ROOT/scripts/build.sh" trainer
cd "$TRAINER_ROOT"
build/app/trainer --version
build/app/trainer config configs/demo.yaml "$@"
