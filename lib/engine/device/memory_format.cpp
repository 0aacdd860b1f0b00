// See memory_format.h.
#include "engine/device/memory_format.h"

#include <torch/torch.h>

namespace trainer::engine {

c10::MemoryFormat model_memory_format(const core::TrainConfig& config, const c10::Device& device) {
  return config.run.channels_last && device.is_cuda() ? c10::MemoryFormat::ChannelsLast
                                                      : c10::MemoryFormat::Contiguous;
}

void apply_memory_format(torch::nn::Module& module, c10::MemoryFormat format) {
  if (format == c10::MemoryFormat::Contiguous) return;
  torch::NoGradGuard no_grad;
  for (auto& p : module.parameters()) {
    if (p.dim() == 4) p.set_data(p.data().contiguous(format));
  }
  for (auto& b : module.buffers()) {
    if (b.dim() == 4) b.set_data(b.data().contiguous(format));
  }
}

}  // namespace trainer::engine
