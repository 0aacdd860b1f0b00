// See device.h.
#include "bench/device.h"

#include <torch/cuda.h>

#include <algorithm>
#include <cctype>

#include "core/error.h"

namespace trainer::bench {

std::string resolve_device(const std::string& device) {
  if (device.empty()) return torch::cuda::is_available() ? "cuda:0" : "cpu";
  if (device == "cpu") return device;
  if (device == "cuda") return "cuda:0";
  const bool digits = std::all_of(device.begin(), device.end(),
                                  [](unsigned char c) { return std::isdigit(c) != 0; });
  if (digits) return "cuda:" + device;
  if (device.rfind("cuda:", 0) == 0 && device.size() > 5 &&
      std::all_of(device.begin() + 5, device.end(),
                  [](unsigned char c) { return std::isdigit(c) != 0; })) {
    return device;
  }
  throw core::ConfigError("device '" + device +
                          "': expected cpu, cuda, cuda:N, N or empty (one device only)");
}

}  // namespace trainer::bench
