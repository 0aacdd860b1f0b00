"""Test oracle for tests/parity: what the pinned reference (Ultralytics 8.4.190) prints in its model
summary (`model.info()`) for built-in detection models, for `trainer info` to be checked against.

Prints one JSON object on stdout: {name: {"layers", "parameters", "gradients", "gflops",
"per_layer"}} (per_layer: the parameter count of each model.model[i]), layers
counted as model_info counts them (leaf modules) and gflops unrounded (it prints them to 0.1).
The caller sets YOLO_OFFLINE=1 and a temporary YOLO_CONFIG_DIR; models are built from yaml names
with nc=80, nothing is downloaded or written elsewhere.

Usage: reference_info.py [--imgsz 640] yolo26n [yolo11n ...]
"""

import argparse
import json
import os
import sys

os.environ.setdefault("YOLO_VERBOSE", "False")  # keep the reference's log lines off stdout


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("models", nargs="+", help="built-in model names, e.g. yolo26n yolo11x")
    parser.add_argument("--imgsz", type=int, default=640)
    args = parser.parse_args()

    # The reference logs to stdout (settings notice, layer table); route fd 1 to stderr meanwhile.
    stdout_fd = os.dup(1)
    os.dup2(2, 1)
    try:
        from ultralytics.nn.tasks import DetectionModel
        from ultralytics.utils.torch_utils import model_info

        result = {}
        for name in args.models:
            model = DetectionModel(f"{name}.yaml", nc=80, verbose=False)
            layers, parameters, gradients, gflops = model_info(model, imgsz=args.imgsz)
            if not gflops:
                raise RuntimeError(f"{name}: get_flops failed (is ultralytics-thop installed?)")
            result[name] = {
                "layers": int(layers),
                "parameters": int(parameters),
                "gradients": int(gradients),
                "gflops": float(gflops),
                "per_layer": [sum(p.numel() for p in m.parameters()) for m in model.model],
            }
    finally:
        sys.stdout.flush()
        os.dup2(stdout_fd, 1)
        os.close(stdout_fd)
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
