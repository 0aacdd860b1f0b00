// Tested by tests/loss/test_static_loss.cpp: fused CPU pair CIoU equals bbox_iou, fused positives
//   equal select_positives bits, fused assignment equals element-wise path.
#include "loss/dense_assigner_cpu.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "loss/pair_ciou.h"

namespace trainer::loss {

namespace {

void check_cpu_float(const at::Tensor& t, const char* name) {
  TORCH_CHECK(t.device().is_cpu() && t.scalar_type() == at::kFloat, "dense assigner (CPU): ", name,
              " must be an fp32 CPU tensor");
}

// ATen's max and argmax treat NaN as the largest value, the first one winning.
bool beats(float candidate, float best) {
  if (std::isnan(best)) return false;
  return std::isnan(candidate) || candidate > best;
}

// x to the power e as ATen's pow of a float tensor by a scalar computes its special cases.
float power(float x, double e) {
  if (e == 0.5) return std::sqrt(x);
  if (e == 1.0) return x;
  if (e == 2.0) return x * x;
  if (e == 3.0) return x * x * x;
  return std::pow(x, static_cast<float>(e));
}

}  // namespace

DensePairsCpu dense_pairs_cpu(const at::Tensor& pd_scores, const at::Tensor& pd_bboxes,
                              const at::Tensor& anchor_points, const at::Tensor& gt_labels,
                              const at::Tensor& gt_bboxes, const at::Tensor& mask_gt,
                              const AssignerOptions& options) {
  check_cpu_float(pd_scores, "pd_scores");
  check_cpu_float(pd_bboxes, "pd_bboxes");
  check_cpu_float(anchor_points, "anchor_points");
  check_cpu_float(gt_bboxes, "gt_bboxes");
  const int64_t bs = pd_scores.size(0), na = pd_scores.size(1), nc = pd_scores.size(2);
  const int64_t m = gt_bboxes.size(1);
  const auto pd = pd_bboxes.contiguous();
  const auto points = anchor_points.contiguous();
  const auto gt = gt_bboxes.contiguous();
  const auto cls = gt_labels.reshape({bs, m}).to(at::kLong).contiguous();
  const auto valid = mask_gt.reshape({bs, m}).to(at::kBool).contiguous();
  const auto opts = gt.options();
  DensePairsCpu out{at::empty({bs, m, na}, opts.dtype(at::kBool)), at::empty({bs, m, na}, opts),
                    at::empty({bs, m, na}, opts)};
  const double alpha = options.alpha, beta = options.beta;
  const float off_candidates = power(0.0f, alpha) * power(0.0f, beta);

  const float* p_all = pd.data_ptr<float>();
  std::vector<BoxTerms> pd_terms(static_cast<size_t>(bs * na));
  for (int64_t i = 0; i < bs * na; ++i) pd_terms[static_cast<size_t>(i)] = box_terms(p_all + i * 4);
  // The scores are read in place: the loss passes a transposed view.
  const float* s_all = pd_scores.data_ptr<float>();
  const int64_t s_b = pd_scores.stride(0), s_a = pd_scores.stride(1), s_c = pd_scores.stride(2);
  const float* xy = points.data_ptr<float>();
  const float* g_all = gt.data_ptr<float>();
  const int64_t* c_all = cls.data_ptr<int64_t>();
  const bool* v_all = valid.data_ptr<bool>();
  bool* pair_all = out.pair_mask.data_ptr<bool>();
  float* overlap_all = out.overlaps.data_ptr<float>();
  float* align_all = out.align_metric.data_ptr<float>();
  const float side = static_cast<float>(stal_stride(options));
  const float margin = static_cast<float>(options.eps);
  for (int64_t i = 0; i < bs * m; ++i) {
    TORCH_CHECK(c_all[i] >= 0 && c_all[i] < nc, "dense assigner (CPU): class ", c_all[i],
                " outside [0, ", nc, ")");
  }

  at::parallel_for(0, bs * m, 1, [&](int64_t begin, int64_t end) {
    for (int64_t row = begin; row < end; ++row) {
      const int64_t b = row / m;
      const float* g = g_all + row * 4;
      const bool is_valid = v_all[row];
      // select_candidates_in_gts: centre and size, STAL's widening of short sides, back to xyxy.
      const float cx = (g[0] + g[2]) / 2, cy = (g[1] + g[3]) / 2;
      float w = g[2] - g[0], h = g[3] - g[1];
      if (is_valid && w < side) w = side;
      if (is_valid && h < side) h = side;
      const float x1 = cx - w / 2, y1 = cy - h / 2, x2 = cx + w / 2, y2 = cy + h / 2;
      const BoxTerms gt_terms = box_terms(g);
      const float* scores_b = s_all + b * s_b + c_all[row] * s_c;
      bool* pair = pair_all + row * na;
      float* overlap = overlap_all + row * na;
      float* align = align_all + row * na;
      for (int64_t a = 0; a < na; ++a) {
        const float x = xy[2 * a], y = xy[2 * a + 1];
        const float inside = std::min(std::min(x - x1, x2 - x), std::min(y - y1, y2 - y));
        const bool candidate = is_valid && inside > margin;
        pair[a] = candidate;
        if (!candidate) {
          overlap[a] = 0.0f;
          align[a] = off_candidates;
          continue;
        }
        const int64_t i = b * na + a;
        overlap[a] =
            clamped_pair_ciou(g, gt_terms, p_all + i * 4, pd_terms[static_cast<size_t>(i)]);
        align[a] = power(scores_b[a * s_a], alpha) * power(overlap[a], beta);
      }
    }
  });
  return out;
}

Positives dense_positives_cpu(const at::Tensor& align_metric, const at::Tensor& overlaps,
                              const at::Tensor& pair_mask, const at::Tensor& mask_gt, int64_t topk,
                              int64_t topk2, double eps) {
  check_cpu_float(align_metric, "align_metric");
  check_cpu_float(overlaps, "overlaps");
  const int64_t bs = align_metric.size(0), m = align_metric.size(1), na = align_metric.size(2);
  const auto align = align_metric.contiguous();
  const auto overlap = overlaps.contiguous();
  const auto pair = pair_mask.to(at::kBool).contiguous();
  const auto valid = mask_gt.reshape({bs, m}).to(at::kBool).contiguous();
  const auto opts = align.options();
  Positives out{at::zeros({bs, na}, opts.dtype(at::kLong)), at::zeros({bs, na}, opts),
                at::empty({bs, na, 1}, opts)};
  if (na == 0) return out;

  // Each GT's top-k anchors by alignment (ATen's top-k, for its tie-breaking).
  const int64_t k1 = std::min(topk, na);
  const auto idx1 = std::get<1>(align.topk(k1, -1, /*largest=*/true)).contiguous();
  const float* al_all = align.data_ptr<float>();
  const float* ov_all = overlap.data_ptr<float>();
  const bool* pair_all = pair.data_ptr<bool>();
  const bool* v_all = valid.data_ptr<bool>();
  const int64_t* i1_all = idx1.data_ptr<int64_t>();

  // owner[b * na + a]: the GT the anchor is assigned to, -1 for none.
  std::vector<int64_t> owner(static_cast<size_t>(bs * na), -1);
  at::parallel_for(0, bs, 1, [&](int64_t begin, int64_t end) {
    std::vector<int32_t> claims(static_cast<size_t>(na));
    for (int64_t b = begin; b < end; ++b) {
      std::fill(claims.begin(), claims.end(), 0);
      int64_t* own = owner.data() + b * na;
      // Candidates: a valid GT's top-k picks that are inside it.
      for (int64_t g = 0; g < m; ++g) {
        if (!v_all[b * m + g]) continue;
        const int64_t* picks = i1_all + (b * m + g) * k1;
        const bool* inside = pair_all + (b * m + g) * na;
        for (int64_t j = 0; j < k1; ++j) {
          const int64_t a = picks[j];
          if (!inside[a]) continue;
          ++claims[static_cast<size_t>(a)];
          own[a] = g;
        }
      }
      // An anchor claimed twice goes to the GT it overlaps most (over all M rows, first wins).
      const float* ov = ov_all + b * m * na;
      for (int64_t a = 0; a < na; ++a) {
        if (claims[static_cast<size_t>(a)] < 2) continue;
        int64_t best = 0;
        for (int64_t g = 1; g < m; ++g) {
          if (beats(ov[g * na + a], ov[best * na + a])) best = g;
        }
        own[a] = best;
      }
    }
  });

  // The product align_metric * mask_pos as the element-wise path forms it (NaN and -0 included).
  const auto masked_align = [&](int64_t b, int64_t g, int64_t a) {
    return al_all[(b * m + g) * na + a] *
           (owner[static_cast<size_t>(b * na + a)] == g ? 1.0f : 0.0f);
  };
  const auto masked_overlap = [&](int64_t b, int64_t g, int64_t a) {
    return ov_all[(b * m + g) * na + a] *
           (owner[static_cast<size_t>(b * na + a)] == g ? 1.0f : 0.0f);
  };

  if (topk2 != topk) {
    // Second pass: each GT keeps its top-k2 positives by alignment.
    auto dense = at::empty({bs, m, na}, opts);
    float* d = dense.data_ptr<float>();
    at::parallel_for(0, bs * m, 1, [&](int64_t begin, int64_t end) {
      for (int64_t row = begin; row < end; ++row) {
        for (int64_t a = 0; a < na; ++a) d[row * na + a] = masked_align(row / m, row % m, a);
      }
    });
    const int64_t k2 = std::min(topk2, na);
    const auto idx2 = std::get<1>(dense.topk(k2, -1, /*largest=*/true)).contiguous();
    const int64_t* i2_all = idx2.data_ptr<int64_t>();
    at::parallel_for(0, bs, 1, [&](int64_t begin, int64_t end) {
      std::vector<char> kept(static_cast<size_t>(na));
      for (int64_t b = begin; b < end; ++b) {
        std::fill(kept.begin(), kept.end(), 0);
        int64_t* own = owner.data() + b * na;
        for (int64_t g = 0; g < m; ++g) {
          const int64_t* picks = i2_all + (b * m + g) * k2;
          for (int64_t j = 0; j < k2; ++j) {
            if (own[picks[j]] == g) kept[static_cast<size_t>(picks[j])] = 1;
          }
        }
        for (int64_t a = 0; a < na; ++a) {
          if (!kept[static_cast<size_t>(a)]) own[a] = -1;
        }
      }
    });
  }

  // The assigned GT, the foreground, and the normalisation
  //   norm = max over GTs of (align * mask_pos) * max_a(overlap * mask_pos) / (max_a(align *
  //   mask_pos) + eps),
  // each max with ATen's NaN rule.
  int64_t* gt_idx = out.target_gt_idx.data_ptr<int64_t>();
  float* fg = out.fg_mask.data_ptr<float>();
  float* norm = out.norm.data_ptr<float>();
  const float eps_f = static_cast<float>(eps);
  at::parallel_for(0, bs, 1, [&](int64_t begin, int64_t end) {
    for (int64_t b = begin; b < end; ++b) {
      const int64_t* own = owner.data() + b * na;
      for (int64_t a = 0; a < na; ++a) {
        gt_idx[b * na + a] = std::max<int64_t>(own[a], 0);
        fg[b * na + a] = own[a] >= 0 ? 1.0f : 0.0f;
        norm[b * na + a] = -std::numeric_limits<float>::infinity();
      }
      for (int64_t g = 0; g < m; ++g) {
        float pos_align = -std::numeric_limits<float>::infinity();
        float pos_overlap = -std::numeric_limits<float>::infinity();
        for (int64_t a = 0; a < na; ++a) {
          const float al = masked_align(b, g, a), ov = masked_overlap(b, g, a);
          if (beats(al, pos_align)) pos_align = al;
          if (beats(ov, pos_overlap)) pos_overlap = ov;
        }
        const float denominator = pos_align + eps_f;
        for (int64_t a = 0; a < na; ++a) {
          const float value = masked_align(b, g, a) * pos_overlap / denominator;
          if (beats(value, norm[b * na + a])) norm[b * na + a] = value;
        }
      }
    }
  });
  return out;
}

}  // namespace trainer::loss
