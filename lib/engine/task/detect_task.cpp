// See detect_task.h.
// Tested by tests/engine/task/test_task_definition.cpp: DetectTask: (B) metrics, val loss and COCO
//   extras by column name, fitness.
#include "engine/task/detect_task.h"

#include <fmt/format.h>

#include <cmath>

#include "data/batch_plot.h"
#include "engine/task/box_scorer.h"

namespace trainer::engine {

std::vector<std::string> detection_loss_names(int reg_max) {
  return {"box_loss", "cls_loss", reg_max > 1 ? "dfl_loss" : "l1_loss"};
}

EpochColumns detection_columns(int reg_max) {
  EpochColumns c;
  c.loss_names = detection_loss_names(reg_max);
  c.metric_names = {"metrics/precision(B)", "metrics/recall(B)", "metrics/mAP50(B)",
                    "metrics/mAP50-95(B)"};
  c.extra_names = {"metrics/coco/AP", "metrics/coco/AP50"};
  return c;
}

std::unique_ptr<loss::YoloLoss> DetectTask::build_loss(const core::LossConfig& config,
                                                       model::YoloModelImpl& model,
                                                       const data::DatasetSpec& dataset) const {
  const int num_classes = dataset.nc();
  return std::make_unique<loss::YoloLoss>(num_classes, model.reg_max(), model.strides(),
                                          detection_gains(config), model.end2end());
}

EpochColumns DetectTask::columns(model::YoloModelImpl& model) const {
  return detection_columns(model.reg_max());
}

std::unique_ptr<TaskScorer> DetectTask::make_scorer(const ScorerSetup& setup) const {
  return std::make_unique<BoxScorer>(setup);
}

EpochValidation DetectTask::epoch_validation(const ValidationResult& val) const {
  EpochValidation v;
  const auto& m = val.metric;
  v.metrics = {m.precision, m.recall, m.map50, m.map50_95};
  const double nan = std::nan("");
  v.extras = {val.coco ? val.coco->stats[0] : nan, val.coco ? val.coco->stats[1] : nan};
  v.loss_items = val.loss_items;
  return v;
}

double DetectTask::fitness(const ValidationResult& result) const {
  return result.metric.fitness;
}

std::string format_detect_validation_table(const ValidationResult& r,
                                           const std::vector<std::string>& names, bool per_class) {
  std::string out = fmt::format("{:>22}{:>11}{:>11}{:>11}{:>11}{:>11}{:>11}{:>14}\n", "Class",
                                "Images", "Instances", "P", "R", "mAP50", "mAP50-95", "COCO AP");
  const auto& m = r.metric;
  const double coco_ap = r.coco ? r.coco->stats[0] : -1.0;
  out += fmt::format("{:>22}{:>11}{:>11}{:>11.3f}{:>11.3f}{:>11.3f}{:>11.3f}{:>14.3f}\n", "all",
                     r.images, m.num_gt, m.precision, m.recall, m.map50, m.map50_95, coco_ap);
  if (per_class) {
    for (const auto& c : m.per_class) {
      double class_coco = -1;
      if (r.coco) {
        for (const auto& pc : r.coco->per_category) {
          if (pc.name == names.at(c.class_id)) class_coco = pc.ap;
        }
      }
      out += fmt::format("{:>22}{:>11}{:>11}{:>11.3f}{:>11.3f}{:>11.3f}{:>11.3f}{:>14.3f}\n",
                         names.at(c.class_id), "", c.num_gt, c.precision, c.recall, c.ap50,
                         c.ap50_95, class_coco);
    }
  }
  out +=
      "(P, R, mAP50, mAP50-95: the reference trainer's metric; COCO AP: the COCO protocol, "
      "identical to pycocotools)\n";
  return out;
}

std::string DetectTask::validation_table(const ValidationResult& result,
                                         const std::vector<std::string>& names,
                                         bool per_class) const {
  return format_detect_validation_table(result, names, per_class);
}

void DetectTask::save_batch_preview(const data::Batch& batch, const std::vector<std::string>& names,
                                    const std::filesystem::path& file) const {
  data::save_batch_plot(batch, names, file);
}

void DetectTask::write_predictions(const ValidationResult& result,
                                   const std::vector<std::string>& /*names*/,
                                   const std::filesystem::path& file) const {
  eval::write_coco_results(result.detections, file);
}

}  // namespace trainer::engine
