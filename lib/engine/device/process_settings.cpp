// See process_settings.h.
#include "engine/device/process_settings.h"

#include "engine/device/device.h"

namespace trainer::engine {

c10::Device apply_process_settings(const core::TrainConfig& config) {
  const c10::Device device = resolve_device(config.run.device);
  seed_everything(config.run.seed, config.run.deterministic);  // before any cuBLAS call
  use_device(device);                                          // before the loader pins memory
  if (device.is_cuda()) set_cudnn_benchmark(config.run.cudnn_benchmark);
  return device;
}

}  // namespace trainer::engine
