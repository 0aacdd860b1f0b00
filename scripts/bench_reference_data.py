#!/usr/bin/env python3
"""The reference trainer's (Ultralytics 8.4.190) training data loader, timed the way
`trainer bench data` times ours: images per second of mosaic training batches per epoch (median of
the epochs after the first), and the peak RSS of this process and its loader workers. JSON on stdout.

The reference writes a labels cache (and, for cache=disk, .npy files) beside the dataset; to never
write into the shared data, the images are reached through a symlink from a temporary folder that
also holds a copy of the label files.

Usage: ~/.cache/trainer/venv/bin/python scripts/bench_reference_data.py
           [--data DIR] [--imgsz 640] [--workers 2] [--batch 16] [--epochs 5] [--cache ram|none]
  DIR: a YOLO dataset root with images/train2017 and labels/train2017
       (default $TRAINER_SHARED_DATA/coco128)
"""

import argparse
import contextlib
import json
import os
import resource
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path


def main():
    shared = os.environ.get("TRAINER_SHARED_DATA", str(Path(__file__).resolve().parents[2] / "shared/data"))
    p = argparse.ArgumentParser()
    p.add_argument("--data", default=str(Path(shared) / "coco128"))
    p.add_argument("--split", default="train2017")
    p.add_argument("--imgsz", type=int, default=640)
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--batch", type=int, default=16)
    p.add_argument("--epochs", type=int, default=5)
    p.add_argument("--cache", choices=["ram", "none"], default="ram")
    a = p.parse_args()

    root = Path(a.data)
    if not (root / "images" / a.split).is_dir():
        raise SystemExit(f"{root}/images/{a.split} not found (set TRAINER_SHARED_DATA or --data)")
    # The reference logs to stdout; the JSON alone goes there.
    with tempfile.TemporaryDirectory(prefix="reference-data-bench-") as tmp, \
            contextlib.redirect_stdout(sys.stderr):
        tmp = Path(tmp)
        (tmp / "images").mkdir()
        (tmp / "images" / a.split).symlink_to((root / "images" / a.split).resolve())
        shutil.copytree(root / "labels" / a.split, tmp / "labels" / a.split)
        os.environ["YOLO_OFFLINE"] = "1"
        os.environ["YOLO_CONFIG_DIR"] = str(tmp / "config")

        import ultralytics
        from ultralytics.cfg import get_cfg
        from ultralytics.data.build import build_dataloader, build_yolo_dataset

        cfg = get_cfg(overrides={"imgsz": a.imgsz, "batch": a.batch, "workers": a.workers,
                                 "cache": a.cache if a.cache != "none" else False})
        data = {"names": {i: str(i) for i in range(80)}, "nc": 80, "channels": 3}
        t0 = time.perf_counter()
        dataset = build_yolo_dataset(cfg, str(tmp / "images" / a.split), a.batch, data, mode="train",
                                     rect=False, stride=32)
        loader = build_dataloader(dataset, a.batch, a.workers, shuffle=True, rank=-1)
        build_s = time.perf_counter() - t0
        rates = []
        for _ in range(a.epochs):
            t = time.perf_counter()
            images = 0
            for batch in loader:
                images += batch["img"].shape[0]
            rates.append(images / (time.perf_counter() - t))
        timed = rates[1:] if len(rates) > 1 else rates
        peak_kb = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss +
                   resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
        result = {
            "bench": "reference_data",
            "ultralytics": ultralytics.__version__,
            "dataset": str(root),
            "images": len(dataset),
            "imgsz": a.imgsz, "workers": a.workers, "batch": a.batch, "cache": a.cache,
            "epochs": a.epochs,
            "build_s": build_s,
            "images_per_s": rates,
            "images_per_s_median": statistics.median(timed),
            "peak_rss_bytes_self_plus_largest_worker": peak_kb * 1024,
            "cpu_count": os.cpu_count(),
        }
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
