// See run_decisions.h.
#include "engine/run_decisions.h"

namespace trainer::engine {

core::TrainConfig recorded_config(const core::TrainConfig& user, const RunDecisions& decisions) {
  core::TrainConfig out = user;
  if (decisions.task) out.run.task = decisions.task;
  if (!decisions.architecture.empty()) out.model.architecture = decisions.architecture;
  if (decisions.class_widths &&
      !(*decisions.class_widths == model::parse_class_widths(user.model.cls_width))) {
    out.model.cls_width = model::class_widths_text(*decisions.class_widths);
  }
  if (!decisions.precision_used.empty()) out.run.precision_used = decisions.precision_used;
  return out;
}

core::TrainConfig rank_config(const core::TrainConfig& user, const RunDecisions& decisions,
                              const std::string& rank_device) {
  core::TrainConfig out = recorded_config(user, decisions);
  out.run.device = rank_device;
  return out;
}

}  // namespace trainer::engine
