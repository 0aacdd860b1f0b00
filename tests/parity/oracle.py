"""Test oracle for tests/parity: runs the pinned reference trainer (Ultralytics 8.4.190) on inputs the
C++ tests prepare and writes what it computed as JSON (and tensors as torch.save files).

Nothing in lib/ or app/ uses this. The caller sets YOLO_OFFLINE=1 and a temporary YOLO_CONFIG_DIR;
models are built from yaml names, nothing is downloaded.

Usage: oracle.py COMMAND ARGS... (each command's arguments are in its function's docstring).
"""

import json
import math
import os
import sys
from pathlib import Path

import cv2
import numpy as np
import torch

import ultralytics
from ultralytics.data.augment import LetterBox, RandomPerspective
from ultralytics.data.base import BaseDataset
from ultralytics.nn.tasks import DetectionModel
from ultralytics.utils.instance import Instances


def write_json(path, value):
    Path(path).write_text(json.dumps(value))


def load_image_as_reference(file, imgsz):
    """The reference's BaseDataset.load_image (long side to imgsz) on one file."""
    stub = BaseDataset.__new__(BaseDataset)
    stub.ims, stub.im_files, stub.npy_files = [None], [str(file)], [Path("/nonexistent/none.npy")]
    stub.cache, stub.channels, stub.cv2_flag = None, 3, cv2.IMREAD_COLOR
    stub.imgsz, stub.augment = imgsz, False
    return stub.load_image(0)


def boxes_from_label_file(label_file, w, h):
    """YOLO txt rows -> (classes, xyxy pixel boxes) for an image of w x h."""
    rows = [line.split() for line in Path(label_file).read_text().splitlines() if line.strip()]
    cls = np.array([int(r[0]) for r in rows], dtype=np.float32).reshape(-1, 1)
    xywh = np.array([[float(v) for v in r[1:5]] for r in rows], dtype=np.float32).reshape(-1, 4)
    xyxy = np.stack(
        [(xywh[:, 0] - xywh[:, 2] / 2) * w, (xywh[:, 1] - xywh[:, 3] / 2) * h,
         (xywh[:, 0] + xywh[:, 2] / 2) * w, (xywh[:, 1] + xywh[:, 3] / 2) * h], 1)
    return cls, xyxy


PROBE_BOXES = [[10.0, 20.0, 100.0, 120.0], [100.0, 120.0, 10.0, 20.0], [-5.0, 3.5, 300.0, 77.25]]


def cmd_placement(out_dir, imgsz, *images):
    """Letterbox (validation) and the non-mosaic training placement (RandomPerspective with no random
    part: degrees, translate, scale, shear, perspective 0) of each image with its labels.
    Writes OUT_DIR/<stem>_val.png, <stem>_train.png and placement.json."""
    imgsz = int(imgsz)
    out = {}
    for file in images:
        file = Path(file)
        im, (h0, w0), (h, w) = load_image_as_reference(file, imgsz)
        label = file.parent.parent.parent / "labels" / file.parent.name / (file.stem + ".txt")
        cls, xyxy = boxes_from_label_file(label, w, h)

        def labels():
            inst = Instances(xyxy.copy(), np.zeros((0, 1000, 2), dtype=np.float32), None, "xyxy", False)
            return {"img": im.copy(), "cls": cls.copy(), "instances": inst,
                    "ratio_pad": (h / h0, w / w0), "ori_shape": (h0, w0), "resized_shape": (h, w)}

        val = LetterBox(new_shape=(imgsz, imgsz), auto=False, scaleup=False)(labels())
        train = RandomPerspective(degrees=0, translate=0, scale=0, shear=0, perspective=0,
                                  size=(imgsz, imgsz))(labels())
        cv2.imwrite(str(Path(out_dir) / f"{file.stem}_val.png"), val["img"])
        cv2.imwrite(str(Path(out_dir) / f"{file.stem}_train.png"), train["img"])
        (gain_y, gain_x), (pad_x, pad_y) = val["ratio_pad"]
        # Predictions in letterboxed pixels back to the original image (save_json's scale_boxes),
        # an inverted box (x2 < x1, y2 < y1) and one past the border among them.
        from ultralytics.utils.ops import scale_boxes

        probes = torch.tensor(PROBE_BOXES, dtype=torch.float32)
        scaled = scale_boxes((imgsz, imgsz), probes.clone(), (h0, w0), ratio_pad=val["ratio_pad"])
        val["instances"].convert_bbox("xyxy")
        train["instances"].convert_bbox("xyxy")
        out[file.stem] = {
            "resized": [h, w],
            "val": {"gain_x": gain_x, "gain_y": gain_y, "pad_x": pad_x, "pad_y": pad_y,
                    "boxes": val["instances"].bboxes.tolist(), "scaled_probes": scaled.tolist()},
            "train": {"boxes": train["instances"].bboxes.tolist(), "cls": train["cls"].ravel().tolist()},
        }
    write_json(Path(out_dir) / "placement.json", out)


