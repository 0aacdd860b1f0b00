#!/usr/bin/env bash
# One-script check on a GPU machine: builds trainer with CUDA against that machine's Python torch,
# runs the CUDA smoke tests (tests/cuda: GPU against CPU, and the host syncs of a training step),
# `trainer bench interval` on the L4 protocol config (yolo26n, batch 4, 640, BF16) and on the CPU
# short-fit config, `trainer bench precision` (BF16 against fp32 under CUDA autocast), `trainer bench
# data` (the loader at 1, 2, 8 and 16 workers, RAM cache and none, on coco128), a short
# `trainer bench fit` and one ABBA of the optimizer schedules, on a
# machine with 2+ GPUs a data-parallel step (NCCL: torchrun bench interval, a device=0,1 fit, an
# elastic restart after a killed rank), and
# writes JSON results to an output folder.
#
# Why one script: GPU time is scarce (15 device minutes a session, a machine start and the transfers
# included, and no second try), and the machine may have only the CUDA toolkit, CMake, Ninja, a
# C++ compiler and Python's torch, with no package registry. The other dependencies then come from
# the prepared bundle (scripts/make_gpu_bundle.sh). The whole run, preflight, unpack and build
# included, fits one budget (480 s by default): the steps run in one ranked list, most valuable
# first (CUDA smoke, the L4 interval with its breakdown, bench precision, the CUDA-graph ABBA, one
# short bench fit, the 2-GPU step where 2+ GPUs exist), each under `timeout` with a cap that is also cut to what is left,
# and the rest (the CPU-config interval, the loader, the ABBA) only with the time left. Every step's
# output is copied to the output folder as soon as it ends, and gpu_check.json is rewritten then,
# so a run stopped by a signal (TERM/INT are trapped) or by the device tool keeps what it measured.
# On the device tool: timeout_s=540 with the default budget (a minute left for the transfers).
# A missing dependency stops the script with its name and how the Dockerfile provides it. With no
# GPU visible the same steps run on CPU with tiny settings.
#
# Usage: scripts/gpu_check.sh [--bundle DIR|TARBALL] [--out DIR]
# Environment (all optional):
#   GPU_CHECK_BUNDLE     bundle folder or .tar.gz (same as --bundle); without one, system packages
#   GPU_CHECK_OUT        output folder (same as --out); default $OUT, else build-gpu/gpu-check
#   GPU_CHECK_ALLOW_CPU  1: a CPU-only run is a pass (otherwise it exits 3 after running everything)
#   GPU_CHECK_BUILD_DIR  default build-gpu;  GPU_CHECK_JOBS  default nproc
#   GPU_CHECK_BUDGET_S   default 480 (everything, the build included);  GPU_CHECK_STEPS  default
#                        configure,build,smoke,bench
#                        (add "test" for the whole ctest suite, minus the smoke tests, last)
#   GPU_CHECK_TARGETS    build only these targets (space-separated); default "trainer
#                        test_cuda_smoke", everything when the test step is asked for
#   GPU_CHECK_CUDA_BUILD 1: build with CUDA even without a GPU (compile check only)
#   GPU_CHECK_PYTHON     the python whose torch to build against (default: the first that has torch)
#   GPU_CHECK_CMAKE_ARGS extra CMake arguments (word-split)
#   GPU_CHECK_BENCH_CONFIG  bench config (default configs/bench/l4_short_fit.yaml)
#   GPU_CHECK_FAKE_SLOW  rehearsals only: NAME=SECONDS,... delays those steps (scripts/gpu_check_test.sh)
#   GPU_CHECK_DATA       dataset yaml for the benches (default: $COCO_ROOT, else the bundle's or the
#                        shared coco128)
# Output (at most 8 files, for the device tool): gpu_check.json (summary, with the smoke tests'
# numbers and sync counts), gpu_check.log (every step's log), cuda_smoke.log, ctest.log (test step
# only), bench_interval.json, bench_interval_cpu_config.json, bench_fit.json, bench_abba.json.
# Exit status: 0 pass, 1 a step failed, 2 a dependency is missing, 3 no GPU (CPU fallback only).
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
T0=$SECONDS

bundle=${GPU_CHECK_BUNDLE:-}
out=${GPU_CHECK_OUT:-${OUT:-}}
while [ $# -gt 0 ]; do
  case $1 in
    --bundle) bundle=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    -h|--help) sed -n '2,/^set -uo/p' "$0" | sed '$d'; exit 0 ;;
    *) echo "gpu_check: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
