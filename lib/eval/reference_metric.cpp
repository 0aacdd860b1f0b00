// The reference trainer's metric; see reference_metric.h. Each step follows the reference's numpy
// code (ultralytics/utils/metrics.py `ap_per_class`, `compute_ap`, `smooth`; engine/validator.py
// `match_predictions`).
#include "eval/reference_metric.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>
#include <string>

#include "eval/numeric.h"

namespace trainer::eval {
namespace {

constexpr double kEps = 1e-16;  // ap_per_class eps

// smooth(y, f): box filter of odd width round(len * f * 2) // 2 + 1, the ends padded with the end
// values, 'valid' convolution so the output has the input's length.
std::vector<double> smooth(const std::vector<double>& y, double f) {
  const long n = static_cast<long>(y.size());
  const long nf = static_cast<long>(std::nearbyint(static_cast<double>(n) * f * 2)) / 2 + 1;
  const long half = nf / 2;
  std::vector<double> out(y.size());
  for (long i = 0; i < n; ++i) {
    double sum = 0;
    for (long j = i - half; j <= i + half; ++j)
      sum += y[static_cast<size_t>(std::clamp(j, 0L, n - 1))];
    out[static_cast<size_t>(i)] = sum / static_cast<double>(nf);
  }
  return out;
}

double mean(const std::vector<double>& v) {
  return v.empty() ? 0.0 : numpy_mean(v);
}

}  // namespace

const std::array<float, kReferenceNumIou>& reference_iou_thresholds() {
  static const std::array<float, kReferenceNumIou> thresholds = [] {
    std::array<float, kReferenceNumIou> t{};
    for (int i = 0; i < kReferenceNumIou; ++i)
      t[static_cast<size_t>(i)] = static_cast<float>(0.5 + 0.05 * i);
    return t;
  }();
  return thresholds;
}

float reference_box_iou(const std::array<float, 4>& a, const std::array<float, 4>& b) {
  const float iw = std::max(std::min(a[2], b[2]) - std::max(a[0], b[0]), 0.0f);
  const float ih = std::max(std::min(a[3], b[3]) - std::max(a[1], b[1]), 0.0f);
  const float inter = iw * ih;
  const float area_a = (a[2] - a[0]) * (a[3] - a[1]);
  const float area_b = (b[2] - b[0]) * (b[3] - b[1]);
  return inter / (area_a + area_b - inter + 1e-7f);
}

std::vector<ReferenceCorrect> reference_match(const std::vector<std::array<float, 4>>& pred_boxes,
                                              const std::vector<int>& pred_classes,
                                              const std::vector<std::array<float, 4>>& gt_boxes,
                                              const std::vector<int>& gt_classes) {
  const size_t n = pred_boxes.size();
  const size_t m = gt_boxes.size();
  std::vector<float> iou(m * n);  // [gt][pred]
  for (size_t g = 0; g < m; ++g) {
    for (size_t p = 0; p < n; ++p) iou[g * n + p] = reference_box_iou(gt_boxes[g], pred_boxes[p]);
  }
  return reference_match_overlaps(iou, pred_classes, gt_classes);
}

std::vector<ReferenceCorrect> reference_match_overlaps(const std::vector<float>& overlaps,
                                                       const std::vector<int>& pred_classes,
                                                       const std::vector<int>& gt_classes) {
  const size_t n = pred_classes.size();
  const size_t m = gt_classes.size();
  if (overlaps.size() != m * n) {
    throw std::invalid_argument("reference_match_overlaps: " + std::to_string(overlaps.size()) +
                                " overlaps for " + std::to_string(m) + " ground truths x " +
                                std::to_string(n) + " predictions");
  }
  std::vector<ReferenceCorrect> correct(n, ReferenceCorrect{});
  if (n == 0 || m == 0) return correct;
  std::vector<float> iou(overlaps);  // zero where the classes differ
  for (size_t g = 0; g < m; ++g) {
    for (size_t p = 0; p < n; ++p) {
      if (gt_classes[g] != pred_classes[p]) iou[g * n + p] = 0.0f;
    }
  }
  // 8.4.190: detections in the given (descending confidence) order, each taking, per threshold,
  // the unclaimed ground truth with the highest IoU (the first on ties), correct when that IoU
  // reaches the threshold; a detection with no IoU >= 0.5 anywhere is skipped.
  const auto& thresholds = reference_iou_thresholds();
  std::vector<uint8_t> claimed(m * kReferenceNumIou, 0);  // [gt][threshold]
  for (size_t p = 0; p < n; ++p) {
    bool candidate = false;
    for (size_t g = 0; g < m && !candidate; ++g) candidate = iou[g * n + p] >= thresholds[0];
    if (!candidate) continue;
    for (size_t t = 0; t < static_cast<size_t>(kReferenceNumIou); ++t) {
      size_t best = 0;
      float best_iou = -1.0f;
      for (size_t g = 0; g < m; ++g) {
        const float available = claimed[g * kReferenceNumIou + t] ? 0.0f : iou[g * n + p];
        if (available > best_iou) best_iou = available, best = g;
      }
      if (best_iou >= thresholds[t]) {
        correct[p][t] = true;
        claimed[best * kReferenceNumIou + t] = 1;
      }
    }
  }
  return correct;
}

double reference_ap(const std::vector<double>& recall, const std::vector<double>& precision) {
  // 8.4.190's sentinels: the curve ends at (last recall, 0) before (1, 0), so precision drops to
  // zero right after the last recall reached (older references interpolated down to recall 1).
  std::vector<double> mrec = {0.0};
  mrec.insert(mrec.end(), recall.begin(), recall.end());
  mrec.push_back(recall.empty() ? 1.0 : recall.back());
  mrec.push_back(1.0);
  std::vector<double> mpre = {1.0};
  mpre.insert(mpre.end(), precision.begin(), precision.end());
  mpre.push_back(0.0);
  mpre.push_back(0.0);
  for (size_t i = mpre.size() - 1; i-- > 0;) mpre[i] = std::max(mpre[i], mpre[i + 1]);
  const std::vector<double> x = linspace(0.0, 1.0, 101);
  std::vector<double> y(x.size());
  for (size_t i = 0; i < x.size(); ++i) y[i] = interp(x[i], mrec, mpre, mpre.front(), mpre.back());
  std::vector<double> terms(x.size() - 1);
  for (size_t i = 0; i + 1 < x.size(); ++i) terms[i] = (x[i + 1] - x[i]) * (y[i + 1] + y[i]) / 2.0;
  return pairwise_sum(terms.data(), terms.size());
}

ReferenceMetric::ReferenceMetric(int num_classes, int max_det)
    : num_classes_(num_classes),
      max_det_(max_det),
      gt_per_class_(static_cast<size_t>(std::max(num_classes, 0)), 0) {
  if (num_classes <= 0)
    throw std::invalid_argument("ReferenceMetric: num_classes must be positive");
  if (max_det <= 0) throw std::invalid_argument("ReferenceMetric: max_det must be positive");
}

namespace {

void check_sizes(size_t preds, size_t scores, size_t classes) {
  if (scores != preds || classes != preds) {
    throw std::invalid_argument("ReferenceMetric::add_image: " + std::to_string(preds) +
                                " predictions, " + std::to_string(scores) + " scores, " +
                                std::to_string(classes) + " classes");
  }
}

}  // namespace

void ReferenceMetric::add_image(const std::vector<std::array<float, 4>>& pred_boxes,
                                const std::vector<float>& scores,
                                const std::vector<int>& pred_classes,
                                const std::vector<std::array<float, 4>>& gt_boxes,
                                const std::vector<int>& gt_classes) {
  check_sizes(pred_boxes.size(), scores.size(), pred_classes.size());
  if (gt_classes.size() != gt_boxes.size()) {
    throw std::invalid_argument("ReferenceMetric::add_image: " + std::to_string(gt_boxes.size()) +
                                " ground-truth boxes, " + std::to_string(gt_classes.size()) +
                                " classes");
  }
  const size_t n = pred_boxes.size();
  std::vector<float> iou(gt_boxes.size() * n);  // [gt][pred]
  for (size_t g = 0; g < gt_boxes.size(); ++g) {
    for (size_t p = 0; p < n; ++p) iou[g * n + p] = reference_box_iou(gt_boxes[g], pred_boxes[p]);
  }
  add_image_overlaps(iou, scores, pred_classes, gt_classes);
}

void ReferenceMetric::add_image_overlaps(const std::vector<float>& overlaps,
                                         const std::vector<float>& scores,
                                         const std::vector<int>& pred_classes,
                                         const std::vector<int>& gt_classes) {
  const size_t n = pred_classes.size();
  const size_t m = gt_classes.size();
  check_sizes(n, scores.size(), n);
  if (overlaps.size() != m * n) {
    throw std::invalid_argument("ReferenceMetric::add_image: " + std::to_string(overlaps.size()) +
                                " overlaps for " + std::to_string(m) + " ground truths x " +
                                std::to_string(n) + " predictions");
  }
  auto check_class = [&](int c, const char* what) {
    if (c < 0 || c >= num_classes_) {
      throw std::invalid_argument(std::string("ReferenceMetric::add_image: ") + what + " class " +
                                  std::to_string(c) + " outside [0, " +
                                  std::to_string(num_classes_) + ")");
    }
  };
  for (int c : pred_classes) check_class(c, "prediction");
  for (int c : gt_classes) check_class(c, "ground-truth");

  // Keep the max_det highest scores (stable), as the reference's postprocess does.
  std::vector<size_t> keep(n);
  std::iota(keep.begin(), keep.end(), size_t{0});
  if (keep.size() > static_cast<size_t>(max_det_)) {
    std::stable_sort(keep.begin(), keep.end(),
                     [&](size_t x, size_t y) { return scores[x] > scores[y]; });
    keep.resize(static_cast<size_t>(max_det_));
    std::sort(keep.begin(), keep.end());
  }
  const bool all_kept = keep.size() == n;  // the usual case: no copy of the matrix
  std::vector<int> classes;
  std::vector<float> kept_overlaps(all_kept ? 0 : m * keep.size());
  for (size_t j = 0; j < keep.size(); ++j) {
    const size_t i = keep[j];
    classes.push_back(pred_classes[i]);
    conf_.push_back(scores[i]);
    pred_class_.push_back(pred_classes[i]);
    if (all_kept) continue;
    for (size_t g = 0; g < m; ++g) kept_overlaps[g * keep.size() + j] = overlaps[g * n + i];
  }
  const auto correct =
      reference_match_overlaps(all_kept ? overlaps : kept_overlaps, classes, gt_classes);
  correct_.insert(correct_.end(), correct.begin(), correct.end());
  for (int c : gt_classes) ++gt_per_class_[static_cast<size_t>(c)];
  ++num_images_;
}

void ReferenceMetric::merge(const ReferenceMetric& other) {
  if (other.num_classes_ != num_classes_) {
    throw std::invalid_argument("ReferenceMetric::merge: different numbers of classes");
  }
  conf_.insert(conf_.end(), other.conf_.begin(), other.conf_.end());
  pred_class_.insert(pred_class_.end(), other.pred_class_.begin(), other.pred_class_.end());
  correct_.insert(correct_.end(), other.correct_.begin(), other.correct_.end());
  for (size_t c = 0; c < gt_per_class_.size(); ++c) gt_per_class_[c] += other.gt_per_class_[c];
  num_images_ += other.num_images_;
}

void ReferenceMetric::take_images(core::ByteWriter& out) {
  out.pod<int64_t>(num_images_);
  out.vec(conf_);
  out.vec(pred_class_);
  out.vec(correct_);
  out.vec(gt_per_class_);
  num_images_ = 0;
  conf_.clear();
  pred_class_.clear();
  correct_.clear();
  std::fill(gt_per_class_.begin(), gt_per_class_.end(), 0);
}

void ReferenceMetric::append_taken(core::ByteReader& in) {
  const auto images = in.pod<int64_t>();
  const auto conf = in.vec<float>();
  const auto classes = in.vec<int>();
  const auto correct = in.vec<ReferenceCorrect>();
  const auto gt = in.vec<int64_t>();
  if (gt.size() != gt_per_class_.size() || classes.size() != conf.size() ||
      correct.size() != conf.size() || images < 0) {
    throw std::runtime_error(
        "ReferenceMetric: taken images of another number of classes, or inconsistent lengths");
  }
  for (int c : classes) {
    if (c < 0 || c >= num_classes_)
      throw std::runtime_error("ReferenceMetric: a class out of range");
  }
  num_images_ += images;
  conf_.insert(conf_.end(), conf.begin(), conf.end());
  pred_class_.insert(pred_class_.end(), classes.begin(), classes.end());
  correct_.insert(correct_.end(), correct.begin(), correct.end());
  for (size_t c = 0; c < gt.size(); ++c) gt_per_class_[c] += gt[c];
}

ReferenceMetric::Result ReferenceMetric::compute() const {
  Result result;
  result.num_images = num_images_;
  result.num_pred = static_cast<int64_t>(conf_.size());
  for (int64_t n : gt_per_class_) result.num_gt += n;
  if (result.num_gt == 0) return result;

  // All predictions by confidence, highest first (stable).
  std::vector<size_t> order(conf_.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t x, size_t y) { return conf_[x] > conf_[y]; });

