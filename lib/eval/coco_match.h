// One (image, category) of the COCO protocol: box IoU with the crowd rule (or keypoint OKS, or the
// IoU of rotated boxes or of RLE masks), then greedy matching of score-ordered detections to
// ground truth at every threshold and area range (pycocotools `computeIoU` / `computeOks` +
// `evaluateImg`).
//
// Why a separate unit: this is where the protocol's subtleties live (crowd regions absorb any
// number of detections, ignored ground truth is matched only when nothing better is left, unmatched
// detections outside the area range do not count), and it is the part worth testing box by box.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "eval/coco_params.h"
#include "eval/rle.h"

namespace trainer::eval {

struct GtBox {
  std::array<double, 4> bbox{};  // x, y, w, h
  double area = 0;               // the annotation's "area" (not w*h)
  bool crowd = false;
  int64_t id = 0;       // annotation id; pycocotools treats a match to id 0 as no match
  bool ignore = false;  // ignored besides crowd (keypoints: no labelled point)
  const std::vector<double>* keypoints = nullptr;  // keypoint evaluation: [x, y, v] * K
  const std::vector<double>* rbox = nullptr;       // OBB evaluation: [cx, cy, w, h, angle]
  const Rle* mask = nullptr;                       // segm evaluation: annToRLE's mask
};

struct DtBox {
  std::array<double, 4> bbox{};  // x, y, w, h
  double score = 0;
  const std::vector<double>* keypoints = nullptr;  // keypoint evaluation: [x, y, s] * K
  const std::vector<double>* rbox = nullptr;       // OBB evaluation: [cx, cy, w, h, angle]
  const Rle* mask = nullptr;                       // segm evaluation
  // segm results that loadRes sized by their mask (Detection::area_from_mask): that area; -1: the
  // box's (or rotated box's) w x h, as for every other result.
  double mask_area = -1;
  double area() const {
    return mask_area >= 0 ? mask_area : rbox ? (*rbox)[2] * (*rbox)[3] : bbox[2] * bbox[3];
  }
};

// pycocotools' bbIou for one pair: intersection over union, or over the detection's own area when
// the ground truth is a crowd region; 0 when the boxes do not overlap with positive width/height.
double coco_box_iou(const std::array<double, 4>& dt, const std::array<double, 4>& gt, bool crowd);

// The box rule for rotated boxes [cx, cy, w, h, angle]: the exact overlap area over the union,
// or over the detection's own area when the ground truth is a crowd region.
double coco_rotated_iou(const std::vector<double>& dt, const std::vector<double>& gt, bool crowd);

// pycocotools' computeOks for one pair: with labelled ground-truth points, the mean over them of
// exp(-d^2 / (2 s^2 (area + eps) 2)) with s = 2 sigma; without any, the distance of every detected
// point outside the ground truth box enlarged to three times its size, over all points.
double coco_keypoint_oks(const std::vector<double>& dt, const std::vector<double>& gt,
                         const std::array<double, 4>& gt_bbox, double gt_area,
                         const std::vector<double>& sigmas);

// Flags for one detection at one IoU threshold.
enum DetectionFlag : uint8_t {
  kDetectionMatched = 1,  // matched to a ground truth with a non-zero id (pycocotools' dtm != 0)
  kDetectionIgnored =
      2,  // matched to ignored ground truth, or unmatched and outside the area range
};

// Matching result of one (image, category, area range).
struct MatchResult {
  int num_gt_counted = 0;      // ground truth that is neither crowd nor outside the area range
  std::vector<uint8_t> flags;  // [t][d], T x D DetectionFlag bits
};

// Matches `dt` (already sorted by score, highest first, and cut to the largest maxDets) against
// `gt` (file order) for every area range in `params`. `out` gets one MatchResult per area range.
// `scratch` holds the IoU matrix between calls to avoid reallocating.
void match_image_category(const std::vector<DtBox>& dt, const std::vector<GtBox>& gt,
                          const CocoParams& params, std::vector<MatchResult>* out,
                          std::vector<double>* scratch);

}  // namespace trainer::eval
