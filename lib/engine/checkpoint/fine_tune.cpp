// See fine_tune.h.
// Tested by tests/integration/test_cli_finetune.cpp: fit from weights: class branches rebuilt at
//   the source's width (cls_width recorded), rows remapped by name, transfer counts.
#include "engine/checkpoint/fine_tune.h"

namespace trainer::engine {

FineTuned fine_tune_model(const TaskDefinition& task, const model::ModelName& name,
                          const data::DatasetSpec& dataset, const WeightsSource& pretrained,
                          bool cls_remap) {
  FineTuned out;
  out.model = task.build_model(name, dataset);
  out.class_widths = name.cls_width;
  if (name.cls_width.is_default()) {  // a width the user or the run set stays
    if (const auto widths =
            model::rebuilt_class_widths(model::state_dict(*out.model), pretrained.weights)) {
      model::ModelName rebuilt = name;
      rebuilt.cls_width = *widths;
      out.model = task.build_model(rebuilt, dataset);
      out.class_widths = *widths;
      out.rebuilt = true;
    }
  }
  out.report =
      model::fine_tune_transfer(*out.model, cls_remap ? dataset.names : std::vector<std::string>{},
                                pretrained.weights, pretrained.names);
  return out;
}

}  // namespace trainer::engine
