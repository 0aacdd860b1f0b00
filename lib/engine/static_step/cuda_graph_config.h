// When `cuda_graph: true` can work, decided before anything is built.
//
// Why: a captured step replays fixed kernels on fixed addresses, so it needs every shape fixed
// (static_shapes, which already refuses rect and multi_scale), a CUDA device, one rank (the
// data-parallel reducer runs host collectives and Gloo is CPU-only) and an optimizer whose step
// reads its per-step numbers from device scalars (not the scalar oracle schedule). A refusal
// here names the key to change instead of failing at the first capture.
#pragma once

#include <c10/core/Device.h>

#include "core/config.h"

namespace trainer::engine {

// Throws core::ConfigError naming the conflicting key when config.run.cuda_graph cannot hold.
void check_cuda_graph_config(const core::TrainConfig& config, const c10::Device& device,
                             int world_size);

}  // namespace trainer::engine
