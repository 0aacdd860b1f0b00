#!/usr/bin/env bash
# Installs everything a fresh Debian 12 machine needs to build trainer, and nothing that is already
# there: Debian packages (compiler, CMake, Ninja, ccache, OpenCV, yaml-cpp, spdlog, CLI11, doctest,
# nlohmann-json) and the pinned PyPI torch wheel (our LibTorch) plus pycocotools (the eval tests'
# reference) in a virtual environment outside the clone ($TRAINER_CACHE, default ~/.cache/trainer),
# so a second clone or CI run reuses it.
# A second run takes seconds. Usage: scripts/setup.sh
set -euo pipefail

TORCH_VERSION=2.11.0  # matches the GPU VM image (2.11.0+cu130) and the CUDA 13.0 toolkit here
PYCOCOTOOLS_VERSION=2.0.11  # the reference COCO evaluator the eval tests compare against
TRAINER_CACHE=${TRAINER_CACHE:-$HOME/.cache/trainer}
VENV=$TRAINER_CACHE/venv
APT_PACKAGES=(build-essential cmake ninja-build ccache git pkg-config python3 python3-venv
              libopencv-dev libyaml-cpp-dev libspdlog-dev libcli11-dev doctest-dev
              nlohmann-json3-dev libturbojpeg0-dev libpng-dev)

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

install_debian_packages
install_torch
