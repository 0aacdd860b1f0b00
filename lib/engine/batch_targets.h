// The loss's view of a loader batch: its labels and the task's rows beside them.
//
// Why one function: the train step (eager and CUDA-graph), the validator's loss and the precision
// benchmark all hand a batch to the loss; built in one place, a task that adds a batch field adds
// it here once, not in four copies that can drift.
#pragma once

#include "data/batch.h"
#include "loss/loss_targets.h"

namespace trainer::engine {

// The batch's labels, keypoints, rotated boxes and masks (shared tensors, no copy), with
// static_instances 0 (the selecting path; the static step sets its cap itself).
loss::LossTargets loss_targets_of(const data::Batch& batch);

}  // namespace trainer::engine
