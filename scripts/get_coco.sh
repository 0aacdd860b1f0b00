#!/usr/bin/env bash
# Downloads COCO 2017 (images + annotations) from the official site, verifies it, writes YOLO txt
# labels, and makes the 256-image val2017 subset the seeds' short fit used (benchmark-method.md 4).
#
# Why: the L4 short-fit protocol (configs/bench/l4_short_fit.yaml) trains on "256 real COCO val2017
# images"; the subset must be the same fixed set on every machine, so it is defined here once:
#   THE SUBSET = the 256 smallest image ids of instances_val2017.json (ascending id order),
#   annotated or not (images without annotations stay in as background images).
# It gets its own images, its own instances json (those images, their annotations, all 80
# categories) and YOLO labels, under $COCO_ROOT/val2017_256 (read by configs/data/coco_val256.yaml).
#
# Usage: scripts/get_coco.sh [options]
#   --root DIR      where COCO lives (default $COCO_ROOT, else /data/coco), laid out as
#                   images/{train2017,val2017}, labels/{train2017,val2017}, annotations/
#   --val-only      skip train2017.zip (18 GiB); enough for the subset and validation
#   --subset-only   no download: build labels and the subset from what is already under --root
#                   (the offline mode; also what the tests run on a fake tree)
#   --count N       subset size (default 256; only for tests)
#   --keep-zips     keep the downloaded zips (default: removed after a verified extraction)
#   --dry-run       print what would be downloaded and checked, change nothing
#
# Verification of the downloads (values are not published on cocodataset.org itself):
#   sizes:  train2017.zip 19336861798, val2017.zip 815585330, annotations_trainval2017.zip
#           252907541 bytes: the official files' sizes as recorded in several independent public
#           download scripts and dataset READMEs (they agree; cocodataset.org lists only GB).
#   MD5:    cced6f7f71b7629ddf16f17bbcfab6b2 train2017.zip, 442b8da7639aecaf257c1dceb8ba8c80
#           val2017.zip, f4bbac642086de4f52a3fdda2de5fa2c annotations_trainval2017.zip, as listed
#           in intel/neural-compressor examples/pytorch/fx/object_detection/maskrcnn/
#           download_dataset.sh. The script checks size, MD5, `unzip -tq` integrity, and the file
#           counts after extraction (118287 train2017 and 5000 val2017 JPEGs).
# Needs: curl, unzip, md5sum, python3 (standard library only).
set -euo pipefail

root=${COCO_ROOT:-/data/coco}
val_only=0
subset_only=0
count=256
keep_zips=0
dry_run=0
while [ $# -gt 0 ]; do
  case $1 in
    --root) root=$2; shift 2 ;;
    --val-only) val_only=1; shift ;;
    --subset-only) subset_only=1; shift ;;
    --count) count=$2; shift 2 ;;
    --keep-zips) keep_zips=1; shift ;;
    --dry-run) dry_run=1; shift ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d'; exit 0 ;;
    *) echo "get_coco: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
case $count in ''|*[!0-9]*) echo "get_coco: --count needs a positive integer" >&2; exit 2 ;; esac

say() { echo "[get_coco] $*" >&2; }
die() { echo "[get_coco] error: $*" >&2; exit 1; }

# name | URL | bytes | md5 | extract into (relative to root) | JPEG count after extraction
ARCHIVES=(
  "annotations_trainval2017.zip|http://images.cocodataset.org/annotations/annotations_trainval2017.zip|252907541|f4bbac642086de4f52a3fdda2de5fa2c|.|0"
  "val2017.zip|http://images.cocodataset.org/zips/val2017.zip|815585330|442b8da7639aecaf257c1dceb8ba8c80|images|5000"
  "train2017.zip|http://images.cocodataset.org/zips/train2017.zip|19336861798|cced6f7f71b7629ddf16f17bbcfab6b2|images|118287"
)

need() { command -v "$1" > /dev/null || die "'$1' is required (Debian: apt-get install $2)"; }

# --------------------------------------------------------------------------------- download ---
fetch_one() {  # LINE: download, verify, extract one archive (skipped when already extracted)
  local name url bytes md5 into jpegs
  IFS='|' read -r name url bytes md5 into jpegs <<< "$1"
  local zip=$root/$name
  local split=${name%.zip}
  if [ "$jpegs" != 0 ] && [ -d "$root/images/$split" ] &&
     [ "$(find "$root/images/$split" -maxdepth 1 -name '*.jpg' | wc -l)" -eq "$jpegs" ]; then
    say "$split: already extracted ($jpegs images)"
    return
  fi
  if [ "$jpegs" = 0 ] && [ -f "$root/annotations/instances_val2017.json" ] &&
     [ -f "$root/annotations/instances_train2017.json" ]; then
    say "annotations: already extracted"
    return
  fi
  if [ $dry_run = 1 ]; then
    echo "download $url -> $zip ($bytes bytes, md5 $md5), extract into $root/$into"
    return
  fi
  if [ ! -f "$zip" ] || [ "$(stat -c %s "$zip")" -ne "$bytes" ]; then
    say "downloading $url ($bytes bytes)"
    curl -fL --retry 5 --retry-delay 10 -C - -o "$zip" "$url" || die "download failed: $url"
  fi
  local size
  size=$(stat -c %s "$zip")
  [ "$size" -eq "$bytes" ] || die "$zip has $size bytes, expected $bytes (delete it and rerun)"
  say "checking the MD5 of $name"
  echo "$md5  $zip" | md5sum -c --quiet - || die "$zip: MD5 differs from $md5 (delete it and rerun)"
  unzip -tq "$zip" > /dev/null || die "$zip: zip integrity check failed"
  mkdir -p "$root/$into"
  say "extracting $name into $root/$into"
  unzip -q -o "$zip" -d "$root/$into"
  if [ "$jpegs" != 0 ]; then
    local n
    n=$(find "$root/images/$split" -maxdepth 1 -name '*.jpg' | wc -l)
    [ "$n" -eq "$jpegs" ] || die "$root/images/$split has $n JPEGs, expected $jpegs"
  fi
  [ $keep_zips = 1 ] || rm -f "$zip"
}

