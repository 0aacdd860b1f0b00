// The dataset a run sees: the yaml's splits with `classes`, `single_cls` and `fraction` applied.
//
// Why: `trainer fit`, the validator inside it and `trainer val` must score the same labels the
// model trained on, so the selection keys are applied in one place (data/label_selection.h holds
// the rules). Labels are read against the yaml's own classes (a label of class 5 stays valid under
// single_cls) and selected afterwards.
#pragma once

#include "core/config.h"
#include "data/dataset.h"
#include "data/dataset_yaml.h"
#include "engine/run_dataset_spec.h"  // the spec the split is read against

namespace trainer::engine {

// Whether `classes` or `single_cls` change the labels (the COCO json of the val split is then not
// the ground truth: the validator builds it from the selected labels).
bool selects_labels(const core::TrainConfig& config);

// `split` of `spec` (the yaml's own, not run_dataset_spec's) with the selection applied; the
// training split also takes `fraction`. Logs what was selected. Throws core::ConfigError for a
// class id the dataset does not have. An OBB run (core::resolve_task) keeps the label polygons.
data::DatasetIndex load_run_split(const core::TrainConfig& config, const data::DatasetSpec& spec,
                                  data::Split split);

}  // namespace trainer::engine
