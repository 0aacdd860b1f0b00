#!/usr/bin/env bash
# Installs what a fresh Debian 12 machine needs, and nothing that is already there.
#   scripts/setup.sh          what building and running trainer needs (README command 1, the demo):
#                             Debian packages (compiler, CMake, Ninja, ccache, lld, OpenCV, yaml-cpp,
#                             spdlog, CLI11, doctest, nlohmann-json, gloo) and the pinned PyPI torch
#                             wheel (our LibTorch) in a virtual environment outside the clone
#                             ($TRAINER_CACHE, default ~/.cache/trainer), so a second clone reuses it
#   scripts/setup.sh --tests  also the test oracles (README command 2, CI): pycocotools, the
#                             reference trainer and TensorBoard, which only tests read
#   scripts/setup.sh --fuzz   also clang and libFuzzer (scripts/fuzz.sh)
# One line per phase with its time; the tools' own output goes to $TRAINER_CACHE/setup.log, whose
# tail is printed when a phase fails. A second run takes seconds.
set -euo pipefail

TORCH_VERSION=2.11.0  # matches the GPU VM image (2.11.0+cu130) and the CUDA 13.0 toolkit here
PYCOCOTOOLS_VERSION=2.0.11  # the reference COCO evaluator the eval tests compare against
# The reference trainer, a test oracle only (tests/parity): installed without its dependencies so
# the torch pin stays, plus the packages it imports, each pinned. Nothing in lib/ or app/ uses it.
ULTRALYTICS_VERSION=8.4.190
ORACLE_NO_DEPS=("ultralytics==$ULTRALYTICS_VERSION" torchvision==0.26.0 ultralytics-thop==2.2.3)
ORACLE_PACKAGES=(opencv-python-headless==4.10.0.84 matplotlib==3.11.2 pillow==13.0.0 pyyaml==6.0.4
                 requests==2.34.2 psutil==7.2.2 polars==2.1.0 scipy==1.17.1)
# TensorBoard, a test oracle only: its own reader checks the event files we write (tests/core).
TENSORBOARD_VERSION=2.21.0
TRAINER_CACHE=${TRAINER_CACHE:-$HOME/.cache/trainer}
VENV=$TRAINER_CACHE/venv
APT_PACKAGES=(build-essential cmake ninja-build ccache lld time git pkg-config python3 python3-venv clang-format
              libopencv-dev libopencv-videoio-dev libgloo-dev libyaml-cpp-dev libspdlog-dev libcli11-dev doctest-dev
              nlohmann-json3-dev libturbojpeg0-dev libjpeg62-turbo-dev libpng-dev)
# clang 14 and its runtimes (libclang_rt.fuzzer, asan, ubsan live in libclang-rt-14-dev).
FUZZ_APT_PACKAGES=(clang libclang-rt-14-dev)
tests=0
for arg in "$@"; do
  case "$arg" in
    --tests) tests=1 ;;
    --fuzz) APT_PACKAGES+=("${FUZZ_APT_PACKAGES[@]}") ;;
    *) echo "setup.sh: unknown option $arg (--tests, --fuzz)" >&2; exit 2 ;;
  esac
done

mkdir -p "$TRAINER_CACHE"
SETUP_LOG=$TRAINER_CACHE/setup.log
: >"$SETUP_LOG"
log() { printf '[setup] %s\n' "$*" >&2; }
# quiet CMD...: runs a tool with its output in the log; on failure prints the log's tail and stops.
quiet() {
  if ! "$@" >>"$SETUP_LOG" 2>&1; then
    log "failed: $*"
    tail -n 30 "$SETUP_LOG" >&2
    log "(the whole output: $SETUP_LOG)"
    exit 1
  fi
}
phase_start=0
begin() { phase_start=$SECONDS; }
took() { echo "$((SECONDS - phase_start)) s"; }

as_root() {
  if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi
}

install_debian_packages() {
  begin
  local missing=()
  for p in "${APT_PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  if [ ${#missing[@]} -eq 0 ]; then
    log "apt: all ${#APT_PACKAGES[@]} packages present ($(took))"
    return
  fi
  log "apt: installing ${#missing[@]} packages: ${missing[*]} ..."
  quiet as_root apt-get update -q
  quiet as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
    "${missing[@]}"
  log "apt: ${#missing[@]} packages installed ($(took))"
}

make_venv() {
  [ -x "$VENV/bin/python" ] && return
  quiet python3 -m venv "$VENV"
  quiet "$VENV/bin/python" -m pip install --upgrade pip
}

pip_install() { quiet "$VENV/bin/python" -m pip install "$@"; }
install_torch() { pip_install "torch==$TORCH_VERSION"; }
# The reference is installed without its dependencies (its opencv-python would replace our pins),
# after the pinned packages it imports: in the other order pip prints a resolver "ERROR:".
install_oracles() {
  pip_install numpy "pycocotools==$PYCOCOTOOLS_VERSION" "tensorboard==$TENSORBOARD_VERSION" "${ORACLE_PACKAGES[@]}"
  pip_install --no-deps "${ORACLE_NO_DEPS[@]}"
}

# pip_phase NAME STAMP WHAT CHECK INSTALL: runs INSTALL (a function) unless STAMP exists, then CHECK
# (python, offline, with the reference's settings kept out of the home folder).
pip_phase() {
  local name=$1 stamp=$VENV/.trainer-$2 what=$3 check=$4 install=$5
  begin
  if [ -f "$stamp" ]; then
    log "$name: present in $VENV ($(took))"
    return
  fi
  log "$name: installing into $VENV ($what) ..."
  make_venv
  "$install"
  quiet env YOLO_OFFLINE=1 YOLO_CONFIG_DIR="$(mktemp -d)" "$VENV/bin/python" -c "$check"
  touch "$stamp"
  log "$name: installed ($(took))"
}

log "log of the tools' output: $SETUP_LOG"
install_debian_packages
pip_phase "torch $TORCH_VERSION" "torch-$TORCH_VERSION" "our LibTorch; a few GB, once" \
  "import torch; assert torch.__version__.startswith('$TORCH_VERSION')" install_torch
if [ "$tests" = 1 ]; then
  pip_phase "test oracles" \
    "oracles-pycocotools-$PYCOCOTOOLS_VERSION-ultralytics-$ULTRALYTICS_VERSION-tensorboard-$TENSORBOARD_VERSION" \
    "tests only: pycocotools, the reference trainer, TensorBoard" \
    "import pycocotools, ultralytics, tensorboard; assert ultralytics.__version__ == '$ULTRALYTICS_VERSION'; assert tensorboard.__version__ == '$TENSORBOARD_VERSION'" \
    install_oracles
fi
