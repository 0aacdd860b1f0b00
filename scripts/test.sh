#!/usr/bin/env bash
# Sets up, builds and runs every test: the CPU build with its full test suite, (where the CUDA
# toolkit is present) the CUDA build's CUDA-specific translation units compiled so a CUDA-only
# compile error cannot land, and the core and data suites plus the fuzz replays again under ASan +
# UBSan (build-asan/), since those libraries read every byte users hand in.
# TRAINER_SKIP_SANITIZE=1 skips that last part. TRAINER_CUDA_BUILD=full builds and links the whole
# CUDA app instead (about 20 minutes more on a cold 2-core machine: CI must fit in 90).
# Usage: scripts/test.sh [extra ctest arguments]
set -euo pipefail
source "$(dirname "$0")/env.sh"

"$TRAINER_ROOT/scripts/setup.sh" --tests
"$TRAINER_ROOT/scripts/check_format.sh"
"$TRAINER_ROOT/scripts/build.sh"
if [ "${TRAINER_SKIP_CUDA_BUILD:-0}" != 1 ] && { command -v nvcc >/dev/null || [ -x /usr/local/cuda/bin/nvcc ]; }; then
  if [ "${TRAINER_CUDA_BUILD:-objects}" = full ]; then
    echo "[test] compiling and linking the CUDA build (libraries and the trainer app) in $TRAINER_BUILD_CUDA"
    "$TRAINER_ROOT/scripts/build.sh" --cuda trainer
  else
    # Only the translation units whose code differs under CUDA (scripts/cuda_affected_objects.py);
    # every other one compiles to the same code as in the CPU build just built.
    "$TRAINER_ROOT/scripts/build.sh" --cuda build.ninja
    mapfile -t cuda_objects < <(python3 "$TRAINER_ROOT/scripts/cuda_affected_objects.py" "$TRAINER_BUILD_CUDA")
    echo "[test] compiling the ${#cuda_objects[@]} CUDA-specific translation units in $TRAINER_BUILD_CUDA"
    "$TRAINER_ROOT/scripts/build.sh" --cuda "${cuda_objects[@]}"
  fi
else
  echo "[test] no CUDA toolkit (or TRAINER_SKIP_CUDA_BUILD=1): CUDA build not compiled"
fi
(cd "$TRAINER_BUILD" && ctest -j"$(nproc)" --output-on-failure "$@")

if [ "${TRAINER_SKIP_SANITIZE:-0}" != 1 ]; then
  echo "[test] core and data suites and fuzz replays under ASan + UBSan in $TRAINER_BUILD_ASAN"
  asan_suites=(test_core test_core_torch test_data_spec test_data test_image_codecs test_geometry
               fuzz_replay_config fuzz_replay_dataset_yaml fuzz_replay_yolo_labels
               fuzz_replay_coco_json fuzz_replay_coco_results fuzz_replay_checkpoint
               fuzz_replay_weights fuzz_replay_image_header fuzz_replay_exif fuzz_replay_results_csv
               fuzz_replay_predict_sources fuzz_replay_label_cache fuzz_replay_disk_cache
               fuzz_replay_pickle test_restricted_unpickler test_data_limits)
  "$TRAINER_ROOT/scripts/build.sh" --sanitize "${asan_suites[@]}"
  # Every finding stops the test, leaks included (these suites have none, LibTorch's static state
  # included). Where ptrace is not allowed (some containers) LeakSanitizer cannot run: set
  # ASAN_OPTIONS=detect_leaks=0 there.
  export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:strict_string_checks=1}
  export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
  regex="^($(IFS='|'; echo "${asan_suites[*]}"))(:|\$)"
  (cd "$TRAINER_BUILD_ASAN" && ctest -j"$(nproc)" --output-on-failure -R "$regex" "$@")
fi
