// See device.h.
// Tested by tests/cuda/test_cuda_smoke.cpp: GPU only: device=1 resolves to cuda:1, made current,
//   synchronize; CPU-side resolve_device errors and auto device_for_rank untested.
#include "engine/device/device.h"

#include <ATen/Context.h>
#include <fmt/format.h>
#include <torch/cuda.h>
#include <torch/utils.h>

#include <cstdlib>

#include "core/device_spelling.h"
#include "core/error.h"

#ifdef TRAINER_WITH_CUDA
#include <c10/cuda/CUDAFunctions.h>
#include <c10/cuda/CUDAGuard.h>
#endif

namespace trainer::engine {

c10::Device resolve_device(const std::string& raw) {
  const auto spelling = core::parse_device(raw);
  using Kind = core::DeviceSpelling::Kind;
  if (spelling.kind == Kind::kCpu) return c10::Device(c10::kCPU);
  const bool cuda = torch::cuda::is_available();
  if (spelling.kind == Kind::kAuto) {
    return cuda ? c10::Device(c10::kCUDA, 0) : c10::Device(c10::kCPU);
  }
#ifndef TRAINER_WITH_CUDA
  throw core::ConfigError(fmt::format(
      "device: \"{}\" asks for CUDA, but this trainer was built without CUDA "
      "(rebuild with scripts/build.sh --cuda on a machine with the toolkit, or use device=cpu)",
      raw));
#else
  if (!cuda) {
    throw core::ConfigError(
        fmt::format("device: \"{}\" asks for CUDA, but no CUDA device is visible (driver missing, "
                    "CUDA_VISIBLE_DEVICES empty, or no GPU); use device=cpu",
                    raw));
  }
  const int64_t n = static_cast<int64_t>(torch::cuda::device_count());
  if (spelling.index >= n) {
    throw core::ConfigError(fmt::format("device: \"{}\" but only {} CUDA device(s)", raw, n));
  }
  return c10::Device(c10::kCUDA, static_cast<c10::DeviceIndex>(spelling.index));
#endif
}

void use_device(const c10::Device& device) {
#ifdef TRAINER_WITH_CUDA
  if (!device.is_cuda()) return;
  const c10::DeviceIndex index = device.has_index() ? device.index() : c10::DeviceIndex{0};
  c10::cuda::set_device(index);
  at::globalContext().lazyInitDevice(c10::DeviceType::CUDA);
  // One allocation creates the primary context on this GPU; the pinned host allocator then
  // prefers it over GPU 0 from any thread.
  (void)at::empty({1}, at::TensorOptions().device(c10::Device(c10::kCUDA, index)));
#else
  (void)device;
#endif
}

void synchronize(const c10::Device& device) {
#ifdef TRAINER_WITH_CUDA
  if (!device.is_cuda()) return;
  const c10::cuda::OptionalCUDAGuard guard(device.has_index() ? std::optional<c10::Device>(device)
                                                              : std::nullopt);
  c10::cuda::device_synchronize();
#else
  (void)device;
#endif
}

std::string ensure_cublas_workspace_config() {
  ::setenv("CUBLAS_WORKSPACE_CONFIG", ":4096:8", /*overwrite=*/0);
  const char* value = std::getenv("CUBLAS_WORKSPACE_CONFIG");
  return value ? value : "";
}

void seed_everything(int64_t seed, bool deterministic) {
  torch::manual_seed(static_cast<uint64_t>(seed));
  if (deterministic) {
    ensure_cublas_workspace_config();
    at::globalContext().setDeterministicAlgorithms(true, /*warn_only=*/true);
  }
}

void set_cudnn_benchmark(bool enabled) {
  at::globalContext().setBenchmarkCuDNN(enabled);
}

std::string device_for_rank(const std::string& text, int local_rank, int local_world_size) {
  const std::string spelled = core::device_for_rank(text, local_rank, local_world_size);
  if (spelled.empty() && local_world_size > 1 && resolve_device("").is_cuda()) {
    return "cuda:" + std::to_string(local_rank);
  }
  return spelled;
}

}  // namespace trainer::engine
