// See peak_memory.h.
#include "bench/peak_memory.h"

#include <c10/core/Device.h>

#include <fstream>
#include <stdexcept>
#include <string>

#ifdef TRAINER_WITH_CUDA
#include <ATen/Context.h>
#include <c10/cuda/CUDACachingAllocator.h>
#endif

namespace trainer::bench {
namespace {

// "VmHWM:    123456 kB" -> bytes.
int64_t read_status_kib(const std::string& field) {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(field + ":", 0) == 0) {
      return std::stoll(line.substr(field.size() + 1)) * 1024;
    }
  }
  return 0;
}

bool g_rss_reset = false;

#ifdef TRAINER_WITH_CUDA
// LibTorch initialises the CUDA caching allocator on the first CUDA allocation; its statistics
// throw ("Invalid device argument 0: did you call init?") before that. Initialise explicitly.
c10::DeviceIndex initialised_cuda_index(const c10::Device& dev) {
  at::globalContext().lazyInitDevice(c10::DeviceType::CUDA);
  return dev.has_index() ? dev.index() : c10::DeviceIndex{0};
}
#endif

}  // namespace

int64_t process_peak_rss_bytes() {
  return read_status_kib("VmHWM");
}
int64_t process_rss_bytes() {
  return read_status_kib("VmRSS");
}

double to_mib(int64_t bytes) {
  return static_cast<double>(bytes) / (1024.0 * 1024.0);
}

bool reset_peak_memory(const std::string& device) {
  const c10::Device dev(device);
  if (dev.is_cuda()) {
#ifdef TRAINER_WITH_CUDA
    const auto index = initialised_cuda_index(dev);
    c10::cuda::CUDACachingAllocator::resetPeakStats(index);
    return true;
#else
    throw std::runtime_error("peak memory of " + device + ": this build has no CUDA");
#endif
  }
  // Writing "5" to clear_refs resets VmHWM to the current RSS (Linux >= 4.0).
  std::ofstream clear("/proc/self/clear_refs");
  clear << "5";
  clear.flush();
  g_rss_reset = static_cast<bool>(clear);
  return g_rss_reset;
}

PeakMemory read_peak_memory(const std::string& device) {
  const c10::Device dev(device);
  PeakMemory peak;
  if (dev.is_cuda()) {
#ifdef TRAINER_WITH_CUDA
    const auto index = initialised_cuda_index(dev);
    const auto stats = c10::cuda::CUDACachingAllocator::getDeviceStats(index);
    using c10::CachingAllocator::StatType;
    peak.kind = "cuda_peak_allocated";
    peak.device = "cuda:" + std::to_string(index);
    peak.bytes = stats.allocated_bytes[static_cast<size_t>(StatType::AGGREGATE)].peak;
    peak.since_reset = true;
    return peak;
#else
    throw std::runtime_error("peak memory of " + device + ": this build has no CUDA");
#endif
  }
  peak.kind = "cpu_peak_rss";
  peak.device = "cpu";
  peak.bytes = process_peak_rss_bytes();
  peak.since_reset = g_rss_reset;
  return peak;
}

}  // namespace trainer::bench
