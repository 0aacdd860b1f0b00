// Per image and category COCO matching; see coco_match.h. Each loop mirrors pycocotools'
// `evaluateImg` statement for statement, so that ties and crowd regions resolve the same way.
#include "eval/coco_match.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>

#include "eval/numeric.h"
#include "eval/rle.h"
#include "geometry/rotated_box.h"

namespace trainer::eval {

double coco_box_iou(const std::array<double, 4>& d, const std::array<double, 4>& g, bool crowd) {
  // The same operations in the same order as maskApi.c bbIou, so the doubles are identical.
  const double ga = g[2] * g[3];
  const double da = d[2] * d[3];
  const double w = std::fmin(d[2] + d[0], g[2] + g[0]) - std::fmax(d[0], g[0]);
  if (w <= 0) return 0.0;
  const double h = std::fmin(d[3] + d[1], g[3] + g[1]) - std::fmax(d[1], g[1]);
  if (h <= 0) return 0.0;
  const double i = w * h;
  const double u = crowd ? da : da + ga - i;
  return i / u;
}

double coco_keypoint_oks(const std::vector<double>& dt, const std::vector<double>& gt,
                         const std::array<double, 4>& bb, double gt_area,
                         const std::vector<double>& sigmas) {
  const size_t k = sigmas.size();
  if (dt.size() != 3 * k || gt.size() != 3 * k) {
    throw std::invalid_argument("coco_keypoint_oks: keypoints and sigmas differ in length");
  }
  size_t labelled = 0;
  for (size_t i = 0; i < k; ++i) labelled += gt[3 * i + 2] > 0;
  const double x0 = bb[0] - bb[2], x1 = bb[0] + bb[2] * 2;
  const double y0 = bb[1] - bb[3], y1 = bb[1] + bb[3] * 2;
  constexpr double kSpacing = 2.220446049250313e-16;  // np.spacing(1)
  // Called for every (detection, ground truth) pair: no allocation for COCO's 17 points.
  constexpr size_t kOnStack = 32;
  double on_stack[kOnStack] = {};
  std::vector<double> on_heap(k > kOnStack ? k : 0);
  double* terms = k > kOnStack ? on_heap.data() : on_stack;
  size_t count = 0;
  for (size_t i = 0; i < k; ++i) {
    double dx, dy;
    if (labelled > 0) {
      if (!(gt[3 * i + 2] > 0)) continue;
      dx = dt[3 * i] - gt[3 * i];
      dy = dt[3 * i + 1] - gt[3 * i + 1];
    } else {
      dx = std::max(0.0, x0 - dt[3 * i]) + std::max(0.0, dt[3 * i] - x1);
      dy = std::max(0.0, y0 - dt[3 * i + 1]) + std::max(0.0, dt[3 * i + 1] - y1);
    }
    const double var = (sigmas[i] * 2) * (sigmas[i] * 2);
    const double e = (dx * dx + dy * dy) / var / (gt_area + kSpacing) / 2;
    terms[count++] = std::exp(-e);
  }
  return pairwise_sum(terms, count) / static_cast<double>(count);
}

double coco_rotated_iou(const std::vector<double>& dt, const std::vector<double>& gt, bool crowd) {
  const geometry::RotatedBox a{dt[0], dt[1], dt[2], dt[3], dt[4]};
  const geometry::RotatedBox b{gt[0], gt[1], gt[2], gt[3], gt[4]};
  const double inter = geometry::rotated_intersection(a, b);
  const double denominator = crowd ? a.w * a.h : a.w * a.h + b.w * b.h - inter;
  return denominator > 0 ? inter / denominator : 0.0;
}

void match_image_category(const std::vector<DtBox>& dt, const std::vector<GtBox>& gt,
                          const CocoParams& params, std::vector<MatchResult>* out,
                          std::vector<double>* scratch) {
  const size_t D = dt.size();
  const size_t G = gt.size();
  const size_t T = params.iou_thresholds.size();
  std::vector<double>& ious = *scratch;  // [d][g] in file order of gt
  ious.assign(D * G, 0.0);
  if (params.iou_type == IouType::kSegm) {
    // maskUtils.iou(dt, gt, iscrowd): each mask's box once, then rleIou on the runs.
    std::vector<std::array<double, 4>> dt_boxes(D), gt_boxes(G);
    for (size_t d = 0; d < D; ++d) dt_boxes[d] = rle_to_bbox(*dt[d].mask);
    for (size_t g = 0; g < G; ++g) gt_boxes[g] = rle_to_bbox(*gt[g].mask);
    for (size_t d = 0; d < D; ++d) {
      for (size_t g = 0; g < G; ++g) {
        ious[d * G + g] = rle_iou(*dt[d].mask, dt_boxes[d], *gt[g].mask, gt_boxes[g], gt[g].crowd);
      }
    }
  } else {
    const bool oks = params.iou_type == IouType::kKeypoints;
    const bool rotated = params.iou_type == IouType::kObb;
    for (size_t d = 0; d < D; ++d) {
      for (size_t g = 0; g < G; ++g) {
        ious[d * G + g] = oks ? coco_keypoint_oks(*dt[d].keypoints, *gt[g].keypoints, gt[g].bbox,
                                                  gt[g].area, params.kpt_oks_sigmas)
                          : rotated ? coco_rotated_iou(*dt[d].rbox, *gt[g].rbox, gt[g].crowd)
                                    : coco_box_iou(dt[d].bbox, gt[g].bbox, gt[g].crowd);
      }
    }
  }

  out->resize(params.area_ranges.size());
  std::vector<uint8_t> gt_ignore(G);
  std::vector<size_t> order(G);
  std::vector<uint8_t> gt_taken(G);  // at the current threshold, indexed by sorted position
  for (size_t a = 0; a < params.area_ranges.size(); ++a) {
    const AreaRange& range = params.area_ranges[a];
    MatchResult& result = (*out)[a];
    result.flags.assign(T * D, 0);
    result.num_gt_counted = 0;
    for (size_t g = 0; g < G; ++g) {
      gt_ignore[g] = gt[g].crowd || gt[g].ignore || gt[g].area < range.lo || gt[g].area > range.hi;
      if (!gt_ignore[g]) ++result.num_gt_counted;
    }
    // Ground truth in the order the matcher visits it: counted first, ignored last, stable.
    std::iota(order.begin(), order.end(), size_t{0});
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t x, size_t y) { return gt_ignore[x] < gt_ignore[y]; });

