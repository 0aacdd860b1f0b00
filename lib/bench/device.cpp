// See device.h.
// Tested by tests/bench/test_run_record.cpp: resolve_device spellings (cpu, N, cuda, cuda:N) and
//   rejects 0,1/gpu.
#include "bench/device.h"

#include <torch/cuda.h>

#include "core/device_spelling.h"
#include "core/error.h"

namespace trainer::bench {

std::string resolve_device(const std::string& device) {
  const auto spelling = core::parse_device(device);
  switch (spelling.kind) {
    case core::DeviceSpelling::Kind::kAuto:
      return torch::cuda::is_available() ? "cuda:0" : "cpu";
    case core::DeviceSpelling::Kind::kCpu:
      return "cpu";
    case core::DeviceSpelling::Kind::kCuda:
      break;
  }
  return "cuda:" + std::to_string(spelling.index);
}

}  // namespace trainer::bench
