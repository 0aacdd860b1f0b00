// See two_metric_task.h.
// Tested by tests/engine/task/test_task_definition.cpp: two_metric columns/epoch_validation/table
//   via the pose and segment task cases.
#include "engine/task/two_metric_task.h"

#include <fmt/format.h>

#include <cmath>

namespace trainer::engine {
namespace {

eval::ReferenceMetric::PerClass as_row(const eval::ReferenceMetric::Result& m) {
  eval::ReferenceMetric::PerClass c;
  c.precision = m.precision;
  c.recall = m.recall;
  c.ap50 = m.map50;
  c.ap50_95 = m.map50_95;
  return c;
}

}  // namespace

EpochColumns two_metric_columns(const std::vector<std::string>& loss_names,
                                const std::string& tag) {
  EpochColumns c;
  c.loss_names = loss_names;
  const std::string t = "(" + tag + ")";
  c.metric_names = {"metrics/precision(B)", "metrics/recall(B)",     "metrics/mAP50(B)",
                    "metrics/mAP50-95(B)",  "metrics/precision" + t, "metrics/recall" + t,
                    "metrics/mAP50" + t,    "metrics/mAP50-95" + t};
  c.extra_names = {"metrics/coco/AP", "metrics/coco/AP50", "metrics/coco/AP" + t,
                   "metrics/coco/AP50" + t};
  return c;
}

EpochValidation two_metric_epoch_validation(
    const ValidationResult& val, const std::optional<eval::ReferenceMetric::Result>& second,
    const std::optional<eval::CocoStats>& second_coco) {
  EpochValidation v;
  const auto& b = val.metric;
  const auto m = second.value_or(eval::ReferenceMetric::Result{});
  v.metrics = {b.precision, b.recall, b.map50, b.map50_95,
               m.precision, m.recall, m.map50, m.map50_95};
  const double nan = std::nan("");
  v.extras = {val.coco ? val.coco->stats[0] : nan, val.coco ? val.coco->stats[1] : nan,
              second_coco ? second_coco->stats[0] : nan, second_coco ? second_coco->stats[1] : nan};
  v.loss_items = val.loss_items;
  return v;
}

std::string format_two_metric_table(const ValidationResult& r,
                                    const eval::ReferenceMetric::Result& second,
                                    const std::string& second_name,
                                    const std::vector<std::string>& names, bool per_class) {
  const auto row = [](const std::string& name, const std::string& images, int64_t instances,
                      const eval::ReferenceMetric::PerClass& b,
                      const eval::ReferenceMetric::PerClass& p) {
    return fmt::format(
        "{:>22}{:>8}{:>11}{:>9.3f}{:>9.3f}{:>9.3f}{:>10.3f}{:>9.3f}{:>9.3f}{:>9.3f}"
        "{:>10.3f}\n",
        name, images, instances, b.precision, b.recall, b.ap50, b.ap50_95, p.precision, p.recall,
        p.ap50, p.ap50_95);
  };
  std::string out = fmt::format("{:>22}{:>8}{:>11}{:>9}{:>9}{:>9}{:>10}{:>9}{:>9}{:>9}{:>10}\n",
                                "Class", "Images", "Instances", "Box(P", "R", "mAP50", "mAP50-95)",
                                second_name + "(P", "R", "mAP50", "mAP50-95)");
  out += row("all", std::to_string(r.images), r.metric.num_gt, as_row(r.metric), as_row(second));
  if (per_class) {
    for (const auto& c : r.metric.per_class) {
      eval::ReferenceMetric::PerClass pc;
      for (const auto& q : second.per_class) {
        if (q.class_id == c.class_id) pc = q;
      }
      out += row(names.at(c.class_id), "", c.num_gt, c, pc);
    }
  }
  return out;
}

}  // namespace trainer::engine
