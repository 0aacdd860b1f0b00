// Per-category COCO accumulation; see coco_accumulate.h.
// Tested by tests/eval/test_coco_eval.cpp: precision/recall accumulation: hand-computed AP 253/303,
//   maxDets cut, missing categories -1, crowd regions.
#include "eval/coco_accumulate.h"

#include <algorithm>
#include <numeric>

namespace trainer::eval {

void CategoryMatches::add(const std::vector<DtBox>& dt, const std::vector<MatchResult>& matches) {
  for (const DtBox& d : dt) scores.push_back(d.score);
  offsets.push_back(scores.size());
  for (size_t a = 0; a < flags.size(); ++a) {
    flags[a].insert(flags[a].end(), matches[a].flags.begin(), matches[a].flags.end());
    num_gt_counted[a] += matches[a].num_gt_counted;
  }
}

CocoAccumulation::CocoAccumulation(const CocoParams& params, int num_categories)
    : T(params.num_iou()),
      R(params.num_recall()),
      K(num_categories),
      A(params.num_areas()),
      M(params.num_max_dets()),
      precision(static_cast<size_t>(T) * R * K * A * M, -1.0),
      recall(static_cast<size_t>(T) * K * A * M, -1.0) {}

void accumulate_category(const CategoryMatches& cm, int k, const CocoParams& params,
                         CocoAccumulation* out) {
  const size_t E = cm.num_entries();
  if (E == 0) return;
  const int T = params.num_iou();
  const int R = params.num_recall();
  // (entry, detection index) pairs: the concatenation pycocotools sorts.
  std::vector<std::pair<uint32_t, uint32_t>> dets;
  std::vector<double> rc, pr;
  for (int m = 0; m < params.num_max_dets(); ++m) {
    const size_t max_det = static_cast<size_t>(params.max_dets[static_cast<size_t>(m)]);
    dets.clear();
    for (size_t e = 0; e < E; ++e) {
      const size_t n = std::min(cm.offsets[e + 1] - cm.offsets[e], max_det);
      for (size_t j = 0; j < n; ++j)
        dets.emplace_back(static_cast<uint32_t>(e), static_cast<uint32_t>(j));
    }
    // np.argsort(-scores, kind='mergesort'): stable, highest score first.
    std::stable_sort(dets.begin(), dets.end(), [&](const auto& x, const auto& y) {
      return cm.scores[cm.offsets[x.first] + x.second] > cm.scores[cm.offsets[y.first] + y.second];
    });
    const size_t nd = dets.size();
    rc.resize(nd);
    pr.resize(nd);
    for (int a = 0; a < params.num_areas(); ++a) {
      const int64_t npig = cm.num_gt_counted[static_cast<size_t>(a)];
      if (npig == 0) continue;
      const std::vector<uint8_t>& flags = cm.flags[static_cast<size_t>(a)];
      for (int t = 0; t < T; ++t) {
        double tp = 0, fp = 0;
        for (size_t i = 0; i < nd; ++i) {
          const size_t e = dets[i].first;
          const size_t stride = cm.offsets[e + 1] - cm.offsets[e];
          const uint8_t f =
              flags[T * cm.offsets[e] + static_cast<size_t>(t) * stride + dets[i].second];
          if (!(f & kDetectionIgnored)) {
            if (f & kDetectionMatched) {
              tp += 1;
            } else {
              fp += 1;
            }
          }
          rc[i] = tp / static_cast<double>(npig);
          pr[i] = tp / (fp + tp + 2.220446049250313e-16);  // np.spacing(1)
        }
        out->recall[out->recall_index(t, k, a, m)] = nd ? rc[nd - 1] : 0.0;
        // Precision envelope: running maximum from the right.
        for (size_t i = nd; i-- > 1;) {
          if (pr[i] > pr[i - 1]) pr[i - 1] = pr[i];
        }
        // Precision at each recall point: at the first detection reaching it, 0 beyond the end.
        for (int r = 0; r < R; ++r) {
          const double threshold = params.recall_thresholds[static_cast<size_t>(r)];
          const size_t pi =
              static_cast<size_t>(std::lower_bound(rc.begin(), rc.end(), threshold) - rc.begin());
          out->precision[out->precision_index(t, r, k, a, m)] = pi < nd ? pr[pi] : 0.0;
        }
      }
    }
  }
}

}  // namespace trainer::eval
