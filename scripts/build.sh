#!/usr/bin/env bash
# Configures (once) and builds trainer with Ninja, ccache and a precompiled LibTorch header.
# Usage: scripts/build.sh [--cuda] [ninja targets...]
#   default: the CPU build in build/ (what the tests run)
#   --cuda:  the CUDA build in build-cuda/ (compiles and links here; runs on a GPU machine)
set -euo pipefail
source "$(dirname "$0")/env.sh"

cuda=OFF
dir=$TRAINER_BUILD
if [ "${1:-}" = "--cuda" ]; then
  cuda=ON
  dir=$TRAINER_BUILD_CUDA
  shift
fi
if [ ! -f "$dir/build.ninja" ]; then
  prefix=${TRAINER_TORCH_PREFIX:-$("$TRAINER_VENV/bin/python" -c 'import torch; print(torch.utils.cmake_prefix_path)' 2>/dev/null)}
  cmake -S "$TRAINER_ROOT" -B "$dir" -G Ninja -DCMAKE_PREFIX_PATH="$prefix" \
        -DTRAINER_CUDA=$cuda -DTRAINER_WERROR=${TRAINER_WERROR:-ON} ${TRAINER_CMAKE_ARGS:-}
fi
cmake --build "$dir" -- "$@"
