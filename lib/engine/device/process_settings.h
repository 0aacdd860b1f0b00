// The process-wide LibTorch state a run starts from: its device made current, the generators
// seeded (with deterministic algorithms when asked), cuDNN's autotuner.
//
// Why one named place: these are globals. Set as a side effect of building the training context
// they were easy to miss and impossible to order by reading fit(); here a run (fit, a bench, a
// test) applies them once, first, and gets the device it resolved.
#pragma once

#include <c10/core/Device.h>

#include "core/config.h"

namespace trainer::engine {

// Resolves config.run.device (resolve_device), seeds every generator before any cuBLAS call
// (seed_everything), makes the device current before a loader pins memory (use_device) and, on
// CUDA, sets cuDNN's benchmark mode. Returns the device.
c10::Device apply_process_settings(const core::TrainConfig& config);

}  // namespace trainer::engine
