// See run_dataset.h.
// Tested by tests/integration/test_cli_reference_keys.cpp: fit with fraction=0.5, single_cls
//   ('item'), classes=[0,2] kept and logged, classes=[9] refused (run_dataset_spec also used by
//   validation-shard tests).
#include "engine/run_dataset.h"

#include <fmt/ranges.h>
#include <spdlog/spdlog.h>

#include "data/decode_budget.h"
#include "data/label_selection.h"
#include "engine/task/task_definition.h"

namespace trainer::engine {

bool selects_labels(const core::TrainConfig& config) {
  return config.data.single_cls || !config.data.classes.empty();
}

data::DatasetIndex load_run_split(const core::TrainConfig& config, const data::DatasetSpec& spec,
                                  data::Split split) {
  data::set_decode_budget_gib(config.data.decode_budget_gb);  // verification and the loader
  data::LabelSelection selection;
  selection.classes = data::parse_class_list(config.data.classes, spec.nc());
  selection.single_cls = config.data.single_cls;
  data::LoadOptions options;
  options.polygons = make_task_definition(config)->label_polygons();
  data::DatasetIndex index = data::load_split(spec, split, options);
  if (split == data::Split::kTrain) data::take_fraction(index, config.data.fraction);
  if (selects_labels(config)) {
    data::select_labels(index, selection);
    spdlog::info("{}: {}{}{} boxes kept", data::split_name(split),
                 selection.classes.empty()
                     ? std::string()
                     : fmt::format("classes [{}], ", fmt::join(selection.classes, ", ")),
                 selection.single_cls ? "single class 'item', " : "", index.stats.boxes);
  }
  return index;
}

}  // namespace trainer::engine
