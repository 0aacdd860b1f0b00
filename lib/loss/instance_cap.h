// The per-image object limit of the static training step: no image of a batch reaches the loss
// with more than `max_instances` objects.
//
// Why: with static shapes every image's targets are padded to exactly max_instances rows, so the
// tensors of the step do not depend on the batch. Mosaic puts up to four images' objects in one
// sample (mixup adds more), so a few samples can exceed any limit; those lose their smallest
// objects (the ones that add least to the box losses, and first to vanish under augmentation)
// here, on the host, before packing, and the step counts them for the epoch's log.
#pragma once

#include <cstdint>

#include "loss/loss_targets.h"

namespace trainer::loss {

// Drops, in every image holding more than `max_instances` rows of targets.labels, the rows of
// smallest normalised area w x h (ties: the later row goes) until max_instances remain; kept rows
// keep their order. The rows' keypoints, rotated boxes and per-object masks go with them; an index
// mask (overlap_masks) has the dropped objects' pixels set to background and the rest renumbered.
// Host (CPU) tensors only: throws std::invalid_argument otherwise, or for max_instances < 1.
struct InstanceCap {
  int64_t dropped = 0;  // rows dropped (0: targets untouched)
  int64_t largest = 0;  // the largest count of any image before the cap
};
InstanceCap cap_instances(LossTargets& targets, int64_t batch_size, int64_t max_instances);

}  // namespace trainer::loss
