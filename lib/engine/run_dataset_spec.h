// The dataset spec a run's model sees: the yaml's, with one class "item" under single_cls.
//
// Why apart from run_dataset.h: the weights module sizes a model from it without loading a split
// (a weights file's recorded run says single_cls), and it links below the tasks.
#pragma once

#include "core/config.h"
#include "data/dataset_yaml.h"

namespace trainer::engine {

// `spec` as the model sees it: one class "item" under single_cls, else unchanged.
data::DatasetSpec run_dataset_spec(const core::TrainConfig& config, const data::DatasetSpec& spec);

}  // namespace trainer::engine
