// The pose task: boxes with keypoints, the (B) and (P) metrics, COCO keypoint predictions.
//
// Why: YOLO26-pose and YOLO11-pose train on the same loop as detection; this definition supplies
// what differs (reference-tasks.md section 2): the pose head built for the dataset's kpt_shape,
// the pose loss and its items, box and keypoint-OKS metrics with fitness = mAP50-95(B) +
// mAP50-95(P), and predictions.json entries with keypoints.
#pragma once

#include <string>
#include <vector>

#include "engine/task/task_definition.h"

namespace trainer::engine {

// The pose columns of results.csv: the loss items of `loss_names`, the reference's four (B) and
// four (P) metrics, then trainer's COCO box AP, AP50 and COCO keypoint AP, AP50.
EpochColumns pose_columns(const std::vector<std::string>& loss_names);

// The table printed after a pose validation: box and pose metrics side by side.
std::string format_pose_validation_table(const ValidationResult& result,
                                         const std::vector<std::string>& names, bool per_class);

class PoseTask : public TaskDefinition {
 public:
  core::Task task() const override { return core::Task::kPose; }
  // Throws core::ConfigError when the dataset has no kpt_shape.
  std::unique_ptr<loss::YoloLoss> build_loss(const core::LossConfig& gains,
                                             model::YoloModelImpl& model,
                                             const data::DatasetSpec& dataset) const override;
  // No: on a batch without objects the YOLO26 keypoint-sigma branch (the RLE loss's) gets no
  // gradient, as in the reference.
  bool loss_reaches_every_parameter() const override { return false; }
  EpochColumns columns(model::YoloModelImpl& model) const override;
  std::unique_ptr<TaskScorer> make_scorer(const ScorerSetup& setup) const override;
  EpochValidation epoch_validation(const ValidationResult& result) const override;
  double fitness(const ValidationResult& result) const override;
  std::string validation_table(const ValidationResult& result,
                               const std::vector<std::string>& names,
                               bool per_class) const override;
  void save_batch_preview(const data::Batch& batch, const std::vector<std::string>& names,
                          const std::filesystem::path& file) const override;
  void write_predictions(const ValidationResult& result, const std::vector<std::string>& names,
                         const std::filesystem::path& file) const override;
};

}  // namespace trainer::engine
