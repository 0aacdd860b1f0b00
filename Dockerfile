# trainer for GPU VMs: CUDA 13.0, the version the pinned torch 2.11.0 wheel (our LibTorch) is built
# for (2.11.0+cu130), on Ubuntu 24.04. Two stages: `build` has the toolchain and builds trainer;
# `runtime` carries only the binary, LibTorch's and CUDA's libraries from the wheel, and the shared
# libraries the binary loads (found with ldd, so no runtime package names to keep in step).
#
#   docker build -t trainer .
#   docker run --rm --gpus all -v /data/coco:/data/coco -v "$PWD/runs:/opt/trainer/runs" \
#       trainer fit configs/coco.yaml
#
# /data/coco is COCO_ROOT (configs/data/coco.yaml reads images/{train2017,val2017} and labels/ under
# it). The GPU check runs in the build stage, which has everything scripts/gpu_check.sh needs:
#   docker build --target build -t trainer-build .
#   docker run --rm --gpus all -v "$PWD/gpu-check:/out" trainer-build scripts/gpu_check.sh --out /out
#
# Not built here: the development machines have a Docker client but no engine. Keep the package list
# in step with scripts/setup.sh.

ARG CUDA_VERSION=13.0.0
ARG UBUNTU=ubuntu24.04

# ------------------------------------------------------------------------------------------ build
FROM nvidia/cuda:${CUDA_VERSION}-devel-${UBUNTU} AS build
ARG TORCH_VERSION=2.11.0
ARG TORCH_CUDA_ARCH_LIST="8.9;9.0"
ENV DEBIAN_FRONTEND=noninteractive
RUN apt-get update \
 && apt-get install -y --no-install-recommends \
      build-essential cmake ninja-build git pkg-config python3 python3-venv \
      libopencv-dev libopencv-videoio-dev libgloo-dev libyaml-cpp-dev libspdlog-dev libcli11-dev doctest-dev nlohmann-json3-dev \
      libturbojpeg0-dev libpng-dev \
 && rm -rf /var/lib/apt/lists/*
# LibTorch is the pinned PyPI wheel (CUDA 13.0 build), as in scripts/setup.sh.
RUN python3 -m venv /opt/venv \
 && /opt/venv/bin/pip install --no-cache-dir "torch==${TORCH_VERSION}" numpy
ENV PATH=/opt/venv/bin:${PATH}

WORKDIR /src
COPY . .
# .git comes along so `trainer --version` and every benchmark JSON carry the revision.
RUN git config --global --add safe.directory /src \
 && cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DTRAINER_CUDA=ON \
      -DTRAINER_BUILD_TESTS=OFF -DTORCH_CUDA_ARCH_LIST="${TORCH_CUDA_ARCH_LIST}" \
      -DCMAKE_PREFIX_PATH="$(python -c 'import torch; print(torch.utils.cmake_prefix_path)')" \
 && cmake --build build --target trainer \
 && build/app/trainer --version

# Stage what the runtime needs under /stage: the binary, the configs, torch/lib and the wheel's
# nvidia/ libraries (kept side by side: torch's RPATH is $ORIGIN/../../nvidia/...), and every other
# shared library the binary loads, except the C/C++ runtime the base image has.
RUN set -eux; \
    site=$(python -c 'import os, torch; print(os.path.dirname(os.path.dirname(torch.__file__)))'); \
    mkdir -p /stage/bin /stage/lib /stage/site/torch; \
    cp build/app/trainer /stage/bin/; \
    cp -a configs /stage/configs; \
    cp -a "$site/torch/lib" /stage/site/torch/lib; \
    cp -a "$site/nvidia" /stage/site/nvidia; \
    rm -f /stage/site/torch/lib/libtorch_python.so; \
    ldd build/app/trainer | awk '$2 == "=>" && $3 ~ /^\// {print $3}' \
      | grep -v "^$site/" \
      | grep -vE '/(libc|libm|libmvec|libdl|librt|libpthread|libgcc_s|libstdc\+\+|ld-linux-x86-64)\.so' \
      | xargs -r cp -L -t /stage/lib/; \
    ls /stage/lib

# ---------------------------------------------------------------------------------------- runtime
FROM nvidia/cuda:${CUDA_VERSION}-base-${UBUNTU} AS runtime
COPY --from=build /stage/ /opt/trainer/
# The nvidia/cuda base sets NVIDIA_VISIBLE_DEVICES; compute is needed for libcuda to be mounted.
ENV PATH=/opt/trainer/bin:${PATH} \
    LD_LIBRARY_PATH=/opt/trainer/lib:/opt/trainer/site/torch/lib:${LD_LIBRARY_PATH} \
    NVIDIA_DRIVER_CAPABILITIES=compute,utility \
    COCO_ROOT=/data/coco
WORKDIR /opt/trainer
RUN trainer --version
ENTRYPOINT ["trainer"]
CMD ["--help"]
