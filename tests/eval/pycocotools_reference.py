"""Detection sets made from a COCO ground-truth file, and pycocotools' stats on each of them.

Why: the C++ evaluator must agree with pycocotools on every one of the 12 stats; this script
writes deterministic detection sets that exercise the protocol (perturbed boxes, tied and
shuffled scores, misses, duplicates, false positives, empty images, a category with no detections,
detections on crowd regions, more than 100 detections in an image) and the stats pycocotools gives
for each. test_pycocotools.cpp evaluates the same files and compares.

Usage: pycocotools_reference.py GT_JSON OUT_DIR   (writes OUT_DIR/<set>.json and OUT_DIR/stats.json)
"""
import contextlib
import io
import json
import os
import sys

import numpy as np
from pycocotools.coco import COCO
from pycocotools.cocoeval import COCOeval


def jitter(rng, bbox, scale):
    x, y, w, h = bbox
    dx, dy, dw, dh = rng.normal(0.0, scale, 4)
    return [x + dx * w, y + dy * h, max(0.0, w * (1 + dw)), max(0.0, h * (1 + dh))]


def detection_sets(gt, seed=6):
    rng = np.random.default_rng(seed)
    anns = [a for a in gt["annotations"] if not a.get("iscrowd", 0)]
    crowd = [a for a in gt["annotations"] if a.get("iscrowd", 0)]
    images = gt["images"]
    cats = [c["id"] for c in gt["categories"]]
    sizes = {im["id"]: (im["width"], im["height"]) for im in images}
    present = sorted({a["category_id"] for a in anns})

    def det(a, bbox, score, category=None):
        return {"image_id": a["image_id"], "category_id": category or a["category_id"],
                "bbox": [float(v) for v in bbox], "score": float(score)}

    def random_box(image_id):
        w, h = sizes[image_id]
        bw, bh = rng.uniform(2, w / 2), rng.uniform(2, h / 2)
        return [rng.uniform(0, w - bw), rng.uniform(0, h - bh), bw, bh]

    sets = {}
    sets["exact"] = [det(a, a["bbox"], rng.uniform()) for a in anns]
    sets["perturbed"] = [det(a, jitter(rng, a["bbox"], 0.08), rng.uniform()) for a in anns]
    # Scores with one decimal: many ties, resolved by input order within an image.
    tied = [det(a, jitter(rng, a["bbox"], 0.05), np.round(rng.uniform(), 1)) for a in anns]
    rng.shuffle(tied)
    sets["tied_shuffled"] = tied
    sets["misses"] = [det(a, jitter(rng, a["bbox"], 0.05), rng.uniform())
                      for a in anns if rng.uniform() > 0.35]
    dup = []
    for a in anns:
        for _ in range(rng.integers(1, 4)):
            dup.append(det(a, jitter(rng, a["bbox"], 0.04), rng.uniform()))
    sets["duplicates"] = dup
    fps = [det(a, jitter(rng, a["bbox"], 0.06), rng.uniform()) for a in anns]
    for im in images:
        for _ in range(rng.integers(0, 8)):
            fps.append({"image_id": im["id"], "category_id": int(rng.choice(cats)),
                        "bbox": [float(v) for v in random_box(im["id"])], "score": float(rng.uniform())})
    # Wrong class on a real object.
    for a in anns[::5]:
        fps.append(det(a, a["bbox"], rng.uniform(), category=int(rng.choice(cats))))
    sets["false_positives"] = fps
    # A third of the images get no detections at all.
    empty = {im["id"] for im in images if rng.uniform() < 0.33}
    sets["empty_images"] = [det(a, jitter(rng, a["bbox"], 0.05), rng.uniform())
                            for a in anns if a["image_id"] not in empty]
    # The most frequent category is never detected; another is detected only by false positives.
    dropped = max(present, key=lambda c: sum(a["category_id"] == c for a in anns))
    sets["category_missing"] = [det(a, jitter(rng, a["bbox"], 0.05), rng.uniform())
                                for a in anns if a["category_id"] != dropped]
    # Fragments inside crowd regions, scored high, plus the real objects.
    on_crowd = [det(a, jitter(rng, a["bbox"], 0.05), rng.uniform()) for a in anns]
    for c in crowd:
        x, y, w, h = c["bbox"]
        for _ in range(6):
            fw, fh = rng.uniform(0.05, 0.5) * w, rng.uniform(0.05, 0.5) * h
            box = [x + rng.uniform(0, w - fw), y + rng.uniform(0, h - fh), fw, fh]
            on_crowd.append(det(c, box, rng.uniform(0.5, 1.0)))
    sets["crowd"] = on_crowd
    # Over 100 detections in some images (maxDets cut), degenerate boxes (zero width, outside).
    crowded = [det(a, jitter(rng, a["bbox"], 0.1), rng.uniform()) for a in anns]
    for im in images[:6]:
        for _ in range(130):
            crowded.append({"image_id": im["id"], "category_id": int(rng.choice(present[:3])),
                            "bbox": [float(v) for v in random_box(im["id"])],
                            "score": float(rng.uniform())})
    for a in anns[:20]:
        x, y, w, h = a["bbox"]
        crowded.append(det(a, [x, y, 0.0, h], rng.uniform()))
        crowded.append(det(a, [x - 5000, y, w, h], rng.uniform()))
    sets["over_max_dets"] = crowded
    # Inverted boxes (x2 < x1 or y2 < y1 written as a negative width or height), as YOLO26's raw
    # side distances can produce and the reference writes them: pycocotools scores them as given
    # (bbIou with the signed sizes, area = w * h for the area ranges).
    inverted = []
    for a in anns:
        x, y, w, h = jitter(rng, a["bbox"], 0.05)
        kind = rng.integers(0, 4)
        if kind == 1:
            x, w = x + w, -w
        elif kind == 2:
            y, h = y + h, -h
        elif kind == 3:
            x, w, y, h = x + w, -w, y + h, -h
        inverted.append(det(a, [x, y, w, h], rng.uniform()))
    sets["inverted"] = inverted
    # Everything at once, in a random order.
    mixed = [d for name in ("perturbed", "duplicates", "false_positives", "crowd") for d in sets[name]]
    rng.shuffle(mixed)
    sets["mixed"] = mixed
    return sets


def coco_stats(coco_gt, dets):
    with contextlib.redirect_stdout(io.StringIO()):
        coco_dt = coco_gt.loadRes(dets)
        e = COCOeval(coco_gt, coco_dt, "bbox")
        e.evaluate()
        e.accumulate()
        e.summarize()
    return [float(s) for s in e.stats]


def main():
    gt_path, out_dir = sys.argv[1], sys.argv[2]
    os.makedirs(out_dir, exist_ok=True)
    with open(gt_path) as f:
        gt = json.load(f)
    with contextlib.redirect_stdout(io.StringIO()):
        coco_gt = COCO(gt_path)
    stats = {}
    for name, dets in detection_sets(gt).items():
        with open(os.path.join(out_dir, name + ".json"), "w") as f:
            json.dump(dets, f)
        # loadRes modifies the dicts (adds area, id, ...); give it copies.
        stats[name] = coco_stats(coco_gt, [dict(d) for d in dets])
    with open(os.path.join(out_dir, "stats.json"), "w") as f:
        json.dump(stats, f, indent=1)


if __name__ == "__main__":
    main()
