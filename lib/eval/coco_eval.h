// The COCO evaluator: the same 12 numbers as pycocotools' COCOeval(iouType='bbox') or
// iouType='segm' (or the 10 of iouType='keypoints') on the same ground truth and results, computed
// natively on several threads.
//
// Why: every mAP the trainer reports, and every comparison with published numbers, rests on this;
// users trust pycocotools' numbers, so we reproduce its protocol exactly (crowd regions, area
// ranges, maxDets, 101 recall points, its tie-breaking) instead of approximating it.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "data/coco_json.h"
#include "eval/coco_accumulate.h"
#include "eval/coco_params.h"
#include "eval/coco_results.h"

namespace trainer::eval {

// AP of one category (pycocotools precision[:, :, k, area all, maxDets 100] averaged over the
// entries that are not -1); -1 when the category has no counted ground truth.
struct CocoCategoryAp {
  int64_t category_id = 0;
  std::string name;
  int64_t num_gt = 0;  // counted ground truth (not crowd), all areas
  double ap = -1;      // IoU 0.50:0.95
  double ap50 = -1;    // IoU 0.50
};

struct CocoStats {
  IouType iou_type = IouType::kBox;
  // pycocotools' summarize() order; -1 where undefined. Keypoints fill the first 10 (AP, AP50,
  // AP75, APm, APl, AR, AR50, AR75, ARm, ARl; the last two stay -1).
  std::array<double, 12> stats{};
  size_t num_stats() const { return iou_type == IouType::kKeypoints ? 10 : 12; }
  std::vector<CocoCategoryAp> per_category;
  double seconds = 0;  // evaluation wall time (matching, accumulation, summary), not file reading
  size_t num_images = 0;
  size_t num_categories = 0;
  size_t num_detections = 0;
};

struct CocoEvalOptions {
  int threads = 0;  // 0 = hardware concurrency
  // kKeypoints: OKS with COCO's 17 sigmas (coco_keypoint_params); kSegm: the IoU of the masks
  // (annotations' "segmentation" through annToRLE, results' Detection::segmentation).
  IouType iou_type = IouType::kBox;
  // Keypoints: other sigmas (one per point; pycocotools' params.kpt_oks_sigmas), for datasets
  // that are not COCO's 17 points. Empty: COCO's.
  std::vector<double> kpt_oks_sigmas{};
};

// Evaluates `detections` against `ground_truth` over all its images and categories (pycocotools'
// defaults for the options' iou_type). Throws core::InputError for a detection with an unknown
// image or category id, or a non-finite score or box (see check_detections; a negative
// width or height is an inverted box, scored as pycocotools scores it); for
// keypoints also for ground truth without "num_keypoints" or either side without one point per
// sigma (17 for COCO); for segm for ground truth without a "segmentation" or with one that makes
// no mask (see coco_segmentation_rle). A segm result without a mask is scored as its box's
// polygon, as pycocotools' loadRes makes it.
CocoStats evaluate_coco(const data::CocoFile& ground_truth,
                        const std::vector<Detection>& detections,
                        const CocoEvalOptions& options = {});

// The accumulated [T, R, K, A, M] precision and [T, K, A, M] recall arrays (pycocotools'
// `eval['precision']`, `eval['recall']`), categories in ascending id order.
CocoAccumulation accumulate_coco(const data::CocoFile& ground_truth,
                                 const std::vector<Detection>& detections, const CocoParams& params,
                                 const CocoEvalOptions& options = {});

// pycocotools' summarize() on an accumulation: the 12 stats (10 for keypoints, then -1, -1).
std::array<double, 12> summarize_coco(const CocoAccumulation& acc, const CocoParams& params);

// Short names of the stats: AP, AP50, AP75, APs, APm, APl, AR1, AR10, AR100, ARs, ARm, ARl; for
// keypoints AP, AP50, AP75, APm, APl, AR, AR50, AR75, ARm, ARl.
const std::vector<const char*>& coco_stat_keys(IouType type = IouType::kBox);

// The 12 lines pycocotools prints (" Average Precision  (AP) @[ IoU=0.50:0.95 | area=   all |
// ...").
std::string format_coco_summary(const CocoStats& stats);

// {"AP": ..., ..., "ARl": ..., "stats": [12 values], "per_category": [...], "seconds": ...}
std::string coco_stats_json(const CocoStats& stats);

}  // namespace trainer::eval
