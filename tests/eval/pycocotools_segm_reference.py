"""Mask result sets made from a COCO ground-truth file, pycocotools' segm stats on each, and
pycocotools' own RLEs of the file's polygons and of random shapes.

Why: the C++ evaluator's iouType='segm' and its RLE code must agree with pycocotools exactly. This
script writes (into OUT_DIR):
- rle.json: for every annotation, annToRLE's compressed string, area and toBbox (polygons
  rasterised and merged; crowd RLEs converted), the string of each polygon alone, and random
  polygons (outside the image, negative, repeated points, slivers), masks (encode), merges and
  IoU matrices with crowd flags, with pycocotools' answers;
- <set>.json: deterministic mask result sets (GT masks exactly, perturbed masks, shifted
  polygons, misses, duplicates, false positives, empty masks, fragments on crowd regions, over
  100 results an image, box-only results, polygon results, files without "bbox" whose areas come
  from the masks) and stats.json with COCOeval(iouType='segm')'s 12 stats of each.
test_pycocotools_segm.cpp reads the same files and compares.

Usage: pycocotools_segm_reference.py GT_JSON OUT_DIR [rle|sets|all]
(rle: rle.json only, a fraction of a second; sets: the result sets and stats.json, ~15 s.)
"""
import contextlib
import io
import json
import os
import sys

import numpy as np
from pycocotools import _mask
from pycocotools import mask as mask_utils
from pycocotools.coco import COCO
from pycocotools.cocoeval import COCOeval


def text(rle):
    counts = rle["counts"]
    return counts.decode("ascii") if isinstance(counts, bytes) else counts


def rle_entry(rle):
    return {"size": [int(v) for v in rle["size"]], "counts": text(rle)}


def encode(mask):
    return mask_utils.encode(np.asfortranarray(mask.astype(np.uint8)))


def shift(mask, dx, dy):
    out = np.zeros_like(mask)
    h, w = mask.shape
    xs, xd = (0, dx) if dx >= 0 else (-dx, 0)
    ys, yd = (0, dy) if dy >= 0 else (-dy, 0)
    cw, ch = w - abs(dx), h - abs(dy)
    if cw > 0 and ch > 0:
        out[yd:yd + ch, xd:xd + cw] = mask[ys:ys + ch, xs:xs + cw]
    return out


def grow(mask, steps):
    """Dilates (steps > 0) or erodes (steps < 0) by a 4-neighbourhood, |steps| times."""
    m = mask.astype(bool)
    for _ in range(abs(steps)):
        n = [shift(m, 1, 0), shift(m, -1, 0), shift(m, 0, 1), shift(m, 0, -1)]
        m = (m | n[0] | n[1] | n[2] | n[3]) if steps > 0 else (m & n[0] & n[1] & n[2] & n[3])
    return m.astype(np.uint8)


