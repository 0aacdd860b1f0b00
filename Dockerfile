# trainer in a container: the CUDA image for GPU VMs (default) and a CPU-only image, from one
# Dockerfile, on plain Debian 12 (the distribution the project is built and tested on).
#
#   docker build -t trainer .                                          # CUDA 13.0 (GPU VMs)
#   docker build --build-arg TRAINER_CUDA=OFF -t trainer:cpu .          # CPU only
#   docker build --target smoke -t trainer-smoke .                     # the runtime, proven
#   docker run --rm --gpus all --ipc=host -v /data/coco:/data/coco -v "$PWD/runs:/opt/trainer/runs" \
#       trainer fit configs/coco.yaml
#
# Stages:
#   toolchain  Debian's compiler and libraries (the list of scripts/setup.sh) and the pinned PyPI
#              torch wheel, our LibTorch; for CUDA also NVIDIA's toolkit wheels pinned to the CUDA
#              version of that torch (13.0.x): nvcc and the headers CMake's CUDAToolkit needs. One
#              source of CUDA libraries: the wheel's (nvidia/cu13/lib), never a second toolkit's.
#   build      the sources and `cmake --build` with the build folder and ccache in a cache mount;
#              a change in lib/ re-runs this stage only (no torch download; Ninja recompiles what
#              changed).
#   runtime    the binary, configs, and what it loads: the shared libraries ldd resolves, copied;
#              torch/lib and the nvidia/ libraries at their places in the Python package, so torch's
#              RPATH ($ORIGIN/../../nvidia/cu13/lib) resolves; in the CUDA image the whole torch
#              Python package with Python, so `python -m torch.distributed.run` (torchrun, elastic
#              restarts) works inside. The CPU image carries only the libraries the CPU build loads
#              (libtorch_cpu's two from nvidia/: cudart and cupti), and no Python (its data-parallel
#              launcher is trainer's own: device=cpu,cpu).
#   smoke      RUN steps on top of runtime that prove it complete on a machine without a GPU:
#              --version, info, synth + a 1-epoch fit on the CPU, val and predict of the result,
#              torchrun's help (CUDA image), and ldd finding every library inside the image except
#              the driver's (libcuda.so.1, libnvidia-ml.so.1: the GPU container runtime mounts them).
#
# BASE: debian:12 from a registry; scripts/docker_test.sh passes localhost/debian:12, made with
# debootstrap (no registry is reachable there).

ARG BASE=debian:12
ARG TRAINER_CUDA=ON

