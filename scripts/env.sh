# Sourced by the other scripts: paths shared by setup, build, test and demo.
TRAINER_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
TRAINER_CACHE=${TRAINER_CACHE:-$HOME/.cache/trainer}
TRAINER_VENV=$TRAINER_CACHE/venv
TRAINER_BUILD=${TRAINER_BUILD:-$TRAINER_ROOT/build}
TRAINER_BUILD_CUDA=${TRAINER_BUILD_CUDA:-$TRAINER_ROOT/build-cuda}
TRAINER_BUILD_DEV=${TRAINER_BUILD_DEV:-$TRAINER_ROOT/build-dev}
TRAINER_BUILD_ASAN=${TRAINER_BUILD_ASAN:-$TRAINER_ROOT/build-asan}
TRAINER_BUILD_FUZZ=${TRAINER_BUILD_FUZZ:-$TRAINER_ROOT/build-fuzz}
# Real COCO subsets used by tests and benchmarks (never copied into the project).
export TRAINER_SHARED_DATA=${TRAINER_SHARED_DATA:-$(cd "$TRAINER_ROOT/.." && pwd)/shared/data}
export CCACHE_DIR=${CCACHE_DIR:-$HOME/.cache/ccache}
# Room for the CPU and CUDA builds of a few clones (the default 5 GB evicts between CI runs).
export CCACHE_MAXSIZE=${CCACHE_MAXSIZE:-20G}