def rle_reference(coco, rng):
    """pycocotools' RLEs of the file's annotations and of random shapes."""
    out = {"annotations": [], "polygons": [], "masks": [], "merges": [], "ious": []}
    for ann in coco.dataset["annotations"]:
        img = coco.imgs[ann["image_id"]]
        h, w = img["height"], img["width"]
        rle = coco.annToRLE(ann)
        entry = {"id": ann["id"], "rle": rle_entry(rle), "area": int(mask_utils.area(rle)),
                 "bbox": [float(v) for v in mask_utils.toBbox(rle)]}
        segm = ann["segmentation"]
        if isinstance(segm, list):
            entry["parts"] = [text(r) for r in mask_utils.frPyObjects(segm, h, w)]
        out["annotations"].append(entry)
    # Random polygons: inside, partly or wholly outside, negative, repeated points, slivers,
    # sub-pixel shapes and many-sided stars, on small and odd image sizes.
    for i in range(600):
        h, w = int(rng.integers(1, 90)), int(rng.integers(1, 90))
        k = int(rng.integers(1, 14))
        kind = i % 6
        if kind == 0:
            xy = rng.uniform(-10, max(w, h) + 10, 2 * k)
        elif kind == 1:
            xy = rng.uniform(0, 3, 2 * k)  # sub-pixel
        elif kind == 2:
            xy = np.round(rng.uniform(0, w, 2 * k), 1)
            if k > 1:
                xy[2:4] = xy[0:2]  # a repeated point
        elif kind == 3:
            xy = np.round(rng.uniform(-w, 2 * w, 2 * k)) + 0.5 * rng.integers(0, 2, 2 * k)
        elif kind == 4:  # a star around a centre
            t = np.sort(rng.uniform(0, 2 * np.pi, k + 2))
            r = rng.uniform(1, max(w, h) / 2, k + 2)
            cx, cy = rng.uniform(0, w), rng.uniform(0, h)
            xy = np.stack([cx + r * np.cos(t), cy + r * np.sin(t)], 1).ravel()
        else:  # thin slivers
            x0, y0 = rng.uniform(0, w), rng.uniform(0, h)
            xy = np.array([x0, y0, x0 + rng.uniform(-20, 20), y0 + rng.uniform(-0.3, 0.3),
                           x0 + rng.uniform(-20, 20), y0 + rng.uniform(-0.3, 0.3)])
        xy = [float(v) for v in xy]
        rle = _mask.frPoly([xy], h, w)[0]  # any point count (frPyObjects reads 2 points as a box)
        out["polygons"].append({"h": h, "w": w, "xy": xy, "counts": text(rle),
                                "area": int(mask_utils.area(rle)),
                                "bbox": [float(v) for v in mask_utils.toBbox(rle)]})
    # Random masks: encode (row-major bytes here), toBbox, area.
    for i in range(200):
        h, w = int(rng.integers(1, 40)), int(rng.integers(1, 40))
        p = [0.02, 0.5, 0.98][i % 3]
        m = (rng.uniform(size=(h, w)) < p).astype(np.uint8)
        if i % 7 == 0:
            m[:] = 0
        rle = encode(m)
        out["masks"].append({"h": h, "w": w, "mask": [int(v) for v in m.ravel()],
                             "counts": text(rle), "area": int(mask_utils.area(rle)),
                             "bbox": [float(v) for v in mask_utils.toBbox(rle)]})
    # Merges (union and intersection) and IoU matrices with crowd flags on shared sizes.
    for i in range(200):
        h, w = int(rng.integers(2, 50)), int(rng.integers(2, 50))
        n = int(rng.integers(1, 5))
        rles = []
        for _ in range(n + 3):
            m = np.zeros((h, w), np.uint8)
            x0, y0 = int(rng.integers(0, w)), int(rng.integers(0, h))
            m[y0:y0 + int(rng.integers(0, h)), x0:x0 + int(rng.integers(0, w))] = 1
            if rng.uniform() < 0.5:
                m &= (rng.uniform(size=(h, w)) < 0.8).astype(np.uint8)
            rles.append(encode(m))
        intersect = int(i % 2)
        merged = mask_utils.merge(rles[:n], intersect=intersect)
        out["merges"].append({"h": h, "w": w, "counts": [text(r) for r in rles[:n]],
                              "intersect": intersect, "merged": text(merged)})
        dt, gt = rles[:n], rles[n:]
        crowd = [int(v) for v in rng.integers(0, 2, len(gt))]
        iou = mask_utils.iou(dt, gt, crowd)
        out["ious"].append({"h": h, "w": w, "dt": [text(r) for r in dt], "gt": [text(r) for r in gt],
                            "crowd": crowd, "iou": [float(v) for v in np.asarray(iou).ravel()]})
    return out


