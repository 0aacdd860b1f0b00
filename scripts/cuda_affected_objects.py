#!/usr/bin/env python3
"""Lists the object files of a CUDA build folder whose code differs from the CPU build's.

Why: the CUDA build compiles every library again against the same LibTorch headers, and only the
translation units that see TRAINER_WITH_CUDA, c10d's backend macros or a CUDA header can compile
differently there. CI (scripts/test.sh) compiles just these on a cold machine, where compiling all
of them would cost half an hour of its 90 minutes; `scripts/build.sh --cuda` builds and links the
whole CUDA app (gpu_check.sh, and before a change that touches CUDA code lands).

Of the tests, only tests/cuda (whose cases are CUDA code under TRAINER_WITH_CUDA) is listed.
A translation unit counts when it, or a project header it includes (followed through the project's
own #include "..." lines), mentions one of MARKERS.

Usage: cuda_affected_objects.py BUILD_DIR   (prints one ninja target per line)
"""

import json
import os
import re
import sys

MARKERS = re.compile(r"TRAINER_WITH_CUDA|USE_C10D_|USE_DISTRIBUTED|USE_RPC|USE_TENSORPIPE|"
                     r"#\s*include\s*[<\"](c10/cuda/|ATen/cuda/|cuda_|nccl|torch/csrc/distributed)")
INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"', re.M)


def main():
    build = sys.argv[1]
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    lib = os.path.join(root, "lib")
    cache = {}

    def affected(path, seen):
        if path in cache:
            return cache[path]
        if path in seen:
            return False
        seen.add(path)
        try:
            text = open(path, encoding="utf-8", errors="replace").read()
        except OSError:
            return False
        result = bool(MARKERS.search(text))
        for name in INCLUDE.findall(text):
            if result:
                break
            for base in (os.path.dirname(path), lib):
                candidate = os.path.normpath(os.path.join(base, name))
                if os.path.isfile(candidate):
                    result = affected(candidate, seen)
                    break
        cache[path] = result
        return result

    with open(os.path.join(build, "compile_commands.json"), encoding="utf-8") as f:
        entries = json.load(f)
    for entry in entries:
        source = os.path.normpath(os.path.join(entry["directory"], entry["file"]))
        # Tests stay out, except the CUDA smoke tests: their CUDA half compiles only here.
        if not source.startswith(root + os.sep):
            continue
        if "/tests/" in source and "/tests/cuda/" not in source:
            continue
        if affected(source, set()):
            output = entry.get("output")
            if output is None:  # CMake < 3.20: take it from the command line
                match = re.search(r"\s-o\s+(\S+)", entry.get("command", ""))
                output = match.group(1) if match else None
            if output:
                print(os.path.relpath(os.path.join(entry["directory"], output), build))


if __name__ == "__main__":
    main()
