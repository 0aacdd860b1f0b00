// See cuda_graph_config.h.
// Tested by tests/engine/static_step/test_cuda_graph_step.cpp: check_cuda_graph_config refuses no
//   static_shapes, several ranks, CPU device, scalar optimizer.
#include "engine/static_step/cuda_graph_config.h"

#include <fmt/format.h>

#include "core/error.h"

namespace trainer::engine {

void check_cuda_graph_config(const core::TrainConfig& config, const c10::Device& device,
                             int world_size) {
  if (!config.run.cuda_graph) return;
  if (!config.run.static_shapes) {
    throw core::ConfigError(
        "cuda_graph: true replays one fixed step, so every tensor's shape must be fixed: set "
        "static_shapes: true as well");
  }
  if (world_size > 1) {
    throw core::ConfigError(fmt::format(
        "cuda_graph: true runs on one rank for now ({} ranks here: the data-parallel gradient "
        "reducer is not capturable); leave it false for multi-GPU training",
        world_size));
  }
  if (!device.is_cuda()) {
    throw core::ConfigError(
        fmt::format("cuda_graph: true needs a CUDA device (device: {}); leave it false on the CPU",
                    device.str()));
  }
  if (config.optim.impl == core::OptimizerImpl::kScalar) {
    throw core::ConfigError(
        "cuda_graph: true needs the foreach optimizer step (optimizer_impl: scalar is the "
        "one-tensor-at-a-time oracle, which passes host scalars); use batched or padded");
  }
}

}  // namespace trainer::engine