  const std::vector<double> x = linspace(0.0, 1.0, 1000);
  std::vector<std::vector<double>> p_curve, r_curve;
  for (int c = 0; c < num_classes_; ++c) {
    const int64_t n_l = gt_per_class_[static_cast<size_t>(c)];
    if (n_l == 0) continue;  // only classes present in the ground truth
    PerClass pc;
    pc.class_id = c;
    pc.num_gt = n_l;
    std::vector<double> neg_conf;
    std::vector<std::vector<double>> recall(kReferenceNumIou), precision(kReferenceNumIou);
    std::array<int64_t, kReferenceNumIou> tpc{};
    int64_t n_p = 0;
    for (size_t i : order) {
      if (pred_class_[i] != c) continue;
      ++n_p;
      neg_conf.push_back(-static_cast<double>(conf_[i]));
      for (size_t t = 0; t < kReferenceNumIou; ++t) {
        if (correct_[i][t]) ++tpc[t];
        const double tp = static_cast<double>(tpc[t]);
        const double fp = static_cast<double>(n_p - tpc[t]);
        recall[t].push_back(tp / (static_cast<double>(n_l) + kEps));
        precision[t].push_back(tp / (tp + fp));
      }
    }
    pc.num_pred = n_p;
    std::vector<double> pc_p(x.size(), 0.0), pc_r(x.size(), 0.0);
    if (n_p > 0) {
      for (size_t i = 0; i < x.size(); ++i) {
        pc_r[i] = interp(-x[i], neg_conf, recall[0], 0.0, recall[0].back());
        pc_p[i] = interp(-x[i], neg_conf, precision[0], 1.0, precision[0].back());
      }
      for (size_t t = 0; t < kReferenceNumIou; ++t)
        pc.ap[t] = reference_ap(recall[t], precision[t]);
    }
    pc.ap50 = pc.ap[0];
    pc.ap50_95 = mean(std::vector<double>(pc.ap.begin(), pc.ap.end()));
    p_curve.push_back(std::move(pc_p));
    r_curve.push_back(std::move(pc_r));
    result.per_class.push_back(pc);
  }