def model_yaml(name):
    """The reference's yaml for a built-in name; trainer's test width 't' (depth 0.33, width 0.0625)
    is the family's yaml with one more scale, so the reference builds the same tiny model."""
    from ultralytics.nn.tasks import yaml_model_load

    if not name.endswith("t"):
        return f"{name}.yaml"
    cfg = yaml_model_load(f"{name[:-1]}n.yaml")
    cfg["scales"]["t"] = [0.33, 0.0625, 1024]
    cfg["scale"] = "t"
    return cfg


def reference_model(name, nc, weights=None):
    """DetectionModel built from the yaml name, with a trainer weights file loaded strictly."""
    model = DetectionModel(model_yaml(name), nc=nc, verbose=False)
    if weights:
        state = torch.load(weights, map_location="cpu", weights_only=True)
        model.load_state_dict({k: v.float() if v.is_floating_point() else v for k, v in state.items()})
    return model


def cmd_val(out_dir, model_name, weights, data_yaml, imgsz, batch, *overrides):
    """The reference's standalone validation with a trainer weights file. Writes
    OUT_DIR/val/predictions.json and OUT_DIR/val.json (metrics)."""
    from ultralytics import YOLO
    import yaml

    nc = len(yaml.safe_load(Path(data_yaml).read_text())["names"])
    yolo = YOLO(f"{model_name[:-1]}n.yaml" if model_name.endswith("t") else f"{model_name}.yaml")
    yolo.model = reference_model(model_name, nc, weights)
    yolo.model.names = {i: str(i) for i in range(nc)}
    kwargs = dict(o.split("=", 1) for o in overrides)
    kwargs = {k: yaml.safe_load(v) for k, v in kwargs.items()}
    metrics = yolo.val(data=data_yaml, imgsz=int(imgsz), batch=int(batch), device="cpu", save_json=True,
                       plots=False, project=str(out_dir), name="val", exist_ok=True, workers=0,
                       verbose=False, **kwargs)
    box = metrics.box
    write_json(Path(out_dir) / "val.json", {"precision": float(box.mp), "recall": float(box.mr),
                                             "map50": float(box.map50), "map50_95": float(box.map)})


def cmd_predict(out_dir, model_name, weights, nc, imgsz, conf, *images):
    """The reference predictor (defaults: LetterBox auto, NMS on the one-to-many head, one label per
    box) with a trainer weights file on each image alone. Writes OUT_DIR/predict.json:
    {file: {"shape": [h, w] of the model input, "rows": [[x1, y1, x2, y2, score, class], ...]}}."""
    from ultralytics import YOLO

    nc = int(nc)
    yolo = YOLO(f"{model_name[:-1]}n.yaml" if model_name.endswith("t") else f"{model_name}.yaml")
    yolo.model = reference_model(model_name, nc, weights)
    yolo.model.names = {i: str(i) for i in range(nc)}
    out = {}
    for file in images:
        result = yolo.predict(source=file, imgsz=int(imgsz), conf=float(conf), device="cpu", save=False,
                              verbose=False)[0]
        rows = torch.cat([result.boxes.xyxy, result.boxes.conf[:, None], result.boxes.cls[:, None]], 1)
        out[file] = rows.tolist()
    write_json(Path(out_dir) / "predict.json", out)


def cmd_schedule(out_dir, data_yaml, *overrides):
    """A short reference training run with callbacks that record, for every batch, each parameter
    group's lr and momentum, the accumulate value and whether the optimizer stepped, and per epoch
    whether mosaic was on; plus the results.csv header. Writes OUT_DIR/schedule.json."""
    from ultralytics import YOLO
    from ultralytics.data.augment import Mosaic
    import yaml

    kwargs = {k: yaml.safe_load(v) for k, v in (o.split("=", 1) for o in overrides)}
    model = YOLO(f"{kwargs.pop('model', 'yolo26n')}.yaml")
    record = {"batches": [], "mosaic": [], "groups": []}
    state = {"steps": 0}

    def find_mosaic(t):
        if isinstance(t, Mosaic):
            return t
        for child in getattr(t, "transforms", []) or []:
            found = find_mosaic(child)
            if found is not None:
                return found
        return None

    def on_train_start(trainer):
        record["groups"] = [
            {"name": g.get("param_group"), "params": len(g["params"]), "initial_lr": g["initial_lr"]}
            for g in trainer.optimizer.param_groups]
        original = trainer.optimizer_step

        def counting_step():
            state["steps"] += 1
            original()
        trainer.optimizer_step = counting_step

    def on_train_batch_start(trainer):
        if len(record["mosaic"]) == trainer.epoch:
            m = find_mosaic(trainer.train_loader.dataset.transforms)
            record["mosaic"].append(bool(m is not None and m.p > 0))
        state["before"] = state["steps"]

    def on_train_batch_end(trainer):
        groups = trainer.optimizer.param_groups
        record["batches"].append({
            "epoch": trainer.epoch,
            "lr": [g["lr"] for g in groups],
            "momentum": [g.get("momentum", g.get("betas", [0])[0]) for g in groups],
            "accumulate": trainer.accumulate,
            "stepped": state["steps"] > state["before"],
        })

    model.add_callback("on_train_start", on_train_start)
    model.add_callback("on_train_batch_start", on_train_batch_start)
    model.add_callback("on_train_batch_end", on_train_batch_end)
    model.train(data=data_yaml, device="cpu", workers=0, plots=False, project=str(out_dir), name="train",
                exist_ok=True, verbose=False, amp=False, **kwargs)
    csv = Path(out_dir) / "train" / "results.csv"
    record["results_header"] = csv.read_text().splitlines()[0].split(",")
    record["nb"] = len(record["batches"]) // max(len(record["mosaic"]), 1)
    write_json(Path(out_dir) / "schedule.json", record)


