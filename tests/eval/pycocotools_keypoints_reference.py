"""A person-keypoints ground truth, keypoint result sets made from it, and pycocotools' OKS stats.

Why: `trainer eval --iou-type keypoints` (and the pose validator) must give pycocotools'
COCOeval(iouType='keypoints') numbers. This script writes a deterministic ground truth with the
cases the protocol treats specially (people of every area range, points labelled 0/1/2, people
with no labelled point and crowd regions, both ignored) and result sets that exercise it (exact,
perturbed, keypoints without a box, misses and false positives, duplicates, tied shuffled scores,
more than 20 people in an image, detections on unlabelled people), then pycocotools' 10 stats for
each. test_pycocotools.cpp evaluates the same files and compares.

Usage: pycocotools_keypoints_reference.py OUT_DIR [K]
       (writes OUT_DIR/gt.json, OUT_DIR/<set>.json and OUT_DIR/stats.json). With K other than 17
       (a non-COCO skeleton), every point's sigma is 1/K, set as params.kpt_oks_sigmas.
"""
import contextlib
import io
import json
import os
import sys

import numpy as np
from pycocotools.coco import COCO
from pycocotools.cocoeval import COCOeval

K = int(sys.argv[2]) if len(sys.argv) > 2 else 17


def ground_truth(rng):
    images, anns = [], []
    for i in range(1, 13):
        w, h = int(rng.integers(320, 640)), int(rng.integers(240, 480))
        images.append({"id": i, "file_name": f"{i:012d}.jpg", "width": w, "height": h})
        people = 24 if i == 12 else int(rng.integers(0, 7))
        for _ in range(people):
            side = float(rng.choice([rng.uniform(8, 30), rng.uniform(35, 95), rng.uniform(100, 220)]))
            bw, bh = side * rng.uniform(0.5, 1.0), side
            x, y = rng.uniform(0, w - bw), rng.uniform(0, h - bh)
            v = rng.choice([0, 1, 2], size=K, p=[0.3, 0.2, 0.5])
            if rng.uniform() < 0.12:
                v[:] = 0  # no labelled point: ignored by the protocol
            kx, ky = x + rng.uniform(0, bw, K), y + rng.uniform(0, bh, K)
            kp = np.stack([np.where(v > 0, kx, 0), np.where(v > 0, ky, 0), v], 1).ravel()
            crowd = int(rng.uniform() < 0.05)
            anns.append({"id": len(anns) + 1, "image_id": i, "category_id": 1,
                         "bbox": [x, y, bw, bh], "area": bw * bh * rng.uniform(0.5, 0.8),
                         "iscrowd": crowd, "num_keypoints": 0 if crowd else int((v > 0).sum()),
                         "keypoints": [float(t) for t in kp]})
    cats = [{"id": 1, "name": "person", "supercategory": "person",
             "keypoints": [f"k{j}" for j in range(K)], "skeleton": []}]
    return {"images": images, "annotations": anns, "categories": cats}


def result_sets(gt, rng):
    anns = [a for a in gt["annotations"] if not a["iscrowd"]]
    sizes = {im["id"]: (im["width"], im["height"]) for im in gt["images"]}

    def res(a, noise, score, with_box=True):
        x, y, w, h = a["bbox"]
        g = np.array(a["keypoints"]).reshape(K, 3)
        # Unlabelled points are guessed inside the box.
        gx = np.where(g[:, 2] > 0, g[:, 0], x + rng.uniform(0, w, K))
        gy = np.where(g[:, 2] > 0, g[:, 1], y + rng.uniform(0, h, K))
        s = np.sqrt(w * h) * noise
        kp = np.stack([gx + rng.normal(0, s, K), gy + rng.normal(0, s, K), rng.uniform(0, 1, K)], 1)
        r = {"image_id": a["image_id"], "category_id": 1, "score": float(score),
             "keypoints": [float(t) for t in kp.ravel()]}
        if with_box:
            r["bbox"] = [float(t) for t in jitter_box(a["bbox"], noise)]
        return r

    def jitter_box(b, noise):
        x, y, w, h = b
        d = rng.normal(0, noise, 4)
        return [x + d[0] * w, y + d[1] * h, max(0.0, w * (1 + d[2])), max(0.0, h * (1 + d[3]))]

    def random_person(image_id):
        w, h = sizes[image_id]
        side = rng.uniform(10, 200)
        x, y = rng.uniform(0, w - side / 2), rng.uniform(0, h - side)
        kp = np.stack([x + rng.uniform(0, side / 2, K), y + rng.uniform(0, side, K),
                       rng.uniform(0, 1, K)], 1)
        return {"image_id": image_id, "category_id": 1, "score": float(rng.uniform()),
                "bbox": [x, y, side / 2, side], "keypoints": [float(t) for t in kp.ravel()]}

    sets = {}
    sets["exact"] = [res(a, 0.0, rng.uniform()) for a in anns]
    sets["perturbed"] = [res(a, 0.06, rng.uniform()) for a in anns]
    sets["keypoints_only"] = [res(a, 0.05, rng.uniform(), with_box=False) for a in anns]
    sets["misses_and_false"] = [res(a, 0.05, rng.uniform()) for a in anns if rng.uniform() > 0.3]
    sets["misses_and_false"] += [random_person(int(rng.integers(1, 13))) for _ in range(30)]
    sets["duplicates"] = [res(a, 0.04, rng.uniform()) for a in anns
                          for _ in range(int(rng.integers(1, 4)))]
    tied = [res(a, 0.05, np.round(rng.uniform(), 1)) for a in anns]
    rng.shuffle(tied)
    sets["tied_shuffled"] = tied
    crowded = [a for a in gt["annotations"] if a["image_id"] == 12]
    sets["over_max_dets"] = [res(a, 0.03, rng.uniform()) for a in crowded for _ in range(2)]
    unlabelled = [a for a in gt["annotations"] if a["num_keypoints"] == 0]
    sets["on_unlabelled"] = [res(a, 0.1, rng.uniform()) for a in unlabelled] + sets["perturbed"]
    return sets


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    rng = np.random.default_rng(17)
    gt = ground_truth(rng)
    with open(os.path.join(out, "gt.json"), "w") as f:
        json.dump(gt, f)
    with contextlib.redirect_stdout(io.StringIO()):
        coco = COCO(os.path.join(out, "gt.json"))
    stats = {}
    for name, results in result_sets(gt, rng).items():
        path = os.path.join(out, name + ".json")
        with open(path, "w") as f:
            json.dump(results, f)
        with contextlib.redirect_stdout(io.StringIO()):
            ev = COCOeval(coco, coco.loadRes(path), "keypoints")
            if K != 17:
                ev.params.kpt_oks_sigmas = np.full(K, 1.0 / K)
            ev.evaluate()
            ev.accumulate()
            ev.summarize()
        stats[name] = [float(s) for s in ev.stats]
    with open(os.path.join(out, "stats.json"), "w") as f:
        json.dump(stats, f, indent=1)


if __name__ == "__main__":
    main()