  // Best confidence: the argmax of the smoothed class-mean F1 curve.
  const size_t nc = result.per_class.size();
  std::vector<std::vector<double>> f1(nc, std::vector<double>(x.size()));
  std::vector<double> mean_f1(x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    std::vector<double> column(nc);
    for (size_t c = 0; c < nc; ++c) {
      f1[c][i] = 2 * p_curve[c][i] * r_curve[c][i] / (p_curve[c][i] + r_curve[c][i] + kEps);
      column[c] = f1[c][i];
    }
    mean_f1[i] = mean(column);
  }
  const std::vector<double> smoothed = smooth(mean_f1, 0.1);
  const size_t best =
      static_cast<size_t>(std::max_element(smoothed.begin(), smoothed.end()) - smoothed.begin());
  std::vector<double> ps, rs, ap50, ap75, all_ap;
  for (size_t c = 0; c < nc; ++c) {
    PerClass& pc = result.per_class[c];
    pc.precision = p_curve[c][best];
    pc.recall = r_curve[c][best];
    pc.f1 = f1[c][best];
    ps.push_back(pc.precision);
    rs.push_back(pc.recall);
    ap50.push_back(pc.ap[0]);
    ap75.push_back(pc.ap[5]);
    all_ap.insert(all_ap.end(), pc.ap.begin(), pc.ap.end());
  }
  result.precision = mean(ps);
  result.recall = mean(rs);
  result.map50 = mean(ap50);
  result.map75 = mean(ap75);
  result.map50_95 = mean(all_ap);
  result.fitness = result.map50_95;
  return result;
}

}  // namespace trainer::eval
