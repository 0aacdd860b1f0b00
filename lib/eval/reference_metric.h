// The reference trainer's own detection metric (Ultralytics `match_predictions` + `ap_per_class`),
// accumulated image by image during validation. Labelled "reference metric" wherever it is shown:
// it is NOT the COCO protocol (see coco_eval.h for that).
//
// Why keep it: the reference reports these numbers (P, R, mAP50, mAP50-95) every epoch and picks
// its best checkpoint by them, so side-by-side comparisons need the same rule: matching greedy by
// IoU (not by score), no crowd regions or area ranges, up to 300 detections per image, AP as the
// trapezoid under the precision envelope sampled at 101 recall points, and P and R taken at the
// confidence that maximises the class-mean F1.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "core/byte_stream.h"

namespace trainer::eval {

constexpr int kReferenceNumIou = 10;
using ReferenceCorrect = std::array<bool, kReferenceNumIou>;

// IoU thresholds 0.50:0.05:0.95 in float32, as torch.linspace(0.5, 0.95, 10).
const std::array<float, kReferenceNumIou>& reference_iou_thresholds();

// The reference's box_iou for one (ground truth, prediction) pair of xyxy boxes, in float32:
// inter / (area_gt + area_pred - inter + 1e-7).
float reference_box_iou(const std::array<float, 4>& gt, const std::array<float, 4>& pred);

// match_predictions (8.4.190): which predictions are true positives at each IoU threshold. The
// predictions, in the given order (descending confidence), each claim per threshold the unclaimed
// same-class ground truth with the highest IoU (the first on ties) and are correct when it reaches
// the threshold; predictions without any IoU >= 0.5 are skipped.
std::vector<ReferenceCorrect> reference_match(const std::vector<std::array<float, 4>>& pred_boxes,
                                              const std::vector<int>& pred_classes,
                                              const std::vector<std::array<float, 4>>& gt_boxes,
                                              const std::vector<int>& gt_classes);

// The same matching on any overlap: `overlaps` is [gt][pred] row-major (m x n), box IoU or
// keypoint OKS (the pose metric's second matching). Different classes never match.
std::vector<ReferenceCorrect> reference_match_overlaps(const std::vector<float>& overlaps,
                                                       const std::vector<int>& pred_classes,
                                                       const std::vector<int>& gt_classes);

// compute_ap: AP from one recall/precision curve (detections sorted by confidence): sentinels
// (0, 1) before and (last recall, 0), (1, 0) after (8.4.190), precision envelope, np.trapezoid
// over np.interp at linspace(0, 1, 101).
double reference_ap(const std::vector<double>& recall, const std::vector<double>& precision);

class ReferenceMetric {
 public:
  explicit ReferenceMetric(int num_classes, int max_det = 300);

  // One image: predictions (n) as xyxy pixels + score + class; ground truth (m) xyxy pixels +
  // class. Predictions beyond max_det (by score) are dropped. Throws std::invalid_argument for
  // mismatched sizes or a class outside [0, num_classes).
  void add_image(const std::vector<std::array<float, 4>>& pred_boxes,
                 const std::vector<float>& scores, const std::vector<int>& pred_classes,
                 const std::vector<std::array<float, 4>>& gt_boxes,
                 const std::vector<int>& gt_classes);

  // One image scored by a given overlap matrix [gt][pred] (m x n, in the predictions' order)
  // instead of box IoU: the pose metric's keypoint OKS. Same max_det rule and checks.
  void add_image_overlaps(const std::vector<float>& overlaps, const std::vector<float>& scores,
                          const std::vector<int>& pred_classes, const std::vector<int>& gt_classes);

  // Adds another metric's images (e.g. from another rank or worker).
  void merge(const ReferenceMetric& other);

  // Writes the images added so far (bit-exact) and removes them: what a rank of a sharded
  // validation sends rank 0 for each batch. append_taken() adds such bytes as if add_image had
  // been called again for the same images in the same order. Throws std::runtime_error for bytes
  // of another number of classes or inconsistent lengths (and the reader's truncation errors).
  void take_images(core::ByteWriter& out);
  void append_taken(core::ByteReader& in);

  struct PerClass {
    int class_id = 0;
    int64_t num_gt = 0;
    int64_t num_pred = 0;
    double precision = 0, recall = 0, f1 = 0;  // at the best mean-F1 confidence
    double ap50 = 0, ap50_95 = 0;
    std::array<double, kReferenceNumIou> ap{};
  };
  struct Result {
    double precision = 0, recall = 0;  // class means at the best mean-F1 confidence
    double map50 = 0, map75 = 0, map50_95 = 0;
    double fitness = 0;               // = map50_95 (weights [0, 0, 0, 1])
    std::vector<PerClass> per_class;  // classes with ground truth, ascending
    int64_t num_images = 0, num_gt = 0, num_pred = 0;
  };
  // Scores over everything added so far (the reference's ap_per_class + DetMetrics means). All
  // zeros when there is no ground truth.
  Result compute() const;

  int num_classes() const { return num_classes_; }
  int64_t num_images() const { return num_images_; }

 private:
  int num_classes_;
  int max_det_;
  int64_t num_images_ = 0;
  std::vector<float> conf_;
  std::vector<int> pred_class_;
  std::vector<ReferenceCorrect> correct_;
  std::vector<int64_t> gt_per_class_;
};

}  // namespace trainer::eval
