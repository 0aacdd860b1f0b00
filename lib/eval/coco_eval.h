// The COCO box evaluator: the same 12 numbers as pycocotools' COCOeval(iouType='bbox') on the same
// ground truth and results, computed natively and on several threads.
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
  std::array<double, 12> stats{};  // pycocotools' summarize() order; -1 where undefined
  std::vector<CocoCategoryAp> per_category;
  double seconds = 0;  // evaluation wall time (matching, accumulation, summary), not file reading
  size_t num_images = 0;
  size_t num_categories = 0;
  size_t num_detections = 0;
};

struct CocoEvalOptions {
  int threads = 0;  // 0 = hardware concurrency
};

// Evaluates `detections` against `ground_truth` over all its images and categories (pycocotools'
// defaults). Throws core::InputError for a detection with an unknown image or category id, a
// non-finite score or box, or a negative size (see check_detections).
CocoStats evaluate_coco(const data::CocoFile& ground_truth,
                        const std::vector<Detection>& detections,
                        const CocoEvalOptions& options = {});

// The accumulated [T, R, K, A, M] precision and [T, K, A, M] recall arrays (pycocotools'
// `eval['precision']`, `eval['recall']`), categories in ascending id order.
CocoAccumulation accumulate_coco(const data::CocoFile& ground_truth,
                                 const std::vector<Detection>& detections, const CocoParams& params,
                                 const CocoEvalOptions& options = {});

// pycocotools' summarize() on an accumulation: the 12 stats.
std::array<double, 12> summarize_coco(const CocoAccumulation& acc, const CocoParams& params);

// Short names of the 12 stats: AP, AP50, AP75, APs, APm, APl, AR1, AR10, AR100, ARs, ARm, ARl.
const std::array<const char*, 12>& coco_stat_keys();

// The 12 lines pycocotools prints (" Average Precision  (AP) @[ IoU=0.50:0.95 | area=   all |
// ...").
std::string format_coco_summary(const CocoStats& stats);

// {"AP": ..., ..., "ARl": ..., "stats": [12 values], "per_category": [...], "seconds": ...}
std::string coco_stats_json(const CocoStats& stats);

}  // namespace trainer::eval