# -------------------------------------------------------------------------------------- toolchain
FROM ${BASE} AS toolchain
ARG TRAINER_CUDA
ARG TORCH_VERSION=2.11.0
# The cuda-toolkit version the torch wheel itself requires (its METADATA: cuda-toolkit==13.0.2).
ARG CUDA_TOOLKIT_VERSION=13.0.2
# A new value starts a new chain of toolchain layers (scripts/docker_test.sh's cold build); the
# same value reuses exactly that chain. Without it a cold build forced with --no-cache left two
# chains with the same steps, and the next build's cache lookup could follow the older one: torch
# downloaded again, its headers newer, every object rebuilt.
ARG TOOLCHAIN_EPOCH=0
ENV DEBIAN_FRONTEND=noninteractive
RUN echo "toolchain epoch ${TOOLCHAIN_EPOCH}" \
 && apt-get update \
 && apt-get install -y --no-install-recommends ca-certificates \
      build-essential cmake ninja-build ccache git pkg-config python3 python3-venv \
      libopencv-dev libopencv-videoio-dev libgloo-dev libyaml-cpp-dev libspdlog-dev libcli11-dev \
      doctest-dev nlohmann-json3-dev libturbojpeg0-dev libjpeg62-turbo-dev libpng-dev \
 && rm -rf /var/lib/apt/lists/*
# `--secret id=ca,src=BUNDLE`: a CA bundle for networks that inspect TLS (docker_test.sh passes
# the host's); without it pip trusts the default CAs.
RUN --mount=type=cache,target=/root/.cache/pip --mount=type=secret,id=ca \
    if [ -s /run/secrets/ca ]; then export PIP_CERT=/run/secrets/ca; fi \
 && python3 -m venv /opt/venv \
 && /opt/venv/bin/pip install "torch==${TORCH_VERSION}" numpy \
 && if [ "$TRAINER_CUDA" = ON ]; then \
      /opt/venv/bin/pip install "cuda-toolkit[nvcc,cccl,crt,nvvm,cudart,profiler,nvml,culibos]==${CUDA_TOOLKIT_VERSION}"; \
    fi
# The wheel's CUDA toolkit for CMake (FindCUDAToolkit, enable_language(CUDA)) and for
# scripts/gpu_check.sh run inside this stage; harmless in the CPU variant, which enables no CUDA.
ENV PATH=/opt/venv/bin:/opt/venv/lib/python3.11/site-packages/nvidia/cu13/bin:${PATH} \
    CUDACXX=/opt/venv/lib/python3.11/site-packages/nvidia/cu13/bin/nvcc \
    CUDAToolkit_ROOT=/opt/venv/lib/python3.11/site-packages/nvidia/cu13

# ------------------------------------------------------------------------------------------ build
FROM toolchain AS build
ARG TRAINER_CUDA
ARG TORCH_CUDA_ARCH_LIST="8.0;8.9;9.0"
# Any value empties the build caches first (scripts/docker_test.sh's cold build).
ARG CACHE_CLEAR=
WORKDIR /src
COPY . .
# One cache mount holds ccache and the build folder (one per variant): a warm build is Ninja's
# incremental build over the previous one, so the precompiled LibTorch header is not made again
# (a fresh .gch hashes differently, and ccache then misses every file that uses it); ccache covers
# a build folder that was lost. The binary is copied out of the mount into the layer.
# The wheel's toolkit: nvcc and headers under nvidia/cu13; nvcc links from lib64/ and CMake wants
# unversioned library names, which the wheel does not have.
# .git comes along so `trainer --version` and every benchmark JSON carry the revision.
RUN --mount=type=cache,target=/root/.cache \
    set -eux; \
    site=$(python -c 'import os, torch; print(os.path.dirname(os.path.dirname(torch.__file__)))'); \
    cuda_args=""; \
    if [ "$TRAINER_CUDA" = ON ]; then \
      cu=$site/nvidia/cu13; \
      [ -e "$cu/lib64" ] || ln -s lib "$cu/lib64"; \
      for l in "$cu"/lib/lib*.so.*; do \
        n=$(basename "$l" | sed 's/\.so\..*/.so/'); [ -e "$cu/lib/$n" ] || ln -s "$(basename "$l")" "$cu/lib/$n"; \
      done; \
      cuda_args="-DCUDAToolkit_ROOT=$cu -DCMAKE_CUDA_COMPILER=$cu/bin/nvcc -DTORCH_CUDA_ARCH_LIST=${TORCH_CUDA_ARCH_LIST}"; \
    fi; \
    git config --global --add safe.directory /src; \
    export CCACHE_DIR=/root/.cache/ccache CCACHE_BASEDIR=/src; \
    b=/root/.cache/build-cuda-${TRAINER_CUDA}; \
    if [ -n "$CACHE_CLEAR" ]; then ccache -C; rm -rf "$b"; fi; \
    cmake -S . -B "$b" -G Ninja -DCMAKE_BUILD_TYPE=Release -DTRAINER_CUDA=${TRAINER_CUDA} \
      -DTRAINER_BUILD_TESTS=OFF -DTRAINER_WERROR=OFF \
      -DCMAKE_PREFIX_PATH="$(python -c 'import torch; print(torch.utils.cmake_prefix_path)')" \
      $cuda_args; \
    cmake --build "$b" --target trainer; \
    ccache -s | head -5; \
    mkdir -p build/app && cp "$b/app/trainer" build/app/trainer; \
    build/app/trainer --version

