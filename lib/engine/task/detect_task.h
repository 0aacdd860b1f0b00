// The detection task: boxes and classes, the (B) metrics, COCO box predictions.
//
// Why: the base task the others extend (pose, segmentation and OBB add their own outputs to its
// boxes), written against TaskDefinition (engine/task/task_definition.h) so the engine's loop
// holds no detection assumptions of its own.
#pragma once

#include <string>
#include <vector>

#include "engine/task/task_definition.h"

namespace trainer::engine {

// The detection loss items' names: the third is "l1_loss" for a reg_max = 1 head (YOLO26) and
// "dfl_loss" otherwise, as the reference names them.
std::vector<std::string> detection_loss_names(int reg_max);

// The detection columns of results.csv: those loss items, the reference's four (B) metrics, and
// trainer's COCO AP and AP50.
EpochColumns detection_columns(int reg_max);

// The table users read after a detection validation: the header line and one "all" row (and one
// row per class when `per_class`), with the reference's metric and the COCO protocol's AP.
std::string format_detect_validation_table(const ValidationResult& result,
                                           const std::vector<std::string>& names, bool per_class);

class DetectTask : public TaskDefinition {
 public:
  core::Task task() const override { return core::Task::kDetect; }
  std::unique_ptr<loss::YoloLoss> build_loss(const core::LossConfig& gains,
                                             model::YoloModelImpl& model,
                                             const data::DatasetSpec& dataset) const override;
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
