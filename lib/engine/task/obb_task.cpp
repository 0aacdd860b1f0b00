// See obb_task.h.
// Tested by tests/engine/task/test_task_definition.cpp: ObbTask: four loss items, (B) metrics only,
//   fitness, table with ProbIoU and no COCO.
#include "engine/task/obb_task.h"

#include <fmt/format.h>

#include "data/batch_plot.h"
#include "engine/task/obb_dota_output.h"
#include "engine/task/obb_scorer.h"
#include "loss/obb_loss.h"

namespace trainer::engine {

EpochColumns obb_columns(const std::vector<std::string>& loss_names) {
  EpochColumns c;
  c.loss_names = loss_names;
  c.metric_names = {"metrics/precision(B)", "metrics/recall(B)", "metrics/mAP50(B)",
                    "metrics/mAP50-95(B)"};
  return c;
}

std::unique_ptr<loss::YoloLoss> ObbTask::build_loss(const core::LossConfig& config,
                                                    model::YoloModelImpl& model,
                                                    const data::DatasetSpec& dataset) const {
  return std::make_unique<loss::ObbLoss>(dataset.nc(), model.reg_max(), model.strides(),
                                         detection_gains(config), config.angle, model.end2end());
}

EpochColumns ObbTask::columns(model::YoloModelImpl& model) const {
  return obb_columns(loss::obb_loss_item_names(model.reg_max()));
}

std::unique_ptr<TaskScorer> ObbTask::make_scorer(const ScorerSetup& setup) const {
  return std::make_unique<ObbScorer>(setup);
}

EpochValidation ObbTask::epoch_validation(const ValidationResult& val) const {
  EpochValidation v;
  const auto& m = val.metric;
  v.metrics = {m.precision, m.recall, m.map50, m.map50_95};
  v.loss_items = val.loss_items;
  return v;
}

double ObbTask::fitness(const ValidationResult& result) const {
  return result.metric.fitness;
}

std::string format_obb_validation_table(const ValidationResult& r,
                                        const std::vector<std::string>& names, bool per_class) {
  const auto row = [](const std::string& name, const std::string& images, int64_t instances,
                      double p, double recall, double map50, double map) {
    return fmt::format("{:>22}{:>11}{:>11}{:>11.3f}{:>11.3f}{:>11.3f}{:>11.3f}\n", name, images,
                       instances, p, recall, map50, map);
  };
  std::string out = fmt::format("{:>22}{:>11}{:>11}{:>11}{:>11}{:>11}{:>11}\n", "Class", "Images",
                                "Instances", "P", "R", "mAP50", "mAP50-95");
  const auto& m = r.metric;
  out += row("all", std::to_string(r.images), m.num_gt, m.precision, m.recall, m.map50, m.map50_95);
  if (per_class) {
    for (const auto& c : m.per_class) {
      out += row(names.at(c.class_id), "", c.num_gt, c.precision, c.recall, c.ap50, c.ap50_95);
    }
  }
  return out + "(the reference trainer's metric, rotated boxes matched by ProbIoU)\n";
}

std::string ObbTask::validation_table(const ValidationResult& result,
                                      const std::vector<std::string>& names, bool per_class) const {
  return format_obb_validation_table(result, names, per_class);
}

void ObbTask::save_batch_preview(const data::Batch& batch, const std::vector<std::string>& names,
                                 const std::filesystem::path& file) const {
  data::save_batch_plot(batch, names, file);  // draws batch.rboxes when the batch has them
}

void ObbTask::write_predictions(const ValidationResult& result,
                                const std::vector<std::string>& names,
                                const std::filesystem::path& file) const {
  eval::write_coco_results(result.detections, file);
  std::vector<DotaDetection> dota;
  dota.reserve(result.detections.size());
  for (const auto& d : result.detections) {
    dota.push_back(
        {std::filesystem::path(d.file_name).stem().string(), d.class_index, d.score, d.rbox});
  }
  write_dota_predictions(dota, names, file.parent_path());
}

}  // namespace trainer::engine