build=${GPU_CHECK_BUILD_DIR:-$ROOT/build-gpu}
case $build in /*) ;; *) build=$ROOT/$build ;; esac
out=${out:-$build/gpu-check}
jobs=${GPU_CHECK_JOBS:-$(nproc)}
budget=${GPU_CHECK_BUDGET_S:-480}
steps=,${GPU_CHECK_STEPS:-configure,build,smoke,bench},
work=$build/gpu-check-work
rm -rf "$work/logs"  # a previous run's logs must not pass for this run's
mkdir -p "$out" "$work/logs" || exit 2
: > "$work/steps.tsv"
: > "$work/notes.txt"

say() { printf '[gpu_check %3ds] %s\n' $((SECONDS - T0)) "$*" | tee -a "$work/logs/gpu_check.log" >&2; }
note() { say "$*"; echo "$*" >> "$work/notes.txt"; }
remaining() { echo $((budget - (SECONDS - T0))); }
scaled() { echo $(($1 * budget / 480)); }  # a step's cap, sized for the default 480 s budget
wants() { case $steps in *,$1,*) return 0 ;; esac; return 1; }

# Loud stop for a missing dependency: what is missing and how the Dockerfile provides it.
missing() {
  say "MISSING DEPENDENCY: $1"
  say "  the Dockerfile provides it: $2"
  echo "missing	$1	$2" >> "$work/steps.tsv"
  finish 2
}

# step NAME CAP_SECONDS COMMAND...: runs COMMAND time-boxed (the cap, or what is left of the budget),
# logs to logs/NAME.log, records status and seconds, then publishes (the output folder is current
# after every step); returns the command's status. The command runs in the background and is
# waited for, so a TERM/INT reaches the trap at once (bash defers traps during a foreground child).
step_pid=
step() {
  local name=$1 cap=$2 left rc start status
  shift 2
  left=$(remaining)
  [ "$cap" -gt "$left" ] && cap=$left
  if [ "$cap" -lt 5 ]; then
    say "$name: SKIPPED, the ${budget}s budget is spent"
    printf '%s\tskipped\t0\t0\n' "$name" >> "$work/steps.tsv"
    publish
    return 124
  fi
  say "$name: running (limit ${cap}s): $*"
  start=$SECONDS
  # Rehearsals only: GPU_CHECK_FAKE_SLOW="NAME=SECONDS,..." delays a step's command (the budget test).
  local delay
  delay=$(tr ',' '\n' <<< "${GPU_CHECK_FAKE_SLOW:-}" | sed -n "s/^$name=\([0-9]*\)$/\1/p" | head -n1)
  [ -n "$delay" ] && set -- bash -c 'sleep "$0"; exec "$@"' "$delay" "$@"
  timeout --kill-after=10 "$cap" "$@" > "$work/logs/$name.log" 2>&1 &
  step_pid=$!
  wait "$step_pid"
  rc=$?
  step_pid=
  case $rc in
    0) status=ok ;;
    124|137) status=timeout ;;
    *) status=failed ;;
  esac
  printf '%s\t%s\t%s\t%s\n' "$name" "$status" "$rc" $((SECONDS - start)) >> "$work/steps.tsv"
  say "$name: $status (rc $rc, $((SECONDS - start))s)"
  if [ $rc -ne 0 ]; then
    tail -n 40 "$work/logs/$name.log" | sed 's/^/    /' >&2
  fi
  publish
  return $rc
}

# A TERM or INT (the device tool's limit, a Ctrl-C): stop the running step, record it, publish what
# was measured and exit 1.
on_signal() {
  trap - TERM INT
  say "interrupted by a signal: stopping and keeping what was measured"
  echo "interrupted by a signal after $((SECONDS - T0))s" >> "$work/notes.txt"
  if [ -n "$step_pid" ]; then
    kill -TERM "$step_pid" 2>/dev/null
    wait "$step_pid" 2>/dev/null
  fi
  finish 1
}
trap on_signal TERM INT

# Writes gpu_check.json and copies the logs to the output folder, then exits.
finish() {
  local code=$1
  [ "$code" = 0 ] && grep -qP '\t(failed|timeout|skipped)\t' "$work/steps.tsv" && code=1
  [ "$code" = 0 ] && [ "${mode:-}" = cpu ] && [ "${GPU_CHECK_ALLOW_CPU:-0}" != 1 ] && code=3
  publish "$code"
  say "results in $out (exit $code)"
  exit "$code"
}

# Writes gpu_check.json (exit_code null until the end) and copies the logs to the output folder;
# called after every step, so the folder always holds what has been measured.
publish() {
  local code=${1:-null}
  {
    for f in "$work"/logs/*.log; do
      [ "$(basename "$f")" = gpu_check.log ] && continue
      echo "===== $(basename "$f")"
      if [ "$(wc -l < "$f")" -gt 300 ]; then echo "(last 300 lines)"; tail -n 300 "$f"; else cat "$f"; fi
    done
  } > "$work/steps_combined.log"
  cat "$work/logs/gpu_check.log" "$work/steps_combined.log" > "$out/gpu_check.log" 2>/dev/null
  for l in ctest cuda_smoke; do
    [ -f "$work/logs/$l.log" ] && cp "$work/logs/$l.log" "$out/$l.log"
  done
  timeout 30 "${PY:-python3}" - "$work" "$out" "$code" "${mode:-unknown}" "$((SECONDS - T0))" "$budget" <<'EOF' || true
import json, os, re, subprocess, sys
work, out, code, mode, seconds, budget = sys.argv[1:7]
def read(p):
    try:
        return open(p).read()
    except OSError:
        return ""
steps = []
for line in read(os.path.join(work, "steps.tsv")).splitlines():
    f = line.split("\t")
    if f[0] == "missing":
        steps.append({"name": "dependency", "status": "missing", "what": f[1], "dockerfile": f[2]})
    else:
        steps.append({"name": f[0], "status": f[1], "rc": int(f[2]), "seconds": int(f[3])})
summary = {"exit_code": None if code == "null" else int(code), "finished": code != "null", "mode": mode, "seconds": int(seconds), "budget_s": int(budget),
           "steps": steps, "notes": read(os.path.join(work, "notes.txt")).splitlines()}
env = {}
for line in read(os.path.join(work, "env.txt")).splitlines():
    if "=" in line:
        k, v = line.split("=", 1)
        env[k] = v
summary["environment"] = env
paths = {}
for line in read(os.path.join(work, "cmake_paths.txt")).splitlines():
    if "=" in line:
        k, v = line.split("=", 1)
        paths[k] = v
summary["cmake_paths"] = paths
m = re.search(r"(\d+)% tests passed, (\d+) tests failed out of (\d+)", read(os.path.join(work, "logs", "ctest.log")))
if m:
    summary["ctest"] = {"passed_percent": int(m.group(1)), "failed": int(m.group(2)), "total": int(m.group(3))}
# The CUDA smoke tests: doctest's count line, their measured numbers, skips, and the sync counts.
smoke = read(os.path.join(work, "logs", "cuda_smoke.log"))
if smoke:
    s = {}
    m = re.search(r"test cases:\s*(\d+)\s*\|\s*(\d+) passed\s*\|\s*(\d+) failed", smoke)
    if m:
        s["cases"], s["passed"], s["failed"] = int(m.group(1)), int(m.group(2)), int(m.group(3))
    s["skipped"] = sorted(set(re.findall(r"CUDA SMOKE SKIPPED: (.*)", smoke)))
    s["measured"] = re.findall(r"(?:loss CPU|3 steps:|detections image|sync-debug count:).*", smoke)
    try:
        s["syncs"] = json.load(open(os.path.join(work, "syncs.json")))
    except (OSError, ValueError):
        pass
    summary["cuda_smoke"] = s
# cuda_graph against eager: 50-step loss trajectories and peak memory (tests/cuda).
try:
    summary["cuda_graph_trajectory"] = json.load(open(os.path.join(work, "cuda_graph_trajectory.json")))
except (OSError, ValueError):
    pass
# The bench JSON schemas belong to `trainer bench`; keep them whole and lift the headline numbers.
def headline(node, prefix="", acc=None):
    acc = {} if acc is None else acc
    if isinstance(node, dict):
        for k, v in node.items():
            headline(v, f"{prefix}{k}.", acc)
    elif re.search(r"median|peak|verdict|reduction|range|min|max|mean", prefix, re.I):
        if not isinstance(node, list) or (len(node) <= 10 and not any(isinstance(x, (dict, list)) for x in node)):
            acc[prefix[:-1]] = node
    return acc
for b in ("bench_interval", "bench_interval_cpu_config", "bench_fit", "bench_abba",
          "bench_interval_ddp2", "bench_abba_cuda_graph"):
    p = os.path.join(work if b in ("bench_interval_ddp2", "bench_abba_cuda_graph") else out, b + ".json")
    if os.path.exists(p):
        try:
            summary[b] = headline(json.load(open(p)))
        except ValueError as e:
            summary[b] = {"error": f"{p} is not JSON: {e}"}
p = os.path.join(work, "bench_precision.json")
if os.path.exists(p):
    try:
        j = json.load(open(p))
        keep = ("device", "auto_decision", "step_ms", "head_box_error", "head_class_error", "gradient_error",
                "gradient_cosine", "floor_gradient_cosine", "gradients_fp32", "running_stats_fp32",
                "loss_low_precision_ops", "loss")
        summary["bench_precision"] = {k: j.get(k) for k in keep}
        summary["bench_precision"]["bf16_forward_ops"] = sorted(
            k for k, v in j.get("forward_ops", {}).items() if v.get("bf16_calls", 0) > 0)
    except ValueError as e:
        summary["bench_precision"] = {"error": f"{p} is not JSON: {e}"}
p = os.path.join(work, "bench_data.json")
if os.path.exists(p):
    try:
        summary["bench_data"] = [
            {k: r.get(k) for k in ("cache", "store", "workers", "images_per_s_median", "peak_rss_bytes")}
            for r in json.load(open(p)).get("runs", [])]
    except ValueError as e:
        summary["bench_data"] = {"error": f"{p} is not JSON: {e}"}
tmp = os.path.join(out, ".gpu_check.json.tmp")
json.dump(summary, open(tmp, "w"), indent=2)
os.replace(tmp, os.path.join(out, "gpu_check.json"))
EOF
}

# ---------------------------------------------------------------------------------- preflight ---
command -v timeout >/dev/null || { echo "gpu_check: 'timeout' (coreutils) is missing" >&2; exit 2; }
for t in cmake ninja; do
  command -v $t >/dev/null || missing "$t" "the build stage installs it with apt-get (cmake, ninja-build)"
done
CXX=${CXX:-$(command -v c++ || command -v g++ || true)}
[ -n "$CXX" ] || missing "a C++17 compiler (c++/g++)" "the CUDA devel base image plus apt-get build-essential"
export CXX

PY=
torch_info=
for cand in ${GPU_CHECK_PYTHON:-} "$HOME/.cache/trainer/venv/bin/python" python3 python; do
  command -v "$cand" >/dev/null 2>&1 || continue
  torch_info=$(timeout 60 "$cand" -c '
import os, torch
print(torch.utils.cmake_prefix_path, os.path.dirname(os.path.dirname(torch.__file__)), torch.__version__,
      torch.version.cuda or "none", torch.cuda.device_count() if torch.cuda.is_available() else 0)' 2>/dev/null) &&
    { PY=$(command -v "$cand"); break; }
done
[ -n "$PY" ] || missing "Python with torch (LibTorch comes from torch.utils.cmake_prefix_path)" \
                       "pip install torch==2.11.0 into /opt/venv (CUDA 13.0 wheel)"
read -r torch_cmake torch_site torch_version torch_cuda torch_gpus <<< "$torch_info"
gpu_name=$(timeout 20 nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null | head -n1)

mode=gpu
if [ "${torch_gpus:-0}" = 0 ] || [ -z "$gpu_name" ]; then
  mode=cpu
  if [ "${GPU_CHECK_ALLOW_CPU:-0}" = 1 ]; then
    note "no GPU visible (nvidia-smi: '${gpu_name:-none}', torch GPUs: ${torch_gpus:-0}): CPU fallback with tiny settings"
  else
    note "WARNING: NO GPU VISIBLE (nvidia-smi: '${gpu_name:-none}', torch GPUs: ${torch_gpus:-0}). Running the CPU fallback; this run is NOT a GPU check and exits 3 (set GPU_CHECK_ALLOW_CPU=1 to accept it)"
  fi
fi
cuda=OFF
if [ $mode = gpu ] || [ "${GPU_CHECK_CUDA_BUILD:-0}" = 1 ]; then
  cuda=ON
  [ "$torch_cuda" != none ] || missing "a CUDA build of torch (found $torch_version)" "pip install torch==2.11.0 (the PyPI wheel is CUDA 13.0)"
  NVCC=$(command -v nvcc || ls /usr/local/cuda/bin/nvcc 2>/dev/null || true)
  [ -n "$NVCC" ] || missing "nvcc (CUDA toolkit 13.0, needed at configure time by find_package(Torch))" \
                            "the base image nvidia/cuda:13.0.0-devel-ubuntu24.04"
fi

# -------------------------------------------------------------------------------------- bundle ---
cmake_args=(-G Ninja "-DTRAINER_CUDA=$cuda" -DTRAINER_WERROR=OFF -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$torch_cmake")
# shellcheck disable=SC2206
cmake_args+=(${GPU_CHECK_CMAKE_ARGS:-})
bundle_prefix=
if [ -n "$bundle" ]; then
  if [ -f "$bundle" ]; then
    say "unpacking bundle $bundle"
    rm -rf "$work/bundle" && mkdir -p "$work/bundle" && timeout 120 tar -C "$work/bundle" -xzf "$bundle" ||
      missing "a readable bundle tarball ($bundle)" "scripts/make_gpu_bundle.sh makes it"
    bundle=$work/bundle/trainer-gpu-bundle
  fi
  [ -f "$bundle/bundle.env" ] || missing "the bundle at '$bundle' (no bundle.env)" "scripts/make_gpu_bundle.sh makes it"
  bundle=$(cd "$bundle" && pwd)
  # shellcheck disable=SC1091
  source "$bundle/bundle.env"
  bundle_prefix=$bundle/prefix
  glibc=$(getconf GNU_LIBC_VERSION 2>/dev/null | awk '{print $2}')
  if [ -n "$glibc" ] && [ "$(printf '%s\n%s\n' "$TRAINER_BUNDLE_GLIBC_MIN" "$glibc" | sort -V | head -n1)" != "$TRAINER_BUNDLE_GLIBC_MIN" ]; then
    missing "glibc >= $TRAINER_BUNDLE_GLIBC_MIN for the bundle (this machine has $glibc)" "the Ubuntu 24.04 base (glibc 2.39)"
  fi
  libstdcxx=$("$CXX" -print-file-name=libstdc++.so.6)
  grep -q "GLIBCXX_$TRAINER_BUNDLE_GLIBCXX_MIN" "$(realpath "$libstdcxx")" 2>/dev/null ||
    missing "libstdc++ with GLIBCXX_$TRAINER_BUNDLE_GLIBCXX_MIN for the bundle" "the Ubuntu 24.04 base (GCC 13)"
  cuda_roots=
  if [ $cuda = ON ]; then
    cuda_home=$(cd "$(dirname "$NVCC")/.." && pwd)
    cuda_roots=";$cuda_home;$(realpath "$cuda_home")"
  fi
  # Every find_package/find_library/find_path is re-rooted into the bundle; only LibTorch (and the
  # CUDA toolkit) are allowed from outside, so nothing is silently taken from the system.
  cmake_args+=(-DTRAINER_IMAGE_CODECS="$TRAINER_BUNDLE_CODECS"
               -DCMAKE_LIBRARY_ARCHITECTURE="$TRAINER_BUNDLE_TRIPLET"
               -DCMAKE_FIND_ROOT_PATH="$bundle_prefix;$torch_site$cuda_roots"
               -DCMAKE_FIND_ROOT_PATH_MODE_PACKAGE=ONLY -DCMAKE_FIND_ROOT_PATH_MODE_LIBRARY=ONLY
               -DCMAKE_FIND_ROOT_PATH_MODE_INCLUDE=ONLY -DCMAKE_FIND_ROOT_PATH_MODE_PROGRAM=NEVER)
  export LD_LIBRARY_PATH=$bundle_prefix/usr/lib/$TRAINER_BUNDLE_TRIPLET${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  say "bundle: $bundle ($(sed -n 2p "$bundle/MANIFEST.txt"); codecs $TRAINER_BUNDLE_CODECS)"
fi

# ---------------------------------------------------------------------------------------- data ---
export TRAINER_SHARED_DATA=${TRAINER_SHARED_DATA:-$(cd "$ROOT/.." && pwd)/shared/data}
[ -n "$bundle_prefix" ] && [ -d "$bundle/data/coco128" ] && [ ! -d "$TRAINER_SHARED_DATA/coco128" ] &&
  export TRAINER_SHARED_DATA=$bundle/data
coco_root=${COCO_ROOT:-/data/coco}
data_override=()
if [ -n "${GPU_CHECK_DATA:-}" ]; then
  data_override=(data="$GPU_CHECK_DATA")
elif [ $mode = gpu ] && [ -d "$coco_root/images/val2017" ]; then
  data_override=()  # the bench config's own COCO val2017 subset
elif [ -d "$TRAINER_SHARED_DATA/coco128" ]; then
  data_override=(data="$ROOT/configs/data/coco128.yaml")
else
  [ $mode = gpu ] && note "no dataset: neither $coco_root/images/val2017 nor $TRAINER_SHARED_DATA/coco128 (make the bundle with --with-data)"
fi

{
  echo "mode=$mode"
  echo "gpu=${gpu_name:-none}"
  echo "torch=$torch_version (CUDA $torch_cuda) at $torch_site"
  echo "python=$PY"
  echo "nvcc=$([ -n "${NVCC:-}" ] && "$NVCC" --version | tail -n1)"
  echo "compiler=$("$CXX" --version | head -n1)"
  echo "cmake=$(cmake --version | head -n1)"
  echo "cpu=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //') x $(nproc)"
  echo "git=$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null)$(git -C "$ROOT" diff --quiet HEAD 2>/dev/null || echo '-dirty')"
  echo "bundle=${bundle:-none}"
  echo "shared_data=$TRAINER_SHARED_DATA"
  echo "bench_data=${data_override[*]:-config default}"
} > "$work/env.txt"
sed 's/^/  /' "$work/env.txt" >&2

# ------------------------------------------------------------------------------- build and test ---
if wants configure; then
  rm -f "$build/CMakeCache.txt"
  if ! step configure "$(scaled 90)" cmake -S "$ROOT" -B "$build" "${cmake_args[@]}"; then
    # Name the package CMake could not find, and where it comes from.
    pkg=$(grep -oE 'by "[A-Za-z0-9_-]+"|Could NOT find [A-Za-z0-9_]+|needs TurboJPEG and libpng' "$work/logs/configure.log" | head -n1)
    [ -n "$pkg" ] && missing "$pkg (see logs/configure.log)" \
      "the build stage's apt-get line (libopencv-dev libyaml-cpp-dev libspdlog-dev libcli11-dev doctest-dev nlohmann-json3-dev libturbojpeg0-dev libpng-dev); without a registry: --bundle"
    finish 1
  fi
  # Which paths CMake used for each dependency (in a bundle run all but LibTorch/CUDA are inside it).
  grep -E '^(OpenCV|yaml-cpp|spdlog|fmt|CLI11|nlohmann_json|doctest|PNG|ZLIB|TRAINER_TURBOJPEG|TRAINER_TORCH|TRAINER_C10|Torch|Caffe2|CUDAToolkit)_[A-Za-z_]*(DIR|LIB|LIBRARY|LIBRARY_RELEASE|INCLUDE_DIR)(:[A-Z]+)?=' \
      "$build/CMakeCache.txt" | sed 's/:[A-Z]*=/=/' > "$work/cmake_paths.txt"
  say "dependency paths from CMakeCache.txt:"
  sed 's/^/    /' "$work/cmake_paths.txt" | tee -a "$work/logs/gpu_check.log" >&2
  if [ -n "$bundle_prefix" ]; then
    outside=$(grep -vE "^(Torch|Caffe2|CUDAToolkit|TRAINER_TORCH|TRAINER_C10)_" "$work/cmake_paths.txt" | grep -v "=$bundle_prefix" || true)
    [ -z "$outside" ] || { note "found outside the bundle: $outside"; finish 1; }
  fi
fi
if wants build; then
  target_args=()
  default_targets="trainer test_cuda_smoke"
  wants test && default_targets=
  for t in ${GPU_CHECK_TARGETS-$default_targets}; do target_args+=(--target "$t"); done
  step build "$(scaled 240)" cmake --build "$build" -j "$jobs" "${target_args[@]}" || finish 1
  if [ -n "$bundle_prefix" ]; then
    # Provenance: headers of the bundled libraries read from the system, and libraries loaded from
    # outside the bundle/LibTorch/the base system. Both should be empty.
    sys_headers=$(ninja -C "$build" -t deps 2>/dev/null | grep -E '^ +/usr/(local/)?include/(opencv4|spdlog|fmt|yaml-cpp|nlohmann|CLI|doctest|libpng|png|turbojpeg|zlib|zconf)' | sort -u | head -n 5)
    foreign=$(ldd "$build/app/trainer" 2>/dev/null | awk '$3 ~ /^\// {print $3}' |
              grep -vE "^($bundle_prefix|$torch_site|/usr/local/cuda)" |
              grep -vE '/(libc|libm|libmvec|libpthread|libdl|librt|libutil|libstdc\+\+|libgcc_s|ld-linux-x86-64|libcuda|libnvidia-[a-z]*)\.so' | head -n 5)
    note "provenance: system headers of bundled libraries used: ${sys_headers:-none}; libraries from outside the bundle: ${foreign:-none}"
  fi
fi
# --------------------------------------------------------------------------- CUDA smoke tests ---
# tests/cuda against the CPU (tolerances in the test file), the peak-memory reset, device=1 where
# two GPUs exist, checkpoints across devices, and the host syncs of one training step (sync-debug
# count, written to syncs.json). On a GPU machine a skipped case is a failure (TRAINER_REQUIRE_CUDA).
if wants smoke; then
  smoke_bin=$build/tests/cuda/test_cuda_smoke
  rm -f "$work/syncs.json" "$work/cuda_graph_trajectory.json"
  if [ -x "$smoke_bin" ]; then
    step cuda_smoke "$(scaled 75)" env TRAINER_REQUIRE_CUDA="$([ $mode = gpu ] && echo 1 || echo 0)" \
      TRAINER_SYNC_REPORT="$work/syncs.json" \
      TRAINER_GRAPH_REPORT="$work/cuda_graph_trajectory.json" "$smoke_bin"
    [ $mode = cpu ] && grep -q 'CUDA SMOKE SKIPPED' "$work/logs/cuda_smoke.log" &&
      note "CUDA smoke tests skipped (no GPU): they ran as on a CPU CI machine"
  else
    note "no $smoke_bin (build it: GPU_CHECK_TARGETS must include test_cuda_smoke)"
    printf 'cuda_smoke\tfailed\t127\t0\n' >> "$work/steps.tsv"
  fi
fi

# -------------------------------------------------------------------------------------- benches ---
trainer=$build/app/trainer
if wants bench; then
  [ -x "$trainer" ] || { note "no $trainer to benchmark"; finish 1; }
  count_flags=()
  if [ $mode = cpu ]; then
    count_flags=(--warmup 3 --measure 6)
  fi
  config=${GPU_CHECK_BENCH_CONFIG:-$ROOT/configs/bench/l4_short_fit.yaml}
  cpu_config=$ROOT/configs/bench/cpu_short_fit.yaml
  for f in "$config" "$cpu_config"; do
    [ -f "$f" ] || { note "MISSING FILE: $f"; printf 'bench\tfailed\t2\t0\n' >> "$work/steps.tsv"; finish 1; }
  done
  if [ $mode = gpu ]; then
    overrides=(device=0 model=yolo26n batch=4 imgsz=640 precision=bf16 "${data_override[@]}")
    cpu_overrides=(device=0)  # the CPU short fit's own settings, on the GPU
  else
    overrides=(device=cpu model=yolo26n batch=2 imgsz=160 precision=fp32 workers=1 "${data_override[@]}")
    cpu_overrides=(device=cpu batch=2 imgsz=160 workers=1)
  fi
  run_bench() {  # NAME CAP ARGS...: runs trainer bench, writing NAME.json in the output folder
    local name=$1 cap=$2 json=$out/$1.json
    shift 2
    rm -f "$json"
    step "$name" "$cap" "$trainer" bench "$@" --json "$json"
  }
  # The ranked list, most valuable first; each cap is also cut to what is left of the budget.
  # 1. The L4 protocol's complete interval with its stage breakdown (the JSON is written after the
  #    timed intervals already, marked partial, in case the breakdown run is cut).
  interval_start=$SECONDS
  run_bench bench_interval "$(scaled 75)" interval "$config" "${overrides[@]}" "${count_flags[@]}"
  interval_s=$((SECONDS - interval_start))
  # 2. BF16 against fp32 on one batch (which ops CUDA autocast lowers, per-layer errors, the auto
  #    decision); the JSON stays in the work folder, its headline goes to gpu_check.json.
  rm -f "$work/bench_precision.json"
  step bench_precision "$(scaled 30)" "$trainer" bench precision "$config" "${overrides[@]}" \
    --json "$work/bench_precision.json"
  # 3. CUDA graphs: the static step eager against replayed as graphs (issue 39), an ABBA of the
  #    complete interval with each arm's peak memory, at the L4 protocol's settings. The JSON stays
  #    in the work folder (the output keeps at most 8 files); its headline lands in gpu_check.json.
  if [ $mode = gpu ]; then
    rm -f "$work/bench_abba_cuda_graph.json"
    step bench_abba_cuda_graph "$(scaled 75)" "$trainer" bench abba "$config" "${overrides[@]}" \
      static_shapes=true --baseline cuda_graph=false --candidate cuda_graph=true --pairs 2 \
      --json "$work/bench_abba_cuda_graph.json"
  fi
  # 4. A short fit (one epoch, 2 validation batches) of each optimizer schedule, timed start to
  #    exit (each finished arm is written at once).
  fit_overrides=()
  # The CPU fallback fits coco8 (4 images): coco128 at 2 images a step outlasts the step's cap.
  [ $mode = cpu ] && [ -d "$TRAINER_SHARED_DATA/coco8" ] && fit_overrides=(data="$ROOT/configs/data/coco8.yaml")
  run_bench bench_fit "$(scaled 60)" fit "$config" "${overrides[@]}" "${fit_overrides[@]}" epochs=1 val_batches=2 \
    --baseline optimizer_impl=scalar --candidate optimizer_impl=padded --pairs 1 --warmup-arms 0
  # 5. Data-parallel on 2 GPUs (when the machine has 2+): NCCL under torchrun, each rank's complete
  #    interval at the global batch 8 (4 per GPU) with the gradient all-reduce overlapping
  #    backward, then trainer's own launcher (device=0,1) through a one-epoch fit. The interval
  #    JSON goes to the work folder (the output keeps at most 8 files); its headline numbers land
  #    in gpu_check.json.
  if [ $mode = gpu ] && [ "${torch_gpus:-0}" -ge 2 ]; then
    rm -f "$work/bench_interval_ddp2.json"
    step ddp2_interval "$(scaled 60)" "$PY" -m torch.distributed.run --nproc-per-node 2 --no-python \
      "$trainer" bench interval "$config" "${overrides[@]/device=0/device=}" batch=8 \
      --json "$work/bench_interval_ddp2.json"
    step ddp2_fit "$(scaled 75)" "$trainer" fit "$config" "${overrides[@]/device=0/device=0,1}" batch=8 \
      epochs=1 val_batches=2 project="$work/ddp2" name=fit exist_ok=true
    # An elastic restart on NCCL: rank 1 killed in epoch 2 under --max-restarts 1; the job must
    # resume itself ("restart 1: resuming ... from epoch 2" in logs/ddp2_elastic.log) and exit 0.
    step ddp2_elastic "$(scaled 75)" env TRAINER_TEST_HOOKS=1 TRAINER_FAULT_KILL=0:1:1:2 \
      "$PY" -m torch.distributed.run --nproc-per-node 2 --max-restarts 1 --no-python \
      "$trainer" fit "$config" "${overrides[@]/device=0/device=}" batch=8 epochs=2 val_batches=2 \
      project="$work/ddp2" name=elastic exist_ok=true
  elif [ $mode = gpu ]; then
    note "one GPU: the 2-GPU data-parallel step is skipped"
  fi
  # The rest, only with the time left (a step with under 5 s is recorded as skipped).
  # 6. The CPU short fit's settings on this device.
  run_bench bench_interval_cpu_config "$(scaled 45)" interval "$cpu_config" "${cpu_overrides[@]}" \
    --no-breakdown "${count_flags[@]}"
  # 7. The loader alone on coco128 at 640 (mosaic, batch 16): images/s per worker count and cache
  #    mode, per stage, with peak RSS; the many-core machine shows how it scales past 2 workers.
  if [ -d "$TRAINER_SHARED_DATA/coco128" ]; then
    rm -f "$work/bench_data.json"
    data_workers=$([ $mode = gpu ] && echo 1,2,8,16 || echo 1,2)
    step bench_data "$(scaled 45)" "$trainer" -q bench data --data "$ROOT/configs/data/coco128.yaml" \
      --imgsz 640 --batch 16 --epochs 2 --workers "$data_workers" --cache ram,none \
      --json "$work/bench_data.json"
  fi
  # 8. One ABBA of the optimizer schedules with what is left (pairs reduced to fit, and said so).
  pairs=${GPU_CHECK_ABBA_PAIRS:-$([ $mode = gpu ] && echo 5 || echo 1)}
  fit=$(( ($(remaining) - 15) / (2 * (interval_s > 1 ? interval_s : 1)) ))
  if [ "$fit" -lt "$pairs" ]; then
    [ "$fit" -lt 1 ] && fit=1
    note "ABBA pairs reduced from $pairs to $fit to fit the ${budget}s budget (one arm ~${interval_s}s)"
    pairs=$fit
  fi
  run_bench bench_abba "$(remaining)" abba "$config" "${overrides[@]}" "${count_flags[@]}" \
    --baseline optimizer_impl=scalar --candidate optimizer_impl=padded --pairs "$pairs"
fi

# ------------------------------------------------------------------- the whole suite (optional) ---
if wants test; then
  # Per-test limit: 120 s on a GPU machine; the CPU fallback runs the fit tests on a small CPU.
  step ctest "$(remaining)" ctest --test-dir "$build" -j "$jobs" --output-on-failure -E '^test_cuda_smoke' \
    --timeout "$([ $mode = gpu ] && echo 120 || echo 600)" --no-tests=error
fi
finish 0
