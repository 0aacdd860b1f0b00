// The segmentation task: boxes with instance masks, the (B) and (M) metrics, COCO RLE predictions.
//
// Why: YOLO26-seg and YOLO11-seg train on the same loop as detection; this definition supplies
// what differs (reference-tasks.md section 4): the segment head, the segmentation loss and its
// five items (box, seg, cls, dfl | l1, sem), box and mask-IoU metrics with fitness =
// mAP50-95(B) + mAP50-95(M), previews with the masks drawn, and predictions.json entries with a
// "segmentation" RLE.
#pragma once

#include <string>
#include <vector>

#include "engine/task/task_definition.h"

namespace trainer::engine {

// The segmentation columns of results.csv: the loss items of `loss_names`, the reference's four
// (B) and four (M) metrics, then trainer's COCO box AP, AP50 and COCO mask AP, AP50 (NaN when not
// computed: the mask protocol runs with predictions.json).
EpochColumns segment_columns(const std::vector<std::string>& loss_names);

// The table printed after a segmentation validation: box and mask metrics side by side.
std::string format_segment_validation_table(const ValidationResult& result,
                                            const std::vector<std::string>& names, bool per_class);

class SegmentTask : public TaskDefinition {
 public:
  core::Task task() const override { return core::Task::kSegment; }
  data::PolygonKind label_polygons() const override { return data::PolygonKind::kOutlines; }
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
