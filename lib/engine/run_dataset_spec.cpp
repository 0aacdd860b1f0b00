// See run_dataset_spec.h.
// Tested by tests/engine/test_validation_shards.cpp: single_cls runs score one class "item" (and
//   tests/integration/test_cli_reference_keys.cpp: fit with single_cls).
#include "engine/run_dataset_spec.h"

#include "data/label_selection.h"

namespace trainer::engine {

data::DatasetSpec run_dataset_spec(const core::TrainConfig& config, const data::DatasetSpec& spec) {
  data::DatasetSpec out = spec;
  out.names = data::selected_names(spec.names, config.data.single_cls);
  return out;
}

}  // namespace trainer::engine