def cmd_head(out_file, model_name, nc, weights, inputs):
    """Raw head outputs and the one-to-many decode for an image tensor (eval mode): writes
    {"one2many": (B, 4*reg_max + nc, A), "one2one": ..., "decoded": (B, 4 + nc, A)}."""
    model = reference_model(model_name, int(nc), weights).eval()
    images = torch.load(inputs, weights_only=True)["images"]
    head = model.model[-1]
    head.end2end = False  # decode the one-to-many head, as validation does by default
    with torch.no_grad():
        decoded, raw = model(images)
    out = {"decoded": decoded}
    for branch in ("one2many", "one2one"):
        part = raw.get(branch, raw if branch == "one2many" else None)
        if part is not None and "boxes" in part:
            out[branch] = torch.cat([part["boxes"], part["scores"]], 1)
    torch.save(out, out_file)


def cmd_pose_head(out_file, model_name, nc, weights, inputs):
    """A PoseModel (kpt_shape [17, 3]) with a trainer weights file loaded strictly, in eval mode:
    writes {"one2many": (B, 4*reg_max + nc, A), "one2many_kpts": (B, 51, A), "one2one",
    "one2one_kpts" (YOLO26), "decoded": the one-to-many decode (B, 4 + nc + 51, A), "topk": the
    end-to-end output (B, min(300, A), 6 + 51) (YOLO26)} and the state-dict keys and shapes, in
    order, to OUT_FILE.json."""
    from ultralytics.nn.tasks import PoseModel

    model = PoseModel(model_yaml(model_name), nc=int(nc), data_kpt_shape=(17, 3), verbose=False)
    state = model.state_dict()
    write_json(out_file + ".json", {"keys": list(state.keys()), "shapes": [list(v.shape) for v in state.values()]})
    loaded = torch.load(weights, map_location="cpu", weights_only=True)
    model.load_state_dict({k: v.float() if v.is_floating_point() else v for k, v in loaded.items()})
    model.eval()
    images = torch.load(inputs, weights_only=True)["images"]
    head = model.model[-1]
    head.end2end = False  # the one-to-many decode, as validation does by default
    with torch.no_grad():
        decoded, raw = model(images)
        out = {"decoded": decoded}
        for branch in ("one2many", "one2one"):
            part = raw.get(branch, raw if branch == "one2many" else None)
            if part is not None and "boxes" in part:
                out[branch] = torch.cat([part["boxes"], part["scores"]], 1)
                out[branch + "_kpts"] = part["kpts"]
        if "one2one" in raw:
            head.end2end = True
            out["topk"] = model(images)[0]
    torch.save(out, out_file)


def cmd_seg_head(out_file, model_name, nc, weights, inputs):
    """A SegmentationModel with a trainer weights file loaded strictly. Eval mode: writes
    {"one2many": (B, 4*reg_max + nc, A), "one2many_coef": (B, 32, A), "one2one_coef" (YOLO26),
    "protos": (B, 32, H/4, W/4), "decoded": the one-to-many decode (B, 4 + nc + 32, A), "topk":
    the end-to-end output (YOLO26)}; then training mode with BatchNorm kept in eval mode:
    "train_protos" and "semantic" (YOLO26). The state-dict keys and shapes, in order, go to
    OUT_FILE.json."""
    from ultralytics.nn.tasks import SegmentationModel

    model = SegmentationModel(model_yaml(model_name), nc=int(nc), verbose=False)
    state = model.state_dict()
    write_json(out_file + ".json", {"keys": list(state.keys()), "shapes": [list(v.shape) for v in state.values()]})
    loaded = torch.load(weights, map_location="cpu", weights_only=True)
    model.load_state_dict({k: v.float() if v.is_floating_point() else v for k, v in loaded.items()})
    model.eval()
    images = torch.load(inputs, weights_only=True)["images"]
    head = model.model[-1]
    head.end2end = False  # the one-to-many decode, as validation does by default
    out = {}
    with torch.no_grad():
        (decoded, protos), raw = model(images)
        out["decoded"] = decoded
        out["protos"] = protos
        for branch in ("one2many", "one2one"):
            part = raw.get(branch, raw if branch == "one2many" else None)
            if part is not None and "boxes" in part:
                out[branch] = torch.cat([part["boxes"], part["scores"]], 1)
                out[branch + "_coef"] = part["mask_coefficient"]
        if "one2one" in raw:
            head.end2end = True
            out["topk"] = model(images)[0][0]
        model.train()
        for m in model.modules():
            if isinstance(m, torch.nn.BatchNorm2d):
                m.eval()
        preds = model(images)
        proto = (preds["one2many"] if "one2many" in preds else preds)["proto"]
        if isinstance(proto, tuple):
            out["train_protos"], out["semantic"] = proto
        else:
            out["train_protos"] = proto
    torch.save(out, out_file)


