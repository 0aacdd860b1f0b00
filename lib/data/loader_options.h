// LoaderOptions from the run configuration, and the close_mosaic rule.
//
// Why: the trainer, `trainer data preview` and the benchmark must build the same loaders from the
// same config. Reference values: training batches of `batch` with the augment keys; validation
// batches of 2 * batch, rect, no augmentation; workers capped by the loader at the cores present.
// Training with rect: batches sorted by aspect ratio, no shuffle, no mosaic (as the reference).
// close_mosaic: mosaic (and mixup) stop at epoch `epochs - close_mosaic` (0-based) and stay off;
// 0 never closes, and, as in the reference, a close_mosaic above `epochs` never matches an epoch.
#pragma once

#include "core/config.h"
#include "data/loader.h"

namespace trainer::data {

LoaderOptions train_loader_options(const core::TrainConfig& config, int rank = 0,
                                   int world_size = 1);

// Validation batches: 2 x batch during training (the reference's trainer does the same), batch
// for a standalone `trainer val` (as `yolo val batch=N`); rect shapes depend on it.
LoaderOptions val_loader_options(const core::TrainConfig& config, bool standalone = false);

// Whether the loaders pin their batches: only for runs that may use CUDA (device not "cpu"; the
// loader still pins only where CUDA is available).
bool pins_memory(const core::TrainConfig& config);

// `epochs`: the run's current epoch count when `time` re-estimates it (<= 0: config's epochs).
// Always false for rect training.
bool mosaic_enabled(const core::TrainConfig& config, int epoch, int64_t epochs = 0);

}  // namespace trainer::data
