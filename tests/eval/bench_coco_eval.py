"""Benchmark: `trainer eval` against pycocotools on a COCO val2017-sized synthetic input.

Generates (deterministically, no download) a ground truth of 5,000 images, the 80 COCO categories
and about 36,000 annotations (about 1% crowd regions, segmentation-like areas), and a results file
of up to 100 detections per image (500,000): jittered copies of the objects, duplicates, wrong
classes and random false positives. Times `trainer eval` (wall time of the command, and the
evaluation time it reports) and pycocotools (loadRes, evaluate, accumulate, summarize), checks that
the 12 stats agree, and prints one JSON object with wall and CPU seconds (on a shared machine the
CPU seconds are the comparable numbers; the 1-minute load average is printed beside them).

With --iou-type segm the objects are polygons (star-shaped, 6 to 20 corners; areas are their
masks'), the crowd regions uncompressed RLE, and the results masks as compressed RLE (with a
box, as the reference writes them): jittered, rescaled copies of the objects' polygons and
random polygons, rasterised by pycocotools.mask.frPyObjects; scored by COCOeval(iouType='segm').

Usage: bench_coco_eval.py --trainer build/app/trainer [--iou-type bbox|segm] [--dir DIR]
                          [--images N] [--dets-per-image N] [--threads N] [--skip-pycocotools]
"""
import argparse
import contextlib
import io
import json
import os
import resource
import subprocess
import tempfile
import time

import numpy as np

COCO_IDS = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25,
            27, 28, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44, 46, 47, 48, 49, 50, 51,
            52, 53, 54, 55, 56, 57, 58, 59, 60, 61, 62, 63, 64, 65, 67, 70, 72, 73, 74, 75, 76, 77,
            78, 79, 80, 81, 82, 84, 85, 86, 87, 88, 89, 90]


def generate(gt_path, dets_path, num_images, dets_per_image, seed):
    rng = np.random.default_rng(seed)
    # Category frequencies skewed like COCO (person ~ a quarter of the objects).
    weights = 1.0 / np.arange(1, 81) ** 0.9
    weights[0] *= 6
    weights /= weights.sum()
    images, anns, dets = [], [], []
    ann_id = 1
    for i in range(num_images):
        image_id = 100000 + i * 7
        w, h = int(rng.integers(320, 641)), int(rng.integers(240, 481))
        images.append({"id": image_id, "file_name": f"{image_id:012d}.jpg", "width": w, "height": h})
        objects = []
        for _ in range(int(rng.poisson(7.3))):
            # Box sizes spread over small / medium / large (log-uniform side lengths).
            bw = float(np.exp(rng.uniform(np.log(4), np.log(w * 0.9))))
            bh = float(np.clip(bw * np.exp(rng.normal(0, 0.5)), 2, h * 0.95))
            x, y = float(rng.uniform(0, w - bw)), float(rng.uniform(0, max(1.0, h - bh)))
            cat = int(rng.choice(COCO_IDS, p=weights))
            crowd = int(rng.uniform() < 0.01)
            anns.append({"id": ann_id, "image_id": image_id, "category_id": cat,
                         "bbox": [round(x, 2), round(y, 2), round(bw, 2), round(bh, 2)],
                         "area": round(bw * bh * float(rng.uniform(0.4, 0.9)), 2), "iscrowd": crowd})
            objects.append(anns[-1])
            ann_id += 1
        image_dets = []
        for a in objects:
            x, y, bw, bh = a["bbox"]
            for _ in range(int(rng.integers(0, 4))):  # misses, hits, duplicates
                dx, dy, dw, dh = rng.normal(0, 0.08, 4)
                cat = a["category_id"] if rng.uniform() > 0.1 else int(rng.choice(COCO_IDS))
                image_dets.append([x + dx * bw, y + dy * bh, bw * (1 + dw), bh * (1 + dh), cat])
        while len(image_dets) < dets_per_image:
            bw, bh = float(rng.uniform(4, w / 2)), float(rng.uniform(4, h / 2))
            image_dets.append([float(rng.uniform(0, w - bw)), float(rng.uniform(0, h - bh)), bw, bh,
                               int(rng.choice(COCO_IDS, p=weights))])
        for x, y, bw, bh, cat in image_dets[:dets_per_image]:
            dets.append({"image_id": image_id, "category_id": cat,
                         "bbox": [round(x, 3), round(y, 3), round(max(bw, 0.0), 3), round(max(bh, 0.0), 3)],
                         "score": round(float(rng.beta(0.7, 2.0)), 5)})
    categories = [{"id": c, "name": f"class{c}", "supercategory": "none"} for c in COCO_IDS]
    with open(gt_path, "w") as f:
        json.dump({"images": images, "annotations": anns, "categories": categories}, f)
    with open(dets_path, "w") as f:
        json.dump(dets, f)
    return len(images), len(anns), len(dets)


