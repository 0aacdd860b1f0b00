#!/usr/bin/env bash
# Sets up, builds and runs every test: the CPU build with its full test suite, and (where the CUDA
# toolkit is present) the CUDA build compiled and linked so a CUDA-only compile error cannot land.
# Usage: scripts/test.sh [extra ctest arguments]
set -euo pipefail
source "$(dirname "$0")/env.sh"

"$TRAINER_ROOT/scripts/setup.sh"
"$TRAINER_ROOT/scripts/build.sh"
if [ "${TRAINER_SKIP_CUDA_BUILD:-0}" != 1 ] && { command -v nvcc >/dev/null || [ -x /usr/local/cuda/bin/nvcc ]; }; then
  # Every library and the app (all CUDA-specific code lives there), not the test binaries.
  echo "[test] compiling the CUDA build (libraries and the trainer app) in $TRAINER_BUILD_CUDA"
  "$TRAINER_ROOT/scripts/build.sh" --cuda trainer
else
  echo "[test] no CUDA toolkit (or TRAINER_SKIP_CUDA_BUILD=1): CUDA build not compiled"
fi
cd "$TRAINER_BUILD"
ctest -j"$(nproc)" --output-on-failure "$@"