def cmd_loss(out_file, model_name, nc, weights, inputs):
    """The loss and its items on one batch in training mode (BatchNorm batch statistics):
    writes {"total": 0-d, "items": (3,)} plus the item names to OUT_FILE.json."""
    from ultralytics.cfg import get_cfg

    model = reference_model(model_name, int(nc), weights).train()
    model.args = get_cfg()
    data = torch.load(inputs, weights_only=True)
    labels = data["labels"]  # (n, 6): image, class, cx, cy, w, h (normalised)
    batch = {"img": data["images"], "batch_idx": labels[:, 0], "cls": labels[:, 1:2], "bboxes": labels[:, 2:6]}
    total, items = model.loss(batch)
    torch.save({"total": total.detach().sum(), "items": torch.stack(list(items.values())).float()}, out_file)
    write_json(out_file + ".json", {"names": list(items.keys())})


def cmd_optim(out_file, name, inputs, steps):
    """`steps` optimizer steps of MuSGD (8.4.190's, bf16 Newton-Schulz; "MuSGD-fp32": the same with its
    Newton-Schulz run in fp32), SGD (nesterov) or AdamW from identical parameters, with the gradients
    given for each step; writes the parameters after."""
    from ultralytics.optim.muon import MuSGD

    if name == "MuSGD-fp32":  # the reference casts to bf16 with Tensor.bfloat16(): make that fp32
        torch.Tensor.bfloat16 = lambda self: self.float()
        name = "MuSGD"

    data = torch.load(inputs, weights_only=True)
    n = int(data["count"])
    params = [torch.nn.Parameter(data[f"p{i}"].clone()) for i in range(n)]
    kinds = data["kinds"].tolist()  # per parameter: 0 weight, 1 bn, 2 bias, 3 muon
    lr, momentum, decay = float(data["lr"]), float(data["momentum"]), float(data["decay"])
    groups = []
    for kind in range(4):
        members = [p for p, k in zip(params, kinds) if k == kind]
        if members:
            groups.append({"params": members, "weight_decay": decay if kind in (0, 3) else 0.0,
                           **({"use_muon": True} if kind == 3 else {})})
    if name == "MuSGD":
        opt = MuSGD(groups, lr=lr, momentum=momentum, nesterov=True, muon=0.2, sgd=1.0)
    elif name == "SGD":
        opt = torch.optim.SGD(groups, lr=lr, momentum=momentum, nesterov=True)
    else:
        opt = torch.optim.AdamW(groups, lr=lr, betas=(momentum, 0.999), weight_decay=0.0)
    for step in range(int(steps)):
        for i, p in enumerate(params):
            p.grad = data[f"g{step}_{i}"].clone()
        opt.step()
    torch.save({f"p{i}": p.detach() for i, p in enumerate(params)}, out_file)


def cmd_metric(out_file, inputs):
    """The reference metric (DetectionValidator.match_predictions, DetMetrics) on given per-image
    predictions (sorted by descending score, as NMS returns them) and ground truth, all in the same
    pixel space. Writes P, R, mAP50, mAP50-95 and the per-class AP50."""
    from ultralytics.models.yolo.detect.val import DetectionValidator
    from ultralytics.utils.metrics import DetMetrics, box_iou

    data = json.loads(Path(inputs).read_text())
    validator = DetectionValidator.__new__(DetectionValidator)
    validator.iouv = torch.linspace(0.5, 0.95, 10)
    metrics = DetMetrics(names={i: str(i) for i in range(data["nc"])})
    for k, image in enumerate(data["images"]):
        pred = torch.tensor(image["pred_boxes"], dtype=torch.float32).view(-1, 4)
        conf = np.array(image["scores"], dtype=np.float32)
        pred_cls = torch.tensor(image["pred_classes"], dtype=torch.float32)
        gt = torch.tensor(image["gt_boxes"], dtype=torch.float32).view(-1, 4)
        gt_cls = torch.tensor(image["gt_classes"], dtype=torch.float32)
        if len(gt) and len(pred):
            tp = validator.match_predictions(pred_cls, gt_cls, box_iou(gt, pred)).numpy()
        else:
            tp = np.zeros((len(pred), 10), dtype=bool)
        metrics.update_stats({"tp": tp, "conf": conf, "pred_cls": pred_cls.numpy(),
                              "target_cls": gt_cls.numpy(), "target_img": np.unique(gt_cls.numpy()),
                              "im_name": f"{k}.jpg"})
    metrics.process()
    box = metrics.box
    write_json(out_file, {"precision": float(box.mp), "recall": float(box.mr), "map50": float(box.map50),
                          "map50_95": float(box.map), "ap50": {str(int(c)): float(a) for c, a in
                                                               zip(box.ap_class_index, box.ap50)}})


