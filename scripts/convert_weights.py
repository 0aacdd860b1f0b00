#!/usr/bin/env python3
"""Convert weights between a reference (Ultralytics) checkpoint and trainer's weights file.

trainer's weights file is a plain `torch.save` of a dict {state-dict key: tensor} (fp32), with the
reference's key names (model.0.conv.weight, ..., model.23.one2one_cv3.2.bias). This script needs
only torch.

  import REF.pt OUT.pt [--ema]
      REF.pt is a reference checkpoint ({'model': DetectionModel, 'ema': ..., ...}) or a plain
      state dict. Writes the model's (or with --ema the EMA's, when present) state_dict() as fp32.
      Unpickling a reference checkpoint needs the `ultralytics` package importable (its classes
      are pickled in the file), so run this on a machine where ultralytics is installed; there
      `torch.load` restores the model object and its state_dict() is what gets converted.
  export IN.pt OUT.pt [--half]
      Writes trainer's weights back as a state dict (a plain dict in state_dict() order) that the
      reference loads with
          from ultralytics import YOLO
          model = YOLO("yolo26n.yaml")               # same family, scale and nc
          model.model.load_state_dict(torch.load("OUT.pt"))
      --half stores floating tensors as fp16, as reference checkpoints do.

Then in trainer: the weights file loads with model::load_weights (every key and shape checked).
"""
import argparse
import sys

import torch


def _state_dict_of(obj, use_ema):
    """The state dict inside a reference checkpoint, a module, or a plain dict of tensors."""
    if isinstance(obj, torch.nn.Module):
        return obj.float().state_dict()
    if isinstance(obj, dict) and ("model" in obj or "ema" in obj):
        chosen = obj.get("ema") if use_ema and obj.get("ema") is not None else obj.get("model")
        if chosen is None:
            sys.exit("checkpoint has neither 'model' nor 'ema' weights")
        return _state_dict_of(chosen, use_ema=False)
    if isinstance(obj, dict) and all(isinstance(v, torch.Tensor) for v in obj.values()):
        return obj
    sys.exit(f"not a checkpoint, module or state dict: {type(obj).__name__}")


def import_reference(src, dst, use_ema):
    obj = torch.load(src, map_location="cpu", weights_only=False)
    sd = _state_dict_of(obj, use_ema)
    out = {}
    for key, value in sd.items():
        value = value.detach().cpu()
        out[key] = (value.float() if value.is_floating_point() else value).contiguous().clone()
    torch.save(out, dst)
    print(f"wrote {dst}: {len(out)} tensors, {sum(v.numel() for v in out.values()):,} values")


def export_reference(src, dst, half):
    sd = torch.load(src, map_location="cpu", weights_only=True)
    out = {}  # a plain dict: LibTorch's reader does not take OrderedDict
    for key, value in sd.items():
        out[key] = value.half() if half and value.is_floating_point() else value
    torch.save(out, dst)
    print(f"wrote {dst}: {len(out)} tensors")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    imp = sub.add_parser("import", help="reference checkpoint -> trainer weights file")
    imp.add_argument("src")
    imp.add_argument("dst")
    imp.add_argument("--ema", action="store_true", help="take the EMA weights when present")
    exp = sub.add_parser("export", help="trainer weights file -> reference state dict")
    exp.add_argument("src")
    exp.add_argument("dst")
    exp.add_argument("--half", action="store_true", help="store floating tensors as fp16")
    args = parser.parse_args()
    if args.command == "import":
        import_reference(args.src, args.dst, args.ema)
    else:
        export_reference(args.src, args.dst, args.half)


if __name__ == "__main__":
    main()
