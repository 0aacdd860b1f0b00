// See two_metric_table.h.
#include "engine/two_metric_table.h"

#include <fmt/format.h>

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
