// See segment_task.h.
// Tested by tests/engine/task/test_task_definition.cpp: SegmentTask: (B)/(M) metrics, COCO mask
//   extras, fitness = box + mask, table.
#include "engine/task/segment_task.h"

#include <fmt/format.h>

#include "data/batch_plot.h"
#include "engine/task/segment_scorer.h"
#include "engine/task/two_metric_task.h"
#include "loss/segment_loss.h"

namespace trainer::engine {

EpochColumns segment_columns(const std::vector<std::string>& loss_names) {
  return two_metric_columns(loss_names, "M");
}

std::unique_ptr<loss::YoloLoss> SegmentTask::build_loss(const core::LossConfig& config,
                                                        model::YoloModelImpl& model,
                                                        const data::DatasetSpec& dataset) const {
  return std::make_unique<loss::SegmentLoss>(dataset.nc(), model.reg_max(), model.strides(),
                                             detection_gains(config), model.end2end());
}

EpochColumns SegmentTask::columns(model::YoloModelImpl& model) const {
  return segment_columns(loss::segment_loss_item_names(model.reg_max()));
}

std::unique_ptr<TaskScorer> SegmentTask::make_scorer(const ScorerSetup& setup) const {
  return std::make_unique<SegmentScorer>(setup);
}

EpochValidation SegmentTask::epoch_validation(const ValidationResult& val) const {
  return two_metric_epoch_validation(val, val.second_metric, val.second_coco);
}

double SegmentTask::fitness(const ValidationResult& result) const {
  // The reference's SegmentMetrics.fitness: box mAP50-95 + mask mAP50-95.
  return result.metric.fitness + (result.second_metric ? result.second_metric->fitness : 0.0);
}

std::string format_segment_validation_table(const ValidationResult& r,
                                            const std::vector<std::string>& names, bool per_class) {
  std::string out = format_two_metric_table(
      r, r.second_metric.value_or(eval::ReferenceMetric::Result{}), "Mask", names, per_class);
  out += "(Box and Mask P, R, mAP50, mAP50-95: the reference trainer's metric; Mask matches by ";
  out += "mask IoU)\n";
  if (r.coco) out += fmt::format("COCO protocol: box AP {:.3f}", r.coco->stats[0]);
  if (r.second_coco) out += fmt::format(", mask AP {:.3f}", r.second_coco->stats[0]);
  if (r.coco) out += " (identical to pycocotools)\n";
  return out;
}

std::string SegmentTask::validation_table(const ValidationResult& result,
                                          const std::vector<std::string>& names,
                                          bool per_class) const {
  return format_segment_validation_table(result, names, per_class);
}

void SegmentTask::save_batch_preview(const data::Batch& batch,
                                     const std::vector<std::string>& names,
                                     const std::filesystem::path& file) const {
  data::save_batch_plot(batch, names, file);  // draws batch.masks when the batch has them
}

void SegmentTask::write_predictions(const ValidationResult& result,
                                    const std::vector<std::string>& /*names*/,
                                    const std::filesystem::path& file) const {
  eval::write_coco_results(result.detections, file);  // entries carry "segmentation" (RLE)
}

}  // namespace trainer::engine
