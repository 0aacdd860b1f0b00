// See pose_task.h.
// Tested by tests/engine/task/test_task_definition.cpp: PoseTask: (B)/(P) metrics, COCO extras,
//   fitness = box + pose, table, missing kpt_shape error.
#include "engine/task/pose_task.h"

#include <fmt/format.h>

#include <optional>

#include "core/error.h"
#include "data/batch_plot.h"
#include "engine/task/pose_scorer.h"
#include "engine/task/two_metric_task.h"
#include "loss/pose_loss.h"

namespace trainer::engine {

EpochColumns pose_columns(const std::vector<std::string>& loss_names) {
  return two_metric_columns(loss_names, "P");
}

std::unique_ptr<loss::YoloLoss> PoseTask::build_loss(const core::LossConfig& config,
                                                     model::YoloModelImpl& model,
                                                     const data::DatasetSpec& dataset) const {
  const model::KeypointShape kpt = model.keypoint_shape();
  loss::PoseGains pose_gains;
  pose_gains.pose = config.pose;
  pose_gains.kobj = config.kobj;
  pose_gains.rle = config.rle;
  std::optional<loss::KeypointFlow> flow;
  if (!model.flow().is_empty())
    flow = loss::keypoint_flow(model.flow());  // YOLO26: PoseLoss26 with RLE
  return std::make_unique<loss::PoseLoss>(
      dataset.nc(), model.reg_max(), model.strides(), detection_gains(config), pose_gains,
      model.end2end(), kpt.count, kpt.dims, dataset.kpt_oks_sigmas, std::move(flow));
}

EpochColumns PoseTask::columns(model::YoloModelImpl& model) const {
  return pose_columns(loss::pose_loss_item_names(model.reg_max(), !model.flow().is_empty()));
}

std::unique_ptr<TaskScorer> PoseTask::make_scorer(const ScorerSetup& setup) const {
  return std::make_unique<PoseScorer>(setup);
}

EpochValidation PoseTask::epoch_validation(const ValidationResult& val) const {
  return two_metric_epoch_validation(val, val.second_metric, val.second_coco);
}

double PoseTask::fitness(const ValidationResult& result) const {
  // The reference's PoseMetrics.fitness: box mAP50-95 + pose mAP50-95.
  return result.metric.fitness + (result.second_metric ? result.second_metric->fitness : 0.0);
}

std::string format_pose_validation_table(const ValidationResult& r,
                                         const std::vector<std::string>& names, bool per_class) {
  std::string out = format_two_metric_table(
      r, r.second_metric.value_or(eval::ReferenceMetric::Result{}), "Pose", names, per_class);
  out += "(Box and Pose P, R, mAP50, mAP50-95: the reference trainer's metric; Pose matches by ";
  out += "keypoint OKS with area = box x 0.53)\n";
  if (r.coco) out += fmt::format("COCO protocol: box AP {:.3f}", r.coco->stats[0]);
  if (r.second_coco) out += fmt::format(", keypoint AP {:.3f}", r.second_coco->stats[0]);
  if (r.coco) out += " (identical to pycocotools)\n";
  return out;
}

std::string PoseTask::validation_table(const ValidationResult& result,
                                       const std::vector<std::string>& names,
                                       bool per_class) const {
  return format_pose_validation_table(result, names, per_class);
}

void PoseTask::save_batch_preview(const data::Batch& batch, const std::vector<std::string>& names,
                                  const std::filesystem::path& file) const {
  data::save_batch_plot(batch, names, file);  // draws the keypoints and the COCO skeleton
}

void PoseTask::write_predictions(const ValidationResult& result,
                                 const std::vector<std::string>& /*names*/,
                                 const std::filesystem::path& file) const {
  eval::write_coco_results(result.detections, file);  // entries carry "keypoints"
}

}  // namespace trainer::engine
