#!/usr/bin/env bash
# Installs everything a fresh Debian 12 machine needs to build trainer, and nothing that is already
# there: Debian packages (compiler, CMake, Ninja, ccache, OpenCV, yaml-cpp, spdlog, CLI11, doctest,
# nlohmann-json) and the pinned PyPI torch wheel (our LibTorch) plus pycocotools (the eval tests'
# reference) in a virtual environment outside the clone ($TRAINER_CACHE, default ~/.cache/trainer),
# so a second clone or CI run reuses it.
# A second run takes seconds. Usage: scripts/setup.sh [--fuzz]
#   --fuzz: also clang and libFuzzer (scripts/fuzz.sh), which nothing else needs
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
APT_PACKAGES=(build-essential cmake ninja-build ccache git pkg-config python3 python3-venv clang-format
              libopencv-dev libopencv-videoio-dev libgloo-dev libyaml-cpp-dev libspdlog-dev libcli11-dev doctest-dev
              nlohmann-json3-dev libturbojpeg0-dev libjpeg62-turbo-dev libpng-dev)
# clang 14 and its runtimes (libclang_rt.fuzzer, asan, ubsan live in libclang-rt-14-dev).
FUZZ_APT_PACKAGES=(clang libclang-rt-14-dev)
if [ "${1:-}" = "--fuzz" ]; then
  APT_PACKAGES+=("${FUZZ_APT_PACKAGES[@]}")
fi

log() { printf '[setup] %s\n' "$*" >&2; }

as_root() {
  if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi
}

install_debian_packages() {
  local missing=()
  for p in "${APT_PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  if [ ${#missing[@]} -eq 0 ]; then
    log "Debian packages: all present"
    return
  fi
  log "Debian packages: installing ${missing[*]}"
  as_root apt-get update -qq
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
}

install_torch() {
  local stamp=$VENV/.trainer-torch-$TORCH_VERSION-pycocotools-$PYCOCOTOOLS_VERSION
  if [ -f "$stamp" ]; then
    log "torch $TORCH_VERSION, pycocotools $PYCOCOTOOLS_VERSION: present in $VENV"
    return
  fi
  mkdir -p "$TRAINER_CACHE"
  [ -x "$VENV/bin/python" ] || python3 -m venv "$VENV"
  log "torch $TORCH_VERSION: installing into $VENV (a few GB, once)"
  "$VENV/bin/python" -m pip install -q --upgrade pip
  "$VENV/bin/python" -m pip install -q "torch==$TORCH_VERSION" numpy \
    "pycocotools==$PYCOCOTOOLS_VERSION"
  touch "$stamp"
}

install_oracle() {
  local stamp=$VENV/.trainer-oracle-ultralytics-$ULTRALYTICS_VERSION
  if [ -f "$stamp" ]; then
    log "reference oracle ultralytics $ULTRALYTICS_VERSION: present in $VENV"
    return
  fi
  log "reference oracle ultralytics $ULTRALYTICS_VERSION: installing into $VENV (tests only)"
  "$VENV/bin/python" -m pip install -q --no-deps "${ORACLE_NO_DEPS[@]}"
  "$VENV/bin/python" -m pip install -q "${ORACLE_PACKAGES[@]}"
  # Import check offline, with settings kept out of the home folder.
  YOLO_OFFLINE=1 YOLO_CONFIG_DIR="$(mktemp -d)" "$VENV/bin/python" -c \
    "import ultralytics, torch; assert ultralytics.__version__ == '$ULTRALYTICS_VERSION'"
  touch "$stamp"
}

install_tensorboard() {
  local stamp=$VENV/.trainer-tensorboard-$TENSORBOARD_VERSION
  if [ -f "$stamp" ]; then
    log "tensorboard $TENSORBOARD_VERSION: present in $VENV"
    return
  fi
  log "tensorboard $TENSORBOARD_VERSION: installing into $VENV (tests only)"
  "$VENV/bin/python" -m pip install -q "tensorboard==$TENSORBOARD_VERSION"
  "$VENV/bin/python" -c "import tensorboard; assert tensorboard.__version__ == '$TENSORBOARD_VERSION'"
  touch "$stamp"
}

install_debian_packages
install_torch
install_oracle
install_tensorboard