    if (D > 0 && G > 0) {
      for (size_t t = 0; t < T; ++t) {
        std::fill(gt_taken.begin(), gt_taken.end(), 0);
        for (size_t d = 0; d < D; ++d) {
          double best = std::min(params.iou_thresholds[t], 1 - 1e-10);
          long m = -1;
          for (size_t s = 0; s < G; ++s) {
            const size_t g = order[s];
            // A matched ground truth is not matched again, unless it is a crowd region.
            if (gt_taken[s] && !gt[g].crowd) continue;
            // Once matched to counted ground truth, stop at the first ignored one.
            if (m > -1 && !gt_ignore[order[m]] && gt_ignore[g]) break;
            const double iou = ious[d * G + g];
            if (iou < best) continue;
            best = iou;
            m = static_cast<long>(s);
          }
          if (m == -1) continue;
          const size_t g = order[m];
          uint8_t flag = gt_ignore[g] ? kDetectionIgnored : 0;
          if (gt[g].id != 0) flag |= kDetectionMatched;
          result.flags[t * D + d] = flag;
          gt_taken[m] = 1;
        }
      }
    }
    // Unmatched detections outside the area range are ignored.
    for (size_t d = 0; d < D; ++d) {
      const double area = dt[d].area();
      if (!(area < range.lo || area > range.hi)) continue;
      for (size_t t = 0; t < T; ++t) {
        uint8_t& flag = result.flags[t * D + d];
        if (!(flag & kDetectionMatched)) flag |= kDetectionIgnored;
      }
    }
  }
}

}  // namespace trainer::eval