if [ $subset_only = 0 ]; then
  need curl curl
  need unzip unzip
  need md5sum coreutils
  [ $dry_run = 1 ] || mkdir -p "$root"
  for line in "${ARCHIVES[@]}"; do
    case $line in train2017.zip*) [ $val_only = 1 ] && continue ;; esac
    fetch_one "$line"
  done
fi
if [ $dry_run = 1 ]; then
  echo "write YOLO labels under $root/labels/ for each split with images and annotations"
  echo "make the $count-image val2017 subset (smallest image ids) in $root/val2017_256"
  exit 0
fi

# ------------------------------------------------------------------------- labels and subset ---
need python3 python3
[ -f "$root/annotations/instances_val2017.json" ] ||
  die "$root/annotations/instances_val2017.json not found (run without --subset-only to download)"
[ -d "$root/images/val2017" ] || die "$root/images/val2017 not found"

python3 - "$root" "$count" << 'PY'
# COCO json -> YOLO txt labels for each split, then the fixed val2017 subset.
# YOLO class = index of the category id among the sorted category ids (COCO's 80 ids 1..90 -> 0..79);
# box = centre and size normalised by the image size, 6 decimals; iscrowd boxes and boxes without
# area are left out (as in the usual COCO -> YOLO conversion).
import json, os, shutil, sys

root, count = sys.argv[1], int(sys.argv[2])

def yolo_lines(images, annotations, categories):
    index = {cid: i for i, cid in enumerate(sorted(c["id"] for c in categories))}
    size = {im["id"]: (im["width"], im["height"]) for im in images}
    lines = {im["id"]: [] for im in images}
    for a in annotations:
        if a.get("iscrowd", 0) or a["image_id"] not in size:
            continue
        x, y, w, h = a["bbox"]
        W, H = size[a["image_id"]]
        if w <= 0 or h <= 0:
            continue
        lines[a["image_id"]].append("%d %.6f %.6f %.6f %.6f" % (
            index[a["category_id"]], (x + w / 2) / W, (y + h / 2) / H, w / W, h / H))
    return lines

def write_labels(folder, images, lines):
    os.makedirs(folder, exist_ok=True)
    written = 0
    for im in images:
        if lines[im["id"]]:
            stem = os.path.splitext(im["file_name"])[0]
            with open(os.path.join(folder, stem + ".txt"), "w") as f:
                f.write("\n".join(lines[im["id"]]) + "\n")
            written += 1
    return written

for split in ("train2017", "val2017"):
    ann = os.path.join(root, "annotations", "instances_%s.json" % split)
    if not (os.path.isfile(ann) and os.path.isdir(os.path.join(root, "images", split))):
        continue
    with open(ann) as f:
        coco = json.load(f)
    lines = yolo_lines(coco["images"], coco["annotations"], coco["categories"])
    n = write_labels(os.path.join(root, "labels", split), coco["images"], lines)
    print("[get_coco] labels/%s: %d label files for %d images" % (split, n, len(coco["images"])),
          file=sys.stderr)
    if split != "val2017":
        continue
    images = sorted(coco["images"], key=lambda im: im["id"])[:count]
    if len(images) < count:
        sys.exit("[get_coco] error: val2017 has only %d images, the subset needs %d" % (len(images), count))
    ids = {im["id"] for im in images}
    subset = dict(coco)
    subset["images"] = images
    subset["annotations"] = [a for a in coco["annotations"] if a["image_id"] in ids]
    info = dict(coco.get("info", {}))
    info["description"] = "COCO 2017 val: the %d smallest image ids (scripts/get_coco.sh)" % count
    subset["info"] = info
    out = os.path.join(root, "val2017_256")
    if os.path.isdir(out):
        shutil.rmtree(out)
    os.makedirs(os.path.join(out, "images", "val2017"))
    os.makedirs(os.path.join(out, "annotations"))
    for im in images:
        src = os.path.join(root, "images", "val2017", im["file_name"])
        if not os.path.isfile(src):
            sys.exit("[get_coco] error: %s is missing" % src)
        shutil.copyfile(src, os.path.join(out, "images", "val2017", im["file_name"]))
    with open(os.path.join(out, "annotations", "instances_val2017.json"), "w") as f:
        json.dump(subset, f)
    n = write_labels(os.path.join(out, "labels", "val2017"), images, lines)
    with open(os.path.join(out, "SOURCE.md"), "w") as f:
        f.write("# val2017_256: the %d smallest image ids of COCO 2017 val\n\n" % count)
        f.write("Made by scripts/get_coco.sh from instances_val2017.json; first id %d, last id %d;\n"
                % (images[0]["id"], images[-1]["id"]))
        f.write("%d annotations (%d images with YOLO labels). COCO terms: cocodataset.org/#termsofuse\n"
                % (len(subset["annotations"]), n))
    print("[get_coco] val2017_256: %d images (ids %d..%d), %d annotations, %d label files -> %s"
          % (len(images), images[0]["id"], images[-1]["id"], len(subset["annotations"]), n, out),
          file=sys.stderr)
PY
say "done: $root"
