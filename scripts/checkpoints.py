#!/usr/bin/env python3
"""Checks on trainer's run folders for the fault scripts (kill_test.sh, ddp_test.sh).

  checkpoints.py unloadable WEIGHTS_DIR   prints how many .ckpt/.pt files there fail torch.load
  checkpoints.py equal RUN_A RUN_B        prints true when weights/last.ckpt of both runs hold the
                                          same model, EMA, optimizer, pending gradients, RNG and
                                          counters, bit for bit
  checkpoints.py epochs-done RUN          prints how many epochs RUN's weights/last.ckpt holds
  checkpoints.py rows RUN_A RUN_B         prints true when both results.csv hold the same rows
                                          (every column but the wall time)
  checkpoints.py same-files RUN_A RUN_B   prints true when both weights/ folders hold the same
                                          .ckpt and .pt files with the same tensors, counters, RNG
                                          and config, bit for bit (the write date, the
                                          run id, the results copy and the config's
                                          project folder aside)
  checkpoints.py exports RUN_A RUN_B      prints true when RUN_B's weights/last.pt and best.pt hold
                                          the EMA weights of its last.ckpt and best.ckpt, and equal
                                          RUN_A's .pt files bit for bit
Needs the project's venv (torch).
"""
import csv
import glob
import sys

import torch

STATE_KEYS = ("model", "ema", "optimizer", "pending_grads", "rng_cpu", "epoch", "iteration",
              "last_opt_step", "best_fitness", "best_epoch", "loss_updates", "world_size")


def same(a, b):
    if isinstance(a, torch.Tensor):
        return isinstance(b, torch.Tensor) and a.dtype == b.dtype and torch.equal(a, b)
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    return a == b


def unloadable(weights_dir):
    bad = 0
    for f in sorted(glob.glob(weights_dir + "/*.ckpt") + glob.glob(weights_dir + "/*.pt")):
        try:
            torch.load(f, map_location="cpu", weights_only=False)
        except Exception as e:  # noqa: BLE001 - any failure is an unloadable file
            print(f"unloadable: {f}: {e}", file=sys.stderr)
            bad += 1
    return bad


def equal(run_a, run_b):
    a, b = (torch.load(d + "/weights/last.ckpt", map_location="cpu", weights_only=False)
            for d in (run_a, run_b))
    differing = [k for k in STATE_KEYS if k in a and not same(a[k], b.get(k))]
    if differing:
        print("differ: " + ", ".join(differing), file=sys.stderr)
    return not differing


def same_files(run_a, run_b):
    names = lambda d: sorted(p.rsplit("/", 1)[1] for p in glob.glob(d + "/weights/*.ckpt") + glob.glob(d + "/weights/*.pt"))
    problems = []
    if names(run_a) != names(run_b):
        problems.append(f"weights files differ: {names(run_a)} against {names(run_b)}")
    for name in names(run_a):
        if name not in names(run_b):
            continue
        a, b = (torch.load(f"{d}/weights/{name}", map_location="cpu", weights_only=False) for d in (run_a, run_b))
        if isinstance(a, dict) and isinstance(b, dict):
            for ckpt in (a, b):
                ckpt.pop("date", None)
                # Each run's own id, and its results rows (wall times; `rows` compares the rest).
                ckpt.pop("run_id", None)
                ckpt.pop("results_csv", None)
                # The runs' own folder (`project:`, and paths below it such as `resume:`) differs
                # between the two runs by construction.
                text = ckpt.get("config_yaml")
                if isinstance(text, str):
                    project = [l[len("project:"):].strip() for l in text.splitlines() if l.startswith("project:")]
                    if project and project[0]:
                        ckpt["config_yaml"] = text.replace(project[0], "<project>")
        if not same(a, b):
            keys = [k for k in a if k not in b or not same(a[k], b[k])] if isinstance(a, dict) else []
            problems.append(f"{name} differs" + (f" in {', '.join(keys)}" if keys else ""))
    for p in problems:
        print(p, file=sys.stderr)
    return not problems


def rows(run_a, run_b):
    def read(d):
        with open(d + "/results.csv") as f:
            return [{k: v for k, v in r.items() if k != "time"} for r in csv.DictReader(f)]
    return read(run_a) == read(run_b)


def exports(run_a, run_b):
    problems = []
    for name in ("last", "best"):
        ckpt = torch.load(f"{run_b}/weights/{name}.ckpt", map_location="cpu", weights_only=False)
        ema = {k[4:]: v for k, v in ckpt["ema"].items() if k.startswith("ema.") and k != "ema.updates"}
        pt_b = torch.load(f"{run_b}/weights/{name}.pt", map_location="cpu", weights_only=False)
        pt_a = torch.load(f"{run_a}/weights/{name}.pt", map_location="cpu", weights_only=False)
        for key, tensor in pt_b.items():
            if key in ema:
                if not same(tensor, ema[key]):
                    problems.append(f"{name}.pt {key} is not {name}.ckpt's EMA")
            elif tensor.is_floating_point():
                problems.append(f"{name}.pt {key} has no EMA entry in {name}.ckpt")
        if not same(pt_a, pt_b):
            problems.append(f"{name}.pt differs from {run_a}'s")
    for p in problems:
        print(p, file=sys.stderr)
    return not problems


if __name__ == "__main__":
    command, args = sys.argv[1], sys.argv[2:]
    if command == "unloadable":
        print(unloadable(*args))
    elif command == "epochs-done":
        ckpt = torch.load(args[0] + "/weights/last.ckpt", map_location="cpu", weights_only=False)
        print(int(ckpt["epoch"]) + 1)
    elif command in ("equal", "rows", "exports", "same-files"):
        check = {"equal": equal, "rows": rows, "exports": exports, "same-files": same_files}[command]
        print("true" if check(*args) else "false")
    else:
        sys.exit(f"checkpoints.py: unknown command {command!r} "
                 "(unloadable, equal, epochs-done, rows, exports, same-files)")
