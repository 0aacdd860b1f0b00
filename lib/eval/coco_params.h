// The COCO evaluation settings for boxes and keypoints (pycocotools `Params.setDetParams`,
// `setKpParams`), built the way NumPy builds them so that threshold comparisons land on the same
// side.
//
// Why: AP75 is looked up by `0.75 == iouThrs`, recall points come from `np.linspace(0, 1, 101)`,
// the area ranges are integer squares; every one of these is part of the protocol's numbers.
#pragma once

#include <array>
#include <vector>

#include "eval/numeric.h"

namespace trainer::eval {

struct AreaRange {
  double lo = 0;
  double hi = 0;
  const char* label = "";
};

// What a detection is compared with: its box (IoU), its keypoints (OKS), its rotated box (the
// exact IoU of the two rotated rectangles; areas are w x h; the box protocol otherwise), or its
// mask (pycocotools' iouType='segm': the IoU of the RLE masks; the box protocol otherwise).
enum class IouType { kBox, kKeypoints, kObb, kSegm };

// "bbox", "keypoints", "obb", "segm".
const char* iou_type_name(IouType type);

struct CocoParams {
  IouType iou_type = IouType::kBox;
  std::vector<double> iou_thresholds = linspace(0.5, 0.95, 10);     // T = 10
  std::vector<double> recall_thresholds = linspace(0.0, 1.0, 101);  // R = 101
  std::vector<AreaRange> area_ranges = {{0.0, 1e10, "all"},
                                        {0.0, 1024.0, "small"},
                                        {1024.0, 9216.0, "medium"},
                                        {9216.0, 1e10, "large"}};  // A = 4
  std::vector<int> max_dets = {1, 10, 100};                        // M = 3, ascending

  std::vector<double> kpt_oks_sigmas;  // keypoints: one sigma per point

  int num_iou() const { return static_cast<int>(iou_thresholds.size()); }
  int num_recall() const { return static_cast<int>(recall_thresholds.size()); }
  int num_areas() const { return static_cast<int>(area_ranges.size()); }
  int num_max_dets() const { return static_cast<int>(max_dets.size()); }
  int largest_max_det() const { return max_dets.back(); }
};

// pycocotools' keypoint settings: maxDets [20], areas all / medium / large, COCO's 17 sigmas.
inline CocoParams coco_keypoint_params() {
  CocoParams p;
  p.iou_type = IouType::kKeypoints;
  p.area_ranges = {{0.0, 1e10, "all"}, {1024.0, 9216.0, "medium"}, {9216.0, 1e10, "large"}};
  p.max_dets = {20};
  // np.array([.26, .25, ...]) / 10.0, divided exactly as NumPy divides.
  for (double s :
       {.26, .25, .25, .35, .35, .79, .79, .72, .72, .62, .62, 1.07, 1.07, .87, .87, .89, .89}) {
    p.kpt_oks_sigmas.push_back(s / 10.0);
  }
  return p;
}

}  // namespace trainer::eval
