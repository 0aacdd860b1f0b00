// Validation on the val split: predictions, both metrics, val loss, speed, COCO results.
//
// Why: the fit loop (every epoch, on a copy of the EMA weights), `trainer val` and the tests all
// score a model the same way. Two metrics side by side: the COCO protocol (identical to
// pycocotools, lib/eval/coco_eval.h) and the reference trainer's own metric (lib/eval/
// reference_metric.h), whose mAP50-95 is the fitness that picks the best checkpoint.
#pragma once

#include <torch/torch.h>

#include <array>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/config.h"
#include "data/coco_json.h"
#include "data/dataset.h"
#include "data/dataset_yaml.h"
#include "data/loader.h"
#include "eval/coco_eval.h"
#include "eval/coco_results.h"
#include "eval/reference_metric.h"
#include "geometry/rotated_box.h"
#include "loss/detection_loss.h"
#include "model/detection_model.h"

namespace trainer::engine {

// A box predicted on the letterboxed input -> original-image pixels (8.4.190's scale_boxes): minus
// the padding, divided by the axis's gain, clipped to the image; an inverted box (x2 < x1) is kept
// as it is, as the reference keeps it.
std::array<float, 4> to_original_xyxy(const std::array<float, 4>& xyxy,
                                      const data::ImageGeometry& geometry);

// A point predicted on the letterboxed input -> original-image pixels (8.4.190's scale_coords:
// minus the padding, divided by the axis's gain, clipped to the image).
std::array<float, 2> to_original_point(float x, float y, const data::ImageGeometry& geometry);

// One image's ground truth in letterboxed input pixels, where the reference metric matches.
struct LetterboxedTruth {
  std::vector<std::array<float, 4>> boxes;  // xyxy
  std::vector<int> classes;
  std::vector<float> keypoints;              // pose: K x (x, y, v) per box, pixels; empty otherwise
  std::vector<geometry::RotatedBox> rboxes;  // OBB: [cx, cy, w, h] pixels and the angle
};

// Splits a batch's labels (n, 6) [image, class, cx, cy, w, h] (normalised to the letterboxed
// input of width x height) into per-image xyxy pixel boxes, as 8.4.190's _prepare_batch does.
// `keypoints` (n, K, 3) normalised (pose; undefined or K = 0 otherwise) are scaled the same way,
// and OBB `rboxes` (n, 5) (cx, w by the width, cy, h by the height, the angle as it is).
std::vector<LetterboxedTruth> letterboxed_truth(const at::Tensor& labels, int64_t batch_size,
                                                float width, float height,
                                                const at::Tensor& keypoints = {},
                                                const at::Tensor& rboxes = {});

// A rotated box predicted on the letterboxed input -> original pixels (8.4.190's scale_boxes with
// xywh: the centre minus the padding, centre and sides over each axis's gain, no clipping).
geometry::RotatedBox to_original_rbox(const geometry::RotatedBox& box,
                                      const data::ImageGeometry& geometry);

// The OBB validation's confidence threshold when `conf` is left at its default (the reference's).
inline constexpr double kObbValidationConf = 0.01;

struct ValidationOptions {
  int64_t max_batches = 0;  // 0 = the whole split (the seeds' short fit uses 4)
  bool coco = true;         // also run the COCO protocol
  // Return every detection (for predictions.json). Segmentation: masks are then made at the input
  // resolution for the (M) metric too, as the reference's save_json validation does
  // (engine/task/segment_mask_validation.h), and encoded as RLE at the original size.
  bool keep_detections = false;
  model::PredictOptions predict;  // conf 0.001, iou 0.7, max_det 300 (the reference's val values)

  // From the config's conf (0.01 for an OBB run left at the default 0.001), iou, max_det and
  // val_batches.
  static ValidationOptions from_config(const core::TrainConfig& config);
};

struct ValidationResult {
  eval::ReferenceMetric::Result metric;  // the reference's metric (P, R, mAP50, mAP50-95)
  std::optional<eval::CocoStats> coco;   // the COCO protocol's 12 stats
  // Pose models: the reference's metric on keypoint OKS (its (P) columns), and the COCO
  // keypoint protocol's 10 stats.
  std::optional<eval::ReferenceMetric::Result> pose_metric;
  std::optional<eval::CocoStats> coco_keypoints;
  // Segmentation models: the reference's metric on mask IoU (its (M) columns), and the COCO segm
  // protocol's 12 stats (only with keep_detections, whose masks are encoded as RLE).
  std::optional<eval::ReferenceMetric::Result> mask_metric;
  std::optional<eval::CocoStats> coco_masks;
  std::vector<double> loss_items;  // the criterion's items (o2o for end-to-end); empty without one
  int64_t images = 0;
  double preprocess_ms = 0, inference_ms = 0, postprocess_ms = 0;  // per image
  std::vector<eval::Detection> detections;  // when keep_detections (COCO results form)
};

class Validator {
 public:
  // `standalone`: `trainer val` (batches of `batch`); otherwise the fit loop's (2 x batch).
  Validator(std::shared_ptr<const data::DatasetIndex> val_set, const data::DatasetSpec& spec,
            const core::TrainConfig& config, c10::Device device, bool standalone = false);

  // Scores `model` (switched to eval mode for the call, its mode restored). `criterion` (optional)
  // gives the val loss.
  ValidationResult run(model::DetectionModelImpl& model, loss::DetectionLoss* criterion,
                       const ValidationOptions& options);

  // The category id written for class `cls` (COCO: the 91-id map; a json dataset: its ids).
  int64_t category_id(int cls) const;
  // The ground truth the COCO protocol uses (the val json when the dataset has one).
  const data::CocoFile& ground_truth() const { return ground_truth_; }
  const data::DatasetIndex& dataset() const { return *val_set_; }

 private:
  int64_t image_id(int64_t dataset_index) const;

  std::shared_ptr<const data::DatasetIndex> val_set_;
  core::TrainConfig config_;
  c10::Device device_;
  std::unique_ptr<data::Loader> loader_;
  std::vector<int64_t> category_ids_;  // per class
  std::vector<int64_t> image_ids_;     // per dataset index
  data::CocoFile ground_truth_;
  std::vector<double> kpt_sigmas_;  // pose: the OKS sigmas (dataset's, COCO's or 1/K)
};

// The table users read after each validation: the header line and one "all" row (and one row per
// class when `per_class`), with both metrics.
std::string format_validation_table(const ValidationResult& result,
                                    const std::vector<std::string>& names, bool per_class);

// Writes detections in COCO results form, atomically.
void write_predictions_json(const std::vector<eval::Detection>& detections,
                            const std::filesystem::path& file);

}  // namespace trainer::engine