def cmd_checkpoint(path):
    """torch.load(path) with its defaults (weights_only=True): prints the top-level keys."""
    obj = torch.load(path)
    print(json.dumps({"keys": sorted(obj.keys()), "epoch": obj.get("epoch")}))


def cmd_default_cfg():
    """Prints `default_cfg: PATH`, the installed reference's cfg/default.yaml (every key it knows)."""
    from ultralytics.cfg import DEFAULT_CFG_PATH

    print(f"default_cfg: {DEFAULT_CFG_PATH}")


def cmd_train_args(out_dir, data_yaml, *overrides):
    """A 1-epoch reference training run of yolo26n at the smallest size, on the CPU, so that the
    reference writes its own OUT_DIR/train/args.yaml (val off: the final epoch still validates)."""
    from ultralytics import YOLO
    import yaml

    kwargs = dict(epochs=1, imgsz=32, batch=2, workers=0, plots=False, val=False, amp=False)
    kwargs.update({k: yaml.safe_load(v) for k, v in (o.split("=", 1) for o in overrides)})
    YOLO("yolo26n.yaml").train(data=data_yaml, device="cpu", project=str(out_dir), name="train",
                               exist_ok=True, verbose=False, **kwargs)


def cmd_realnvp(out_file, inputs):
    """RealNVP.log_prob of residuals "x" (N, 2) with the flow weights "flow.<key>" of INPUTS: writes
    {"log_prob": (N,)} to OUT_FILE."""
    from ultralytics.nn.modules.block import RealNVP

    data = torch.load(inputs, weights_only=True)
    flow = RealNVP()
    flow.load_state_dict({k[5:]: v for k, v in data.items() if k.startswith("flow.")}, strict=True)
    torch.save({"log_prob": flow.log_prob(data["x"]).detach()}, out_file)


def cmd_pose_loss(out_file, yaml_name, nc, inputs):
    """The pose criterion PoseModel.init_criterion builds (YOLO26: E2ELoss over PoseLoss26, YOLO11:
    v8PoseLoss) with the default gains, on raw head outputs read from INPUTS: per branch b in
    (o2m, o2o) and level l the tensors "<b>_box_<l>", "<b>_cls_<l>", "<b>_kpts_<l>", "<b>_sigma_<l>"
    (B, C, H, W), the flow weights "flow.<key>", "kpt_shape", "labels" (n, 6), "keypoints"
    (n, K, 2 or 3) and optionally "sigmas" (K). Writes {"total": 0-d, "items", "grad.<key>" for
    every raw output and flow parameter} to OUT_FILE and the item names to OUT_FILE.json."""
    from ultralytics.cfg import get_cfg
    from ultralytics.nn.tasks import PoseModel

    data = torch.load(inputs, weights_only=True)
    raw = [k for k in data if k.startswith(("o2m_", "o2o_"))]
    for k in raw:
        data[k].requires_grad_(True)
    kpt_shape = [int(v) for v in data["kpt_shape"].tolist()]
    model = PoseModel(f"{yaml_name}.yaml", nc=int(nc), data_kpt_shape=tuple(kpt_shape), verbose=False).train()
    model.args = get_cfg()
    if "sigmas" in data:  # a dataset's kpt_oks_sigmas (PoseTrainer.set_model_attributes)
        model.kpt_oks_sigmas = data["sigmas"]
    head = model.model[-1]
    if getattr(head, "flow_model", None) is not None:
        flow = {k[5:]: v for k, v in data.items() if k.startswith("flow.")}
        head.flow_model.load_state_dict(flow, strict=True)
    criterion = model.init_criterion()

    def branch(name):
        levels = sorted(int(k.rsplit("_", 1)[1]) for k in data if k.startswith(f"{name}_box_"))
        if not levels:
            return None

        def cat(kind):
            return torch.cat([data[f"{name}_{kind}_{l}"].flatten(2) for l in levels], 2)

        preds = {"boxes": cat("box"), "scores": cat("cls"), "kpts": cat("kpts"),
                 "feats": [data[f"{name}_box_{l}"] for l in levels]}
        if f"{name}_sigma_{levels[0]}" in data:  # training mode only
            preds["kpts_sigma"] = cat("sigma")
        return preds

    o2m, o2o = branch("o2m"), branch("o2o")
    preds = {"one2many": o2m, "one2one": o2o} if o2o is not None else o2m
    labels = data["labels"]
    batch = {"batch_idx": labels[:, 0], "cls": labels[:, 1:2], "bboxes": labels[:, 2:6],
             "keypoints": data["keypoints"]}
    total, items = criterion(preds, batch)
    total.sum().backward()
    grads = {f"grad.{k}": data[k].grad for k in raw}
    if getattr(head, "flow_model", None) is not None:
        grads.update({f"grad.flow.{k}": p.grad for k, p in head.flow_model.named_parameters()})
    torch.save({"total": total.detach().sum(), "items": torch.stack(list(items.values())).float(), **grads},
               out_file)
    write_json(out_file + ".json", {"names": list(items.keys())})


