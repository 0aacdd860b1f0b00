#!/usr/bin/env bash
# Rehearses the configure and build steps of `scripts/gpu_check.sh --bundle` with CUDA on, as the
# GPU machine runs them: the bundle made here (scripts/make_gpu_bundle.sh), CMake re-rooted into it
# (CMAKE_FIND_ROOT_PATH_MODE_*=ONLY), Caffe2's CUDA cmake (FindCUDAToolkit, enable_language(CUDA),
# its try_run) against this machine's nvcc 13.0, and the targets the GPU run builds (`trainer`,
# `test_cuda_smoke`) compiled and linked. Nothing runs on a GPU: the point is that the first GPU
# session does not meet a configure or compile error.
#
# Why a script and not a ctest case: a cold CUDA build is about 20 minutes on this 2-core machine
# (ccache makes a repeat a few minutes), too long for the default CI run.
# Usage: scripts/gpu_check_cuda_rehearsal.sh   (after scripts/setup.sh; prints one JSON line)
# Env: GPU_REHEARSAL_BUILD_DIR (default build-gpu-rehearsal), GPU_REHEARSAL_BUNDLE (default: make
#      one in build-gpu-bundle/ unless it exists).
set -euo pipefail
source "$(dirname "$0")/env.sh"

command -v nvcc >/dev/null || [ -x /usr/local/cuda/bin/nvcc ] ||
  { echo "gpu_check_cuda_rehearsal: no nvcc here; nothing to rehearse" >&2; exit 2; }
export PATH=$PATH:/usr/local/cuda/bin
build=${GPU_REHEARSAL_BUILD_DIR:-$TRAINER_ROOT/build-gpu-rehearsal}
bundle=${GPU_REHEARSAL_BUNDLE:-$TRAINER_ROOT/build-gpu-bundle/trainer-gpu-bundle.tar.gz}
start=$SECONDS
if [ ! -f "$bundle" ]; then
  "$TRAINER_ROOT/scripts/make_gpu_bundle.sh" --out "$(dirname "$bundle")" >&2
fi
out=$build/rehearsal-out
rm -rf "$out"
set +e
GPU_CHECK_ALLOW_CPU=1 GPU_CHECK_CUDA_BUILD=1 GPU_CHECK_STEPS=configure,build \
  GPU_CHECK_TARGETS="trainer test_cuda_smoke" GPU_CHECK_BUDGET_S=7200 GPU_CHECK_BUILD_DIR="$build" \
  GPU_CHECK_PYTHON="$TRAINER_VENV/bin/python" GPU_CHECK_OUT="$out" \
  "$TRAINER_ROOT/scripts/gpu_check.sh" --bundle "$bundle" >&2
rc=$?
set -e
cuda=$(grep -cE '^TRAINER_CUDA:[A-Z]+=ON' "$build/CMakeCache.txt" 2>/dev/null || true)
linked=false
[ -x "$build/app/trainer" ] && [ -x "$build/tests/cuda/test_cuda_smoke" ] && linked=true
cuda_runtime=false
ldd "$build/app/trainer" 2>/dev/null | grep -q 'libtorch_cuda\|libc10_cuda' && cuda_runtime=true
printf '{"exit": %d, "cuda_on": %s, "linked": %s, "links_torch_cuda": %s, "seconds": %d, "summary": "%s"}\n' \
  "$rc" "$([ "$cuda" = 1 ] && echo true || echo false)" "$linked" "$cuda_runtime" \
  $((SECONDS - start)) "$out/gpu_check.json"
[ "$rc" = 0 ] && [ "$cuda" = 1 ] && [ "$linked" = true ]
