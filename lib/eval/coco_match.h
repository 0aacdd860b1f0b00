// One (image, category) of the COCO protocol: box IoU with the crowd rule, then greedy matching of
// score-ordered detections to ground truth at every IoU threshold and area range
// (pycocotools `computeIoU` + `evaluateImg`).
//
// Why a separate unit: this is where the protocol's subtleties live (crowd regions absorb any
// number of detections, ignored ground truth is matched only when nothing better is left, unmatched
// detections outside the area range do not count), and it is the part worth testing box by box.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "eval/coco_params.h"

namespace trainer::eval {

struct GtBox {
  std::array<double, 4> bbox{};  // x, y, w, h
  double area = 0;               // the annotation's "area" (not w*h)
  bool crowd = false;
  int64_t id = 0;  // annotation id; pycocotools treats a match to id 0 as no match
};

struct DtBox {
  std::array<double, 4> bbox{};  // x, y, w, h
  double score = 0;
  double area() const { return bbox[2] * bbox[3]; }
};

// pycocotools' bbIou for one pair: intersection over union, or over the detection's own area when
// the ground truth is a crowd region; 0 when the boxes do not overlap with positive width/height.
double coco_box_iou(const std::array<double, 4>& dt, const std::array<double, 4>& gt, bool crowd);

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
