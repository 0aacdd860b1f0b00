// Tested by tests/bench/test_run_record.cpp: run record's libtorch version, cpu model, thread
//   counts from query_runtime_info.
#include "core/runtime_info.h"

#include <torch/torch.h>
#include <opencv2/core/utility.hpp>

#include <fstream>
#include <thread>

#ifdef TRAINER_WITH_CUDA
#include <ATen/cuda/CUDAContext.h>
#include <cuda_runtime_api.h>
#endif

namespace trainer::core {
namespace {

std::string read_cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) == 0) {
      const auto colon = line.find(':');
      if (colon != std::string::npos) return line.substr(colon + 2);
    }
  }
  return "unknown";
}

[[maybe_unused]] std::string version_text(long v, int major_div, int minor_div) {
  return std::to_string(v / major_div) + "." + std::to_string((v % major_div) / minor_div);
}

}  // namespace

RuntimeInfo query_runtime_info() {
  RuntimeInfo info;
  info.libtorch_version = TORCH_VERSION;
  info.opencv_version = cv::getVersionString();
  info.torch_threads = at::get_num_threads();
  info.hardware_threads = static_cast<int>(std::thread::hardware_concurrency());
  info.cpu_model = read_cpu_model();
#ifdef TRAINER_WITH_CUDA
  info.cuda_compiled = true;
  info.cuda_runtime_version = version_text(CUDART_VERSION, 1000, 10);
  info.cuda_available = torch::cuda::is_available();
  info.cuda_device_count = info.cuda_available ? static_cast<int>(torch::cuda::device_count()) : 0;
  info.cudnn_available = torch::cuda::cudnn_is_available();
  if (info.cudnn_available) {
    info.cudnn_version = std::to_string(at::detail::getCUDAHooks().versionCuDNN());
  }
  for (int i = 0; i < info.cuda_device_count; ++i) {
    info.gpu_names.emplace_back(at::cuda::getDeviceProperties(i)->name);
  }
  int driver = 0;
  if (cudaDriverGetVersion(&driver) == cudaSuccess && driver > 0) {
    info.driver_version = version_text(driver, 1000, 10);
  }
#endif
  return info;
}

}  // namespace trainer::core
