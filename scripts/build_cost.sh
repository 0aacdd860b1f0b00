#!/usr/bin/env bash
# What a cold build costs: configures and builds the given targets (default: trainer) from an empty
# folder with ccache off, and prints one JSON line: wall seconds; cpu_s, the user + system seconds of
# every compiler and linker process (measured by GNU time around each, so a busy machine does not
# inflate it); ninja_s, the step durations of .ninja_log summed (what a 2-core build waits for when
# nothing else runs; inflated on a busy machine); the step count and the ten most expensive steps.
# Issue 63 measures every build-speed change with it.
# Usage: scripts/build_cost.sh [--keep DIR] [--cmake-args "ARGS"] [targets...]
#   --keep DIR         build in DIR (must not exist) and leave it there; default a temporary folder
#   --cmake-args ARGS  extra configure arguments, e.g. "-DTRAINER_UNITY=OFF" or "-DTRAINER_CUDA=ON"
# Env: BUILD_COST_JOBS (default: every core).
set -euo pipefail
source "$(dirname "$0")/env.sh"

keep=""
cmake_args=""
while [ $# -gt 0 ]; do
  case "$1" in
    --keep) keep=$2; shift 2 ;;
    --cmake-args) cmake_args=$2; shift 2 ;;
    -h|--help) sed -n '2,9p' "$0"; exit 0 ;;
    *) break ;;
  esac
done
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(trainer)

if [ -n "$keep" ]; then
  [ ! -e "$keep" ] || { echo "build_cost: $keep exists; give a new folder" >&2; exit 2; }
  dir=$keep
else
  dir=$(mktemp -d -t trainer-build-cost-XXXXXX)
  trap 'rm -rf "$dir"' EXIT
fi
prefix=${TRAINER_TORCH_PREFIX:-$("$TRAINER_VENV/bin/python" -c 'import torch; print(torch.utils.cmake_prefix_path)' 2>/dev/null)} ||
  { echo "build_cost: no torch in $TRAINER_VENV (scripts/setup.sh)" >&2; exit 2; }
jobs=${BUILD_COST_JOBS:-$(nproc)}

[ -x /usr/bin/time ] || { echo "build_cost: needs GNU time (apt install time)" >&2; exit 2; }
launcher="/usr/bin/time;-f;%U %S %C;-a;-o;$dir/cpu.log"
# shellcheck disable=SC2086  # the extra configure arguments are words
cmake -S "$TRAINER_ROOT" -B "$dir" -G Ninja -DCMAKE_PREFIX_PATH="$prefix" -DTRAINER_USE_CCACHE=OFF \
      "-DCMAKE_CXX_COMPILER_LAUNCHER=$launcher" "-DCMAKE_CXX_LINKER_LAUNCHER=$launcher" \
      -DTRAINER_WERROR=ON $cmake_args >"$dir/configure.log" 2>&1 ||
  { tail -20 "$dir/configure.log" >&2; exit 1; }
start=$(date +%s.%N)
cmake --build "$dir" -j "$jobs" -- "${targets[@]}" >"$dir/build.log" 2>&1 ||
  { tail -40 "$dir/build.log" >&2; exit 1; }
end=$(date +%s.%N)

python3 - "$dir/.ninja_log" "$dir/cpu.log" "$start" "$end" "$jobs" "${targets[*]}" "$cmake_args" <<'PY'
import json, sys
log, cpu_log, start, end, jobs, targets, cmake_args = sys.argv[1:]
steps = {}
for line in open(log):
    if line.startswith("#"):
        continue
    begin_ms, end_ms, _mtime, output, command_hash = line.rstrip("\n").split("\t")
    # A step with several outputs (an object and its dependency file) has one line per output.
    key = (command_hash, begin_ms)
    steps.setdefault(key, (int(end_ms) - int(begin_ms), output))
durations = sorted(steps.values(), reverse=True)
ninja_s = sum(d for d, _ in durations) / 1000.0
cpu = 0.0
for line in open(cpu_log):
    fields = line.split(" ", 2)
    try:
        cpu += float(fields[0]) + float(fields[1])
    except (ValueError, IndexError):
        pass  # GNU time's "Command exited with non-zero status" lines

print(json.dumps({
    "targets": targets.split(), "cmake_args": cmake_args, "jobs": int(jobs),
    "wall_s": round(float(end) - float(start), 1), "cpu_s": round(cpu, 1), "ninja_s": round(ninja_s, 1), "steps": len(durations),
    "median_step_s": round(durations[len(durations) // 2][0] / 1000.0, 2) if durations else 0,
    "top10": [{"s": round(d / 1000.0, 1), "output": o} for d, o in durations[:10]],
}))
PY
