// COCO accumulation for one category: merge the per-image matches into precision at the 101
// recall points and the final recall, for every IoU threshold, area range and maxDets
// (pycocotools `accumulate`, one category slice of its [T, R, K, A, M] arrays).
//
// Why per category: categories are independent, so the evaluator runs them on worker threads, and
// each one writes only its own slice of the result arrays.
#pragma once

#include <cstdint>
#include <vector>

#include "eval/coco_match.h"
#include "eval/coco_params.h"

namespace trainer::eval {

// The images that have ground truth or detections of one category, in ascending image id order
// (pycocotools' evalImgs entries that are not None).
struct CategoryMatches {
  std::vector<size_t> offsets = {0};  // detections of entry e: [offsets[e], offsets[e + 1])
  std::vector<double> scores;         // per entry sorted by score, cut to the largest maxDets
  // Per area range: flags, T values per detection, entry e's block at T * offsets[e] laid out
  // [t][d] with stride (offsets[e + 1] - offsets[e]); and the counted ground truth of all entries.
  std::vector<std::vector<uint8_t>> flags;
  std::vector<int64_t> num_gt_counted;

  explicit CategoryMatches(size_t num_areas) : flags(num_areas), num_gt_counted(num_areas, 0) {}
  size_t num_entries() const { return offsets.size() - 1; }
  // Appends one image's detections (scores, best first) and its MatchResult per area range.
  void add(const std::vector<DtBox>& dt, const std::vector<MatchResult>& matches);
};

// precision/recall hold the whole [T, R, K, A, M] / [T, K, A, M] arrays (row-major, -1 where a
// setting has no counted ground truth); accumulate_category writes slice k.
struct CocoAccumulation {
  int T = 0, R = 0, K = 0, A = 0, M = 0;
  std::vector<double> precision;
  std::vector<double> recall;

  CocoAccumulation(const CocoParams& params, int num_categories);
  size_t precision_index(int t, int r, int k, int a, int m) const {
    return ((((static_cast<size_t>(t) * R + r) * K + k) * A + a) * M + m);
  }
  size_t recall_index(int t, int k, int a, int m) const {
    return (((static_cast<size_t>(t) * K + k) * A + a) * M + m);
  }
};

void accumulate_category(const CategoryMatches& matches, int k, const CocoParams& params,
                         CocoAccumulation* out);

}  // namespace trainer::eval