def star_polygon(rng, cx, cy, rx, ry, corners):
    """A star-shaped polygon around (cx, cy): corners at sorted angles, radii 0.5..1 of rx, ry."""
    t = np.sort(rng.uniform(0, 2 * np.pi, corners))
    r = rng.uniform(0.5, 1.0, corners)
    return np.stack([cx + rx * r * np.cos(t), cy + ry * r * np.sin(t)], 1).ravel()


def uncompressed_counts(mask_utils, rle, h, w):
    """The column-major run lengths of an RLE mask (the form of COCO's crowd regions)."""
    flat = mask_utils.decode(rle).ravel(order="F")
    edges = np.flatnonzero(np.diff(flat)) + 1
    bounds = np.concatenate([[0], edges, [h * w]])
    counts = np.diff(bounds).tolist()
    return ([0] + counts) if flat[0] else counts


def generate_segm(gt_path, dets_path, num_images, dets_per_image, seed):
    from pycocotools import mask as mask_utils
    rng = np.random.default_rng(seed)
    weights = 1.0 / np.arange(1, 81) ** 0.9
    weights[0] *= 6
    weights /= weights.sum()
    images, anns, dets = [], [], []
    ann_id = 1

    def rle_of(xy, h, w):
        return mask_utils.frPyObjects([[float(v) for v in xy]], h, w)[0]

    def result(image_id, cat, xy, h, w):
        rle = rle_of(xy, h, w)
        x0, y0 = float(np.clip(xy[0::2].min(), 0, w)), float(np.clip(xy[1::2].min(), 0, h))
        x1, y1 = float(np.clip(xy[0::2].max(), 0, w)), float(np.clip(xy[1::2].max(), 0, h))
        return {"image_id": image_id, "category_id": cat,
                "bbox": [round(x0, 3), round(y0, 3), round(x1 - x0, 3), round(y1 - y0, 3)],
                "score": round(float(rng.beta(0.7, 2.0)), 5),
                "segmentation": {"size": [h, w], "counts": rle["counts"].decode("ascii")}}

    for i in range(num_images):
        image_id = 100000 + i * 7
        w, h = int(rng.integers(320, 641)), int(rng.integers(240, 481))
        images.append({"id": image_id, "file_name": f"{image_id:012d}.jpg", "width": w, "height": h})
        objects = []
        for _ in range(int(rng.poisson(7.3))):
            bw = float(np.exp(rng.uniform(np.log(4), np.log(w * 0.9))))
            bh = float(np.clip(bw * np.exp(rng.normal(0, 0.5)), 2, h * 0.95))
            cx, cy = float(rng.uniform(bw / 2, w - bw / 2)), float(rng.uniform(bh / 2, max(bh / 2 + 1, h - bh / 2)))
            cat = int(rng.choice(COCO_IDS, p=weights))
            xy = np.round(star_polygon(rng, cx, cy, bw / 2, bh / 2, int(rng.integers(6, 21))), 2)
            rle = rle_of(xy, h, w)
            crowd = int(rng.uniform() < 0.01)
            x0, y0, bwm, bhm = (float(v) for v in mask_utils.toBbox(rle))
            ann = {"id": ann_id, "image_id": image_id, "category_id": cat,
                   "bbox": [x0, y0, bwm, bhm], "area": float(mask_utils.area(rle)), "iscrowd": crowd}
            if crowd:
                ann["segmentation"] = {"size": [h, w], "counts": uncompressed_counts(mask_utils, rle, h, w)}
            else:
                ann["segmentation"] = [xy.tolist()]
            anns.append(ann)
            objects.append((xy, cx, cy, bw, bh, cat))
            ann_id += 1
        image_dets = []
        for xy, cx, cy, bw, bh, cat in objects:
            for _ in range(int(rng.integers(0, 4))):  # misses, hits, duplicates
                # Rescaled, shifted, each corner moved: a prediction's outline of the object.
                s, (dx, dy) = np.exp(rng.normal(0, 0.08)), rng.normal(0, 0.06, 2)
                jittered = xy.copy()
                jittered[0::2] = cx + (xy[0::2] - cx) * s + bw * (dx + rng.normal(0, 0.03, len(xy) // 2))
                jittered[1::2] = cy + (xy[1::2] - cy) * s + bh * (dy + rng.normal(0, 0.03, len(xy) // 2))
                c = cat if rng.uniform() > 0.1 else int(rng.choice(COCO_IDS))
                image_dets.append((jittered, c))
        while len(image_dets) < dets_per_image:
            bw = float(np.exp(rng.uniform(np.log(4), np.log(w * 0.5))))
            bh = float(np.clip(bw * np.exp(rng.normal(0, 0.5)), 2, h * 0.5))
            cx, cy = float(rng.uniform(0, w)), float(rng.uniform(0, h))
            image_dets.append((star_polygon(rng, cx, cy, bw / 2, bh / 2, int(rng.integers(6, 13))),
                               int(rng.choice(COCO_IDS, p=weights))))
        for xy, cat in image_dets[:dets_per_image]:
            dets.append(result(image_id, cat, xy, h, w))
    categories = [{"id": c, "name": f"class{c}", "supercategory": "none"} for c in COCO_IDS]
    with open(gt_path, "w") as f:
        json.dump({"images": images, "annotations": anns, "categories": categories}, f)
    with open(dets_path, "w") as f:
        json.dump(dets, f)
    return len(images), len(anns), len(dets)


def run_trainer(trainer, gt_path, dets_path, out_dir, threads, iou_type):
    stats_path = os.path.join(out_dir, "trainer_stats.json")
    cmd = [trainer, "-q", "eval", gt_path, dets_path, "--json", stats_path, "--iou-type", iou_type]
    if threads:
        cmd += ["--threads", str(threads)]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    with open(stats_path) as f:
        stats = json.load(f)
    return wall, stats["seconds"], stats["stats"], cpu


def run_pycocotools(gt_path, dets_path, iou_type):
    from pycocotools.coco import COCO
    from pycocotools.cocoeval import COCOeval
    times = {}
    cpu_start = time.process_time()
    with contextlib.redirect_stdout(io.StringIO()):
        start = time.perf_counter()
        coco_gt = COCO(gt_path)
        coco_dt = coco_gt.loadRes(dets_path)
        times["load"] = time.perf_counter() - start
        e = COCOeval(coco_gt, coco_dt, iou_type)
        start = time.perf_counter()
        e.evaluate()
        times["evaluate"] = time.perf_counter() - start
        start = time.perf_counter()
        e.accumulate()
        times["accumulate"] = time.perf_counter() - start
        start = time.perf_counter()
        e.summarize()
        times["summarize"] = time.perf_counter() - start
    return times, time.process_time() - cpu_start, [float(s) for s in e.stats]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trainer", required=True)
    parser.add_argument("--iou-type", choices=["bbox", "segm"], default="bbox")
    parser.add_argument("--dir", help="keep the generated files here (reused when present)")
    parser.add_argument("--images", type=int, default=5000)
    parser.add_argument("--dets-per-image", type=int, default=100)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=0)
    parser.add_argument("--repeat", type=int, default=3, help="trainer eval runs (best is kept)")
    parser.add_argument("--skip-pycocotools", action="store_true")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        out_dir = args.dir or tmp
        os.makedirs(out_dir, exist_ok=True)
        tag = "" if args.iou_type == "bbox" else "segm_"
        gt_path = os.path.join(out_dir, f"{tag}gt_{args.images}_{args.seed}.json")
        dets_path = os.path.join(out_dir, f"{tag}dets_{args.images}_{args.dets_per_image}_{args.seed}.json")
        if not (os.path.exists(gt_path) and os.path.exists(dets_path)):
            make = generate if args.iou_type == "bbox" else generate_segm
            make(gt_path, dets_path, args.images, args.dets_per_image, args.seed)
        with open(gt_path) as f:
            gt = json.load(f)
        result = {"iou_type": args.iou_type, "images": len(gt["images"]),
                  "annotations": len(gt["annotations"]),
                  "crowd": sum(a["iscrowd"] for a in gt["annotations"]),
                  "detections": None, "cpu_count": os.cpu_count(), "threads": args.threads}
        runs = [run_trainer(args.trainer, gt_path, dets_path, out_dir, args.threads, args.iou_type)
                for _ in range(args.repeat)]
        best = min(runs, key=lambda r: r[0])
        result["trainer_eval_wall_s"] = round(best[0], 3)
        result["trainer_eval_evaluate_s"] = round(min(r[1] for r in runs), 3)
        result["trainer_eval_cpu_s"] = round(min(r[3] for r in runs), 3)
        result["trainer_stats"] = best[2]
        with open(dets_path) as f:
            result["detections"] = len(json.load(f))
        if not args.skip_pycocotools:
            times, cpu, stats = run_pycocotools(gt_path, dets_path, args.iou_type)
            result["pycocotools_s"] = {k: round(v, 3) for k, v in times.items()}
            result["pycocotools_total_s"] = round(sum(times.values()), 3)
            result["pycocotools_cpu_s"] = round(cpu, 3)
            result["pycocotools_stats"] = stats
            result["max_abs_stat_diff"] = max(abs(a - b) for a, b in zip(best[2], stats))
            result["stats_bit_identical"] = sum(a == b for a, b in zip(best[2], stats))
            result["ratio_wall"] = round(result["pycocotools_total_s"] / result["trainer_eval_wall_s"], 1)
            result["ratio_cpu"] = round(cpu / result["trainer_eval_cpu_s"], 1)
        result["loadavg_1min"] = os.getloadavg()[0]
        print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