def cmd_seg_loss(out_file, yaml_name, nc, overlap, inputs):
    """The segmentation criterion SegmentationModel.init_criterion builds (YOLO26: E2ELoss over
    SegmentLoss26, YOLO11: v8SegmentationLoss) with the default gains and overlap_mask=OVERLAP
    (0/1), on raw head outputs read from INPUTS: per branch b in (o2m, o2o) and level l the tensors
    "<b>_box_<l>", "<b>_cls_<l>", "<b>_coef_<l>" (B, C, H, W), "proto" (B, 32, h, w), optionally
    "semantic" (B, nc, h', w'), "labels" (n, 6) and "masks" (the batch's masks in the overlap or
    per-object layout). sem_masks are made from the masks as Format makes them. Writes {"total",
    "items", "grad.<key>" for every raw output} to OUT_FILE and the item names to OUT_FILE.json."""
    from ultralytics.cfg import get_cfg
    from ultralytics.nn.tasks import SegmentationModel

    data = torch.load(inputs, weights_only=True)
    raw = [k for k in data if k.startswith(("o2m_", "o2o_")) or k in ("proto", "semantic")]
    for k in raw:
        data[k].requires_grad_(True)
    model = SegmentationModel(f"{yaml_name}.yaml", nc=int(nc), verbose=False).train()
    model.args = get_cfg(overrides={"overlap_mask": bool(int(overlap))})
    criterion = model.init_criterion()
    proto = (data["proto"], data["semantic"]) if "semantic" in data else data["proto"]

    def branch(name, detach):
        levels = sorted(int(k.rsplit("_", 1)[1]) for k in data if k.startswith(f"{name}_box_"))
        if not levels:
            return None

        def cat(kind):
            return torch.cat([data[f"{name}_{kind}_{l}"].flatten(2) for l in levels], 2)

        p = tuple(t.detach() for t in proto) if isinstance(proto, tuple) else proto
        return {"boxes": cat("box"), "scores": cat("cls"), "mask_coefficient": cat("coef"),
                "feats": [data[f"{name}_box_{l}"] for l in levels],
                "proto": p if detach else proto}

    o2m, o2o = branch("o2m", False), branch("o2o", True)
    preds = {"one2many": o2m, "one2one": o2o} if o2o is not None else o2m
    labels, masks = data["labels"], data["masks"]
    cls = labels[:, 1].long()
    bs = int(data["proto"].shape[0])
    if int(overlap):
        sem = torch.stack([cls[labels[:, 0] == i][(masks[i].long() - 1).clamp(min=0)]
                           if (labels[:, 0] == i).any() else torch.zeros(masks.shape[1:], dtype=torch.long)
                           for i in range(bs)]).float()
    else:
        sem = []
        for i in range(bs):
            m, c = masks[labels[:, 0] == i], cls[labels[:, 0] == i]
            if not len(m):
                sem.append(torch.zeros(masks.shape[1:]))
                continue
            weights = m.sum(axis=(1, 2))
            key = torch.where(m.bool(), weights[:, None, None], weights.max() + 1)
            sem.append((c[key.min(0).indices] * m.any(0)).float())
        sem = torch.stack(sem)
    batch = {"batch_idx": labels[:, 0], "cls": labels[:, 1:2], "bboxes": labels[:, 2:6],
             "masks": masks, "sem_masks": sem}
    total, items = criterion(preds, batch)
    total.sum().backward()
    grads = {f"grad.{k}": data[k].grad for k in raw}
    torch.save({"total": total.detach().sum(), "items": torch.stack(list(items.values())).float(), **grads},
               out_file)
    write_json(out_file + ".json", {"names": list(items.keys())})

TASK_SUFFIX = {"detect": "", "pose": "-pose", "segment": "-seg", "obb": "-obb"}


def _reference_state(ckpt_file, out_file):
    """The state_dict() the reference loads from a checkpoint (its EMA, else its model), as fp32
    (integers kept), saved as a plain dict in state_dict() order."""
    ckpt = torch.load(ckpt_file, map_location="cpu", weights_only=False)
    module = ckpt.get("ema") or ckpt["model"]
    state = {k: (v.float() if v.is_floating_point() else v).contiguous() for k, v in module.state_dict().items()}
    torch.save(state, out_file)


def _save_untrained(model, task, yaml_name, out_file):
    """An untrained model saved the way BaseTrainer.save_model saves a checkpoint mid-training:
    the EMA in fp16, the optimizer's state (after one step, so momentum buffers exist), the run's
    arguments."""
    from copy import deepcopy
    from datetime import datetime

    from ultralytics.utils import DEFAULT_CFG_DICT, __version__
    from ultralytics.utils.torch_utils import ModelEMA, convert_optimizer_state_dict_to_fp16

    ema = ModelEMA(model)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.937)
    for p in model.parameters():
        p.grad = torch.zeros_like(p)
    optimizer.step()
    args = {**DEFAULT_CFG_DICT, "task": task, "model": yaml_name, "data": "coco8.yaml"}
    torch.save({"epoch": 0, "best_fitness": None, "stopper": {"best_fitness": None, "best_epoch": 0},
                "model": None, "ema": deepcopy(ema.ema).half(), "updates": ema.updates, "modelopt": None,
                "optimizer": convert_optimizer_state_dict_to_fp16(deepcopy(optimizer.state_dict())),
                "scaler": None, "train_args": args, "train_metrics": {}, "train_results": {},
                "date": datetime.now().astimezone().isoformat(), "version": __version__,
                "git": {"root": None, "branch": None, "commit": None, "message": None, "origin": None},
                "license": "AGPL-3.0 (https://ultralytics.com/license)", "docs": "https://docs.ultralytics.com"},
               out_file)


