// The memory format of the model's 4-D weights and of the images fed to it (`channels_last`).
//
// Why: NHWC helps cuDNN's tensor-core convolutions only when weights and inputs agree; the
// training model, the validation copy and both input paths must make the same choice, and each
// batch should be converted once (the loader's uint8 batch is already NHWC in memory).
#pragma once

#include <c10/core/Device.h>
#include <c10/core/MemoryFormat.h>

#include "core/config.h"

namespace torch::nn {
class Module;
}

namespace trainer::engine {

// ChannelsLast when `channels_last` is set and the run is on CUDA; Contiguous otherwise (CPU
// convolutions gain nothing from it).
c10::MemoryFormat model_memory_format(const core::TrainConfig& config, const c10::Device& device);

// Re-lays every 4-D parameter and buffer of `module` in `format` (values unchanged).
void apply_memory_format(torch::nn::Module& module, c10::MemoryFormat format);

}  // namespace trainer::engine
