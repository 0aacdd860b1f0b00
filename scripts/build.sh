#!/usr/bin/env bash
# Configures (once) and builds trainer with Ninja, ccache and a precompiled LibTorch header.
# Usage: scripts/build.sh [--cuda|--dev|--sanitize|--fuzz] [ninja targets...]
#   default:    the CPU build in build/ (what the tests run), compiled in unity units of 8 sources:
#               the cheapest build from cold (README, CI)
#   --dev:      the same without unity units, in build-dev/: one translation unit per source, so
#               a one-file change recompiles that file alone (in build/ it recompiles its unit's 8)
#   --cuda:     the CUDA build in build-cuda/ (compiles and links here; runs on a GPU machine)
#   --sanitize: ASan + UBSan on the core and data libraries and their tests, in build-asan/
#               (scripts/test.sh builds and runs those suites there)
#   --fuzz:     clang + libFuzzer + ASan + UBSan in build-fuzz/ (scripts/fuzz.sh); warnings are not
#               errors there, since clang warns about things gcc does not
set -euo pipefail
source "$(dirname "$0")/env.sh"

cuda=OFF
dir=$TRAINER_BUILD
werror=${TRAINER_WERROR:-ON}
extra=()
case "${1:-}" in
  --cuda)
    cuda=ON
    dir=$TRAINER_BUILD_CUDA
    shift ;;
  --dev)
    dir=$TRAINER_BUILD_DEV
    extra=(-DTRAINER_UNITY=OFF)
    shift ;;
  --sanitize)
    dir=$TRAINER_BUILD_ASAN
    # Built without unity: CI's check that each file of those libraries compiles on its own.
    extra=(-DTRAINER_SANITIZE=ON -DTRAINER_UNITY=OFF)
    shift ;;
  --fuzz)
    dir=$TRAINER_BUILD_FUZZ
    werror=OFF
    extra=(-DTRAINER_FUZZ=ON -DCMAKE_CXX_COMPILER=clang++)
    shift ;;
esac
if [ ! -f "$dir/build.ninja" ]; then
  prefix=${TRAINER_TORCH_PREFIX:-$("$TRAINER_VENV/bin/python" -c 'import torch; print(torch.utils.cmake_prefix_path)' 2>/dev/null)}
  cmake -S "$TRAINER_ROOT" -B "$dir" -G Ninja -DCMAKE_PREFIX_PATH="$prefix" \
        -DTRAINER_CUDA=$cuda -DTRAINER_WERROR=$werror "${extra[@]}" ${TRAINER_CMAKE_ARGS:-}
fi
cmake --build "$dir" -- "$@"