# Stage what the runtime needs under /stage: the binary and configs; under /stage/site the Python
# package's files at their places (CUDA: the whole package less compilers and headers; CPU: only the
# libraries the binary loads from it, libtorch_cpu, libc10 and the two nvidia/ ones), and in
# /stage/lib every other shared library the binary loads, except the C/C++ runtime of the base.
# CUDA: the binary's own CUDA libraries (libcudart, ...) get a link in /stage/lib (on
# LD_LIBRARY_PATH) to their one copy in site/: the binary's RPATH names the build's venv.
RUN set -eux; \
    site=$(python -c 'import os, torch; print(os.path.dirname(os.path.dirname(torch.__file__)))'); \
    mkdir -p /stage/bin /stage/lib /stage/site; \
    cp build/app/trainer /stage/bin/; \
    cp -a configs /stage/configs; \
    if [ "$TRAINER_CUDA" = ON ]; then \
      cp -a "$site"/. /stage/site/; \
      rm -rf /stage/site/nvidia/cu13/bin /stage/site/nvidia/cu13/nvvm /stage/site/nvidia/cu13/include \
             /stage/site/torch/include /stage/site/triton /stage/site/pip /stage/site/pip-*; \
      ldd build/app/trainer | awk '$2 == "=>" && $3 ~ /^\// {print $3}' | xargs -r realpath -s -m \
        | grep "^$site/" | while read -r f; do \
            ln -sf "../site/${f#"$site"/}" "/stage/lib/$(basename "$f")"; \
          done; \
    else \
      ldd build/app/trainer | awk '$2 == "=>" && $3 ~ /^\// {print $3}' | xargs -r realpath -s -m \
        | grep "^$site/" | while read -r f; do \
            rel=${f#"$site"/}; mkdir -p "/stage/site/$(dirname "$rel")"; cp -L "$f" "/stage/site/$rel"; \
          done; \
    fi; \
    ldd build/app/trainer | awk '$2 == "=>" && $3 ~ /^\// {print $3}' \
      | grep -v "^$site/" \
      | grep -vE '/(libc|libm|libmvec|libdl|librt|libpthread|libgcc_s|libstdc\+\+|ld-linux-x86-64)\.so' \
      | xargs -r cp -L -t /stage/lib/; \
    du -sh /stage/*

# ---------------------------------------------------------------------------------------- runtime
FROM ${BASE} AS runtime
ARG TRAINER_CUDA
ARG TOOLCHAIN_EPOCH=0
# Python for torchrun (CUDA image): the base's own, matching the venv the wheel was installed in.
RUN echo "runtime epoch ${TOOLCHAIN_EPOCH}"; \
    if [ "$TRAINER_CUDA" = ON ]; then \
      apt-get update && apt-get install -y --no-install-recommends python3 \
      && rm -rf /var/lib/apt/lists/*; \
    fi
COPY --from=build /stage/ /opt/trainer/
ENV PATH=/opt/trainer/bin:${PATH} \
    LD_LIBRARY_PATH=/opt/trainer/lib:/opt/trainer/site/torch/lib \
    PYTHONPATH=/opt/trainer/site \
    NVIDIA_VISIBLE_DEVICES=all \
    NVIDIA_DRIVER_CAPABILITIES=compute,utility \
    COCO_ROOT=/data/coco
WORKDIR /opt/trainer
ENTRYPOINT ["trainer"]
CMD ["--help"]

# ------------------------------------------------------------------------------------------ smoke
FROM runtime AS smoke
ARG TRAINER_CUDA
WORKDIR /tmp/smoke
RUN trainer --version && trainer info model=yolo26n
RUN trainer synth data --train 8 --val 4 --size 96 --max-objects 3 --seed 0 \
 && trainer fit data=data/synthetic.yaml model=yolo26t imgsz=96 batch=4 epochs=1 workers=1 \
      device=cpu plots=false project=runs name=smoke \
 && trainer val weights=runs/smoke/weights/last.pt data=data/synthetic.yaml imgsz=96 batch=4 \
      device=cpu project=runs name=val \
 && trainer predict weights=runs/smoke/weights/last.pt source=data/images/val imgsz=96 \
      device=cpu project=runs name=predict \
 && ls runs/smoke/weights runs/predict
RUN if [ "$TRAINER_CUDA" = ON ]; then python3 -m torch.distributed.run --help >/dev/null; fi
# Every library resolves inside the image; only the driver's may be missing (mounted at run time).
RUN missing=$(ldd /opt/trainer/bin/trainer /opt/trainer/site/torch/lib/*.so* 2>/dev/null \
      | grep "not found" | grep -vE 'libcuda\.so\.1|libnvidia-ml\.so\.1' | sort -u); \
    [ -z "$missing" ] || { echo "missing in the image: $missing"; exit 1; }; \
    echo "ldd: every library found (the driver's aside)"
