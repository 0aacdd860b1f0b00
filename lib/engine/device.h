// Which device a run uses, from the `device` key.
//
// Why: "0", "cuda:1", "cpu" and "" (auto) must mean the same thing everywhere, and asking for a
// GPU on a machine or build without CUDA must stop with a message that says which of the two.
#pragma once

#include <c10/core/Device.h>

#include <string>

namespace trainer::engine {

// "" = first CUDA device when available, else cpu; "cpu"; "0" / "1" / "cuda" / "cuda:N". Throws
// core::ConfigError when CUDA is asked for but absent (naming whether the build or the machine
// lacks it) or the index is out of range.
c10::Device resolve_device(const std::string& text);

// Waits for queued device work (CUDA) so a timer edge means "done"; no-op on CPU.
void synchronize(const c10::Device& device);

// Seeds torch's CPU (and CUDA) generators and, when `deterministic`, asks for deterministic
// algorithms (warn only, as the reference).
void seed_everything(int64_t seed, bool deterministic);

// Enables cuDNN autotuning (CUDA builds; ignored on CPU).
void set_cudnn_benchmark(bool enabled);

}  // namespace trainer::engine
