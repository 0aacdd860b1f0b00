// The OBB task: rotated boxes and classes, the (B) metrics on ProbIoU, rotated predictions.
//
// Why: YOLO26-obb and YOLO11-obb train on the same loop as detection; this definition supplies
// what differs (reference-tasks.md section 3): the OBB head, the OBB loss and its four items
// (box, cls, dfl | l1, angle), the reference's metric matched by ProbIoU (fitness = its
// mAP50-95(B); no COCO box protocol, as the reference runs none for OBB), previews with rotated
// boxes, and predictions.json entries with rbox and poly as the reference's OBB json.
#pragma once

#include <string>
#include <vector>

#include "engine/task/task_definition.h"

namespace trainer::engine {

// The OBB columns of results.csv: the loss items of `loss_names` and the reference's four (B)
// metrics.
EpochColumns obb_columns(const std::vector<std::string>& loss_names);

// The table printed after an OBB validation: the reference's four metrics (no COCO column).
std::string format_obb_validation_table(const ValidationResult& result,
                                        const std::vector<std::string>& names, bool per_class);

class ObbTask : public TaskDefinition {
 public:
  core::Task task() const override { return core::Task::kObb; }
  data::PolygonKind label_polygons() const override { return data::PolygonKind::kOrientedBoxes; }
  std::unique_ptr<loss::YoloLoss> build_loss(const core::LossConfig& gains,
                                             model::YoloModelImpl& model,
                                             const data::DatasetSpec& dataset) const override;
  EpochColumns columns(model::YoloModelImpl& model) const override;
  std::optional<double> validation_conf() const override { return 0.01; }
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
