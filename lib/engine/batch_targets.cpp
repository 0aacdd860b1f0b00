// See batch_targets.h.
#include "engine/batch_targets.h"

namespace trainer::engine {

loss::LossTargets loss_targets_of(const data::Batch& batch) {
  loss::LossTargets targets;
  targets.labels = batch.labels;
  targets.keypoints = batch.keypoints;
  targets.rboxes = batch.rboxes;
  targets.masks = batch.masks;
  targets.overlap_masks = batch.overlap_masks;
  return targets;
}

}  // namespace trainer::engine
