// What the trainer runs on: LibTorch, CUDA/cuDNN, OpenCV, threads, CPU and GPU names.
//
// Why: `trainer --version` and every benchmark record must say what produced a number. The header
// is LibTorch-free so the CLI and reports can include it cheaply.
#pragma once

#include <string>
#include <vector>

namespace trainer::core {

struct RuntimeInfo {
  std::string libtorch_version;
  bool cuda_compiled = false;   // this binary was built with CUDA code paths
  bool cuda_available = false;  // a usable GPU is present now
  int cuda_device_count = 0;
  std::string cuda_runtime_version;  // "13.0" when compiled with CUDA
  bool cudnn_available = false;
  std::string cudnn_version;
  std::vector<std::string> gpu_names;
  std::string driver_version;
  std::string opencv_version;
  int torch_threads = 0;
  int hardware_threads = 0;
  std::string cpu_model;
};

RuntimeInfo query_runtime_info();

}  // namespace trainer::core
