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

// The `device` spelling for local rank `local_rank` of `local_world_size` ranks on this machine
// (core::device_for_rank), with "" (auto) becoming cuda:LOCAL_RANK when a GPU is usable.
std::string device_for_rank(const std::string& text, int local_rank, int local_world_size);

// Makes `device` this thread's current CUDA device and initialises LibTorch's CUDA state there
// (the caching allocator, a context on that GPU), so later work without an explicit device,
// including pinned host buffers allocated by loader threads, lands on the GPU in use rather than
// on GPU 0. Call once, before the loader starts. No-op on CPU.
void use_device(const c10::Device& device);

// Waits for queued work on `device` (the one given, not the current one) so a timer edge means
// "done"; no-op on CPU.
void synchronize(const c10::Device& device);

// deterministic: true needs CUBLAS_WORKSPACE_CONFIG for reproducible cuBLAS results; without it
// every cuBLAS call warns. Sets ":4096:8" (the reference's value) unless the user set it; it must
// run before the first cuBLAS call (cuBLAS reads it when its handle is created). Returns the
// value in effect.
std::string ensure_cublas_workspace_config();

// Seeds torch's CPU (and CUDA) generators and, when `deterministic`, asks for deterministic
// algorithms (warn only, as the reference).
void seed_everything(int64_t seed, bool deterministic);

// Enables cuDNN autotuning (CUDA builds; ignored on CPU).
void set_cudnn_benchmark(bool enabled);

}  // namespace trainer::engine