def _yolo_segment_dataset(coco_json, images_dir, out):
    """A YOLO segmentation dataset (labels/train/*.txt: class and normalised polygon points) of the
    images a COCO json lists, its first polygon per object, crowd regions left out; images linked.
    Both splits are the same images. Returns the dataset yaml."""
    d = json.loads(Path(coco_json).read_text())
    categories = [c["id"] for c in d["categories"]]
    root = Path(out) / "segment-dataset"
    (root / "images" / "train").mkdir(parents=True, exist_ok=True)
    (root / "labels" / "train").mkdir(parents=True, exist_ok=True)
    for image in d["images"]:
        link = root / "images" / "train" / image["file_name"]
        if not link.exists():
            link.symlink_to(Path(images_dir) / image["file_name"])
        rows = []
        for a in d["annotations"]:
            if a["image_id"] != image["id"] or a.get("iscrowd") or not isinstance(a["segmentation"], list):
                continue
            polygon = a["segmentation"][0]
            size = (image["width"], image["height"])
            points = " ".join(f"{v / size[i % 2]:.6f}" for i, v in enumerate(polygon))
            rows.append(f"{categories.index(a['category_id'])} {points}")
        (root / "labels" / "train" / (Path(image["file_name"]).stem + ".txt")).write_text("\n".join(rows) + "\n")
    names = "".join(f"  {i}: {c['name']}\n" for i, c in enumerate(d["categories"]))
    yaml_file = root / "data.yaml"
    yaml_file.write_text(f"path: {root}\ntrain: images/train\nval: images/train\nnames:\n{names}")
    return str(yaml_file)


def cmd_reference_checkpoints(out_dir, detect_data, pose_data, segment_json, segment_images, obb_data):
    """Checkpoints as the reference writes them, for the reading tests (segment: coco8's images with
    coco128's polygons, from a COCO json and its images folder): per task a 1-epoch yolo26n
    (detect with single_cls: one class keeps the scores of one epoch above the ties of 80 priors)
    training at imgsz 32 (its stripped best.pt as released checkpoints are, and, for detect, the
    mid-training epoch0.pt with MuSGD's state), and an untrained yolo26n and yolo11n of every
    task saved as save_model saves one. FILE.pt gets FILE.state.pt (_reference_state) beside it.
    Writes OUT_DIR/checkpoints.json: [{"file", "task", "model", "nc", "names"}]."""
    from ultralytics import YOLO

    out = Path(out_dir)
    listing = []

    def add(file, task, model_name, module):
        _reference_state(file, str(file)[:-3] + ".state.pt")
        listing.append({"file": str(file), "task": task, "model": model_name, "nc": int(module.yaml["nc"]),
                        "names": [module.names[i] for i in range(len(module.names))]})

    segment_data = _yolo_segment_dataset(segment_json, segment_images, out)
    data = {"detect": detect_data, "pose": pose_data, "segment": segment_data, "obb": obb_data}
    for task, data_yaml in data.items():
        name = f"yolo26n{TASK_SUFFIX[task]}"
        yolo = YOLO(f"{name}.yaml")
        yolo.train(data=data_yaml, epochs=1, imgsz=32, batch=4, workers=0, device="cpu", plots=False,
                   project=str(out), name=f"train-{task}", exist_ok=True, amp=False, verbose=False,
                   save_period=1 if task == "detect" else -1, mosaic=0.0, seed=0,
                   single_cls=task == "detect")
        weights = out / f"train-{task}" / "weights"
        kept = [("best.pt", f"trained-{task}.pt")] + ([("epoch0.pt", "midtraining-detect.pt")] if task == "detect" else [])
        for src, dst in kept:
            (out / dst).write_bytes((weights / src).read_bytes())
            module = torch.load(out / dst, map_location="cpu", weights_only=False)
            add(out / dst, task, name, module.get("ema") or module["model"])
    for family in ("yolo26n", "yolo11n"):
        for task in data:
            name = f"{family}{TASK_SUFFIX[task]}"
            model = YOLO(f"{name}.yaml").model
            file = out / f"untrained-{name}.pt"
            _save_untrained(model, task, f"{name}.yaml", file)
            add(file, task, name, model)
    write_json(out / "checkpoints.json", listing)