def result_sets(coco, rng):
    anns = [a for a in coco.dataset["annotations"] if not a.get("iscrowd", 0)]
    crowd = [a for a in coco.dataset["annotations"] if a.get("iscrowd", 0)]
    images = coco.dataset["images"]
    cats = sorted(coco.getCatIds())
    present = sorted({a["category_id"] for a in anns})

    def size(image_id):
        img = coco.imgs[image_id]
        return img["height"], img["width"]

    def mask_of(a):
        return mask_utils.decode(coco.annToRLE(a))

    def det(image_id, category_id, rle, score, bbox=True):
        d = {"image_id": image_id, "category_id": category_id,
             "segmentation": rle_entry(rle), "score": float(score)}
        if bbox:  # as the reference writes them: the mask's box
            d["bbox"] = [float(v) for v in mask_utils.toBbox(rle)]
        return d

    def perturbed(a, strength=1.0):
        m = mask_of(a)
        x, y, w, h = a["bbox"]
        dx = int(round(rng.normal(0, 0.06 * strength) * max(w, 1)))
        dy = int(round(rng.normal(0, 0.06 * strength) * max(h, 1)))
        m = grow(shift(m, dx, dy), int(rng.integers(-2, 3)))
        return encode(m)

    def shifted_polygons(a):
        h, w = size(a["image_id"])
        dx, dy = rng.normal(0, 3, 2)
        segm = a["segmentation"]
        polys = [[v + (dx if j % 2 == 0 else dy) for j, v in enumerate(p)] for p in segm]
        return mask_utils.merge(mask_utils.frPyObjects(polys, h, w))

    def random_mask(image_id):
        h, w = size(image_id)
        k = int(rng.integers(3, 9))
        cx, cy = rng.uniform(0, w), rng.uniform(0, h)
        r = rng.uniform(3, min(w, h) / 3, k)
        t = np.sort(rng.uniform(0, 2 * np.pi, k))
        xy = np.stack([cx + r * np.cos(t), cy + r * np.sin(t)], 1).ravel().tolist()
        return mask_utils.frPyObjects([xy], h, w)[0]

    sets = {}
    sets["exact"] = [det(a["image_id"], a["category_id"], coco.annToRLE(a), rng.uniform())
                     for a in anns]
    sets["perturbed"] = [det(a["image_id"], a["category_id"], perturbed(a), rng.uniform())
                         for a in anns]
    # No "bbox" in the file: loadRes' segmentation branch (areas from the masks, boxes by toBbox).
    sets["shifted_polygons_no_bbox"] = [
        det(a["image_id"], a["category_id"], shifted_polygons(a), rng.uniform(), bbox=False)
        for a in anns if isinstance(a["segmentation"], list)]
    tied = [det(a["image_id"], a["category_id"], perturbed(a, 0.5), np.round(rng.uniform(), 1))
            for a in anns]
    rng.shuffle(tied)
    sets["tied_shuffled"] = tied
    sets["misses"] = [det(a["image_id"], a["category_id"], perturbed(a), rng.uniform())
                      for a in anns if rng.uniform() > 0.35]
    dup = []
    for a in anns:
        for _ in range(rng.integers(1, 4)):
            dup.append(det(a["image_id"], a["category_id"], perturbed(a, 0.7), rng.uniform()))
    sets["duplicates"] = dup
    fps = [det(a["image_id"], a["category_id"], perturbed(a), rng.uniform()) for a in anns]
    for im in images:
        for _ in range(rng.integers(0, 8)):
            fps.append(det(im["id"], int(rng.choice(cats)), random_mask(im["id"]), rng.uniform()))
    for a in anns[::5]:  # a wrong class on a real object
        fps.append(det(a["image_id"], int(rng.choice(cats)), coco.annToRLE(a), rng.uniform()))
    sets["false_positives"] = fps
    # Empty masks (all background; a zero box [0, 0, 0, 0]) among real ones, with and without box.
    empties = [det(a["image_id"], a["category_id"], perturbed(a), rng.uniform()) for a in anns]
    for a in anns[::3]:
        h, w = size(a["image_id"])
        empties.append(det(a["image_id"], a["category_id"], encode(np.zeros((h, w), np.uint8)),
                           rng.uniform()))
    sets["empty_masks"] = empties
    sets["empty_masks_no_bbox"] = [{k: v for k, v in d.items() if k != "bbox"} for d in empties]
    # Fragments of crowd regions, scored high, plus the real objects.
    on_crowd = [det(a["image_id"], a["category_id"], perturbed(a), rng.uniform()) for a in anns]
    for c in crowd:
        m = mask_of(c)
        ys, xs = np.nonzero(m)
        for _ in range(6):
            if len(xs) == 0:
                break
            i = int(rng.integers(0, len(xs)))
            rw, rh = int(rng.integers(2, 40)), int(rng.integers(2, 40))
            frag = np.zeros_like(m)
            frag[max(0, ys[i] - rh):ys[i] + rh, max(0, xs[i] - rw):xs[i] + rw] = 1
            if rng.uniform() < 0.7:
                frag &= m
            on_crowd.append(det(c["image_id"], c["category_id"], encode(frag),
                                rng.uniform(0.5, 1.0)))
    sets["crowd"] = on_crowd
    # Over 100 results in some images (the maxDets cut).
    many = [det(a["image_id"], a["category_id"], perturbed(a), rng.uniform()) for a in anns]
    for im in images[:5]:
        for _ in range(130):
            many.append(det(im["id"], int(rng.choice(present[:3])), random_mask(im["id"]),
                            rng.uniform()))
    sets["over_max_dets"] = many
    # Box results (no mask): loadRes gives each the polygon of its box.
    sets["box_only"] = [{"image_id": a["image_id"], "category_id": a["category_id"],
                         "bbox": [float(v) for v in a["bbox"]], "score": float(rng.uniform())}
                        for a in anns]
    # Polygon results with boxes (annToRLE rasterises them in the image's size).
    sets["polygon_results"] = [
        {"image_id": a["image_id"], "category_id": a["category_id"],
         "segmentation": [[v + rng.normal(0, 1.5) for v in p] for p in a["segmentation"]],
         "bbox": [float(v) for v in a["bbox"]], "score": float(rng.uniform())}
        for a in anns if isinstance(a["segmentation"], list)]
    # Everything at once, in a random order.
    mixed = [d for name in ("perturbed", "duplicates", "false_positives", "crowd", "empty_masks")
             for d in sets[name]]
    rng.shuffle(mixed)
    sets["mixed"] = mixed
    return sets