def cmd_transfer(out_dir, combos_file):
    """8.4.190's fine-tuning transfer, as its trainer does it: the target model built for the new
    classes, the dataset's names set before loading when cls_remap (set_model_names_for_load),
    then DetectionModel.load(load_checkpoint(source)). COMBOS_FILE: [{"id", "source", "target"
    (a model yaml, or null for the source's own), "task", "nc", "names", "cls_remap",
    "kpt_shape"}]. Each target is built twice (seeds 0 and 1): elements that differ are the
    random initialisation. Writes OUT_DIR/transfer.json: per id the logged counts, every key's
    shape (state_dict() order), the keys equal to the source's own, the keys wholly random, and
    OUT_DIR/transfer-ID.pt: every other tensor with NaN at its random elements."""
    import logging
    import re
    from copy import deepcopy

    from ultralytics.nn.tasks import OBBModel, PoseModel, SegmentationModel, load_checkpoint
    from ultralytics.utils import LOGGER

    class Capture(logging.Handler):
        def __init__(self):
            super().__init__()
            self.lines = []

        def emit(self, record):
            self.lines.append(record.getMessage())

    out = Path(out_dir)
    results = {}
    for c in json.loads(Path(combos_file).read_text()):
        source, _ = load_checkpoint(c["source"])
        csd = source.state_dict()
        states, lines = [], []
        for seed in (0, 1):
            torch.manual_seed(seed)
            cfg = c["target"] or deepcopy(source.yaml)
            task = c["task"]
            if task == "pose":
                model = PoseModel(cfg, nc=c["nc"], data_kpt_shape=tuple(c["kpt_shape"]), verbose=False)
            else:
                model = {"detect": DetectionModel, "segment": SegmentationModel, "obb": OBBModel}[task](
                    cfg, nc=c["nc"], verbose=False)
            if c["cls_remap"]:
                model.names = dict(enumerate(c["names"]))
            capture = Capture()
            level = LOGGER.level
            LOGGER.addHandler(capture)
            LOGGER.setLevel(logging.INFO)  # the oracle's runs may be quiet (YOLO_VERBOSE=False)
            try:
                model.load(source)
            finally:
                LOGGER.removeHandler(capture)
                LOGGER.setLevel(level)
            lines = capture.lines
            states.append({k: v.detach().clone() for k, v in model.state_dict().items()})
        text = "\n".join(lines)
        transferred = re.search(r"Transferred (\d+)/(\d+) items", text)
        remapped = re.search(r"Remapped (\d+)/(\d+) cls head rows", text)
        entry = {"transferred": int(transferred[1]), "total": int(transferred[2]),
                 "matched": int(remapped[1]) if remapped else 0, "keys": [], "shapes": [],
                 "from_source": [], "random": []}
        saved = {}
        for k, a in states[0].items():
            b = states[1][k]
            entry["keys"].append(k)
            entry["shapes"].append(list(a.shape))
            src = csd.get(k)
            if src is not None and src.shape == a.shape and torch.equal(a, src.to(a.dtype)):
                entry["from_source"].append(k)
            elif not a.is_floating_point():
                saved[k] = a.contiguous()
            elif bool((a != b).all()) and a.numel() > 0:
                entry["random"].append(k)
            else:
                saved[k] = torch.where(a == b, a, torch.full_like(a, float("nan"))).float().contiguous()
        torch.save(saved, out / f"transfer-{c['id']}.pt")
        results[c["id"]] = entry
    write_json(out / "transfer.json", results)


def cmd_val_checkpoint(out_dir, ckpt, data_yaml, imgsz, batch, *overrides):
    """The reference's standalone validation of its own checkpoint file (KEY=VALUE overrides, e.g.
    conf). Writes OUT_DIR/val/predictions.json and OUT_DIR/val.json (box metrics)."""
    from ultralytics import YOLO
    import yaml

    kwargs = {k: yaml.safe_load(v) for k, v in (o.split("=", 1) for o in overrides)}
    metrics = YOLO(ckpt).val(data=data_yaml, imgsz=int(imgsz), batch=int(batch), device="cpu", save_json=True,
                             plots=False, project=str(out_dir), name="val", exist_ok=True, workers=0,
                             verbose=False, **kwargs)
    box = metrics.box
    write_json(Path(out_dir) / "val.json", {"precision": float(box.mp), "recall": float(box.mr),
                                             "map50": float(box.map50), "map50_95": float(box.map)})


def main():
    assert ultralytics.__version__ == "8.4.190", ultralytics.__version__
    command, *args = sys.argv[1:]
    {"placement": cmd_placement, "val": cmd_val, "predict": cmd_predict, "schedule": cmd_schedule, "head": cmd_head,
     "loss": cmd_loss, "optim": cmd_optim, "metric": cmd_metric, "checkpoint": cmd_checkpoint,
     "realnvp": cmd_realnvp, "pose_loss": cmd_pose_loss, "pose_head": cmd_pose_head,
     "seg_head": cmd_seg_head, "seg_loss": cmd_seg_loss, "reference_checkpoints": cmd_reference_checkpoints,
     "val_checkpoint": cmd_val_checkpoint, "transfer": cmd_transfer, "default_cfg": cmd_default_cfg, "train_args": cmd_train_args}[command](*args)


if __name__ == "__main__":
    main()