def coco_stats(coco_gt, dets):
    with contextlib.redirect_stdout(io.StringIO()):
        coco_dt = coco_gt.loadRes(dets)
        e = COCOeval(coco_gt, coco_dt, "segm")
        e.evaluate()
        e.accumulate()
        e.summarize()
    return [float(s) for s in e.stats]


def main():
    gt_path, out_dir = sys.argv[1], sys.argv[2]
    part = sys.argv[3] if len(sys.argv) > 3 else "all"  # rle | sets | all
    os.makedirs(out_dir, exist_ok=True)
    with contextlib.redirect_stdout(io.StringIO()):
        coco_gt = COCO(gt_path)
    rng = np.random.default_rng(7)
    rles = rle_reference(coco_gt, rng)  # always drawn: the result sets continue its random stream
    if part in ("rle", "all"):
        with open(os.path.join(out_dir, "rle.json"), "w") as f:
            json.dump(rles, f)
    if part not in ("sets", "all"):
        return
    stats = {}
    for name, dets in result_sets(coco_gt, rng).items():
        with open(os.path.join(out_dir, name + ".json"), "w") as f:
            json.dump(dets, f)
        # loadRes and annToRLE modify the dicts; give them copies.
        stats[name] = coco_stats(coco_gt, json.loads(json.dumps(dets)))
    with open(os.path.join(out_dir, "stats.json"), "w") as f:
        json.dump(stats, f, indent=1)

if __name__ == "__main__":
    main()
