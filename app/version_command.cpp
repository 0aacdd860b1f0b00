// `trainer --version`: what was built and what it runs on.
#include <iostream>

#include "app/commands.h"
#include "core/build_info.h"
#include "core/runtime_info.h"
#include "data/image_codec.h"

namespace trainer::app {

void print_version_report() {
  const auto& build = core::build_info();
  const auto rt = core::query_runtime_info();
  auto yes_no = [](bool b) { return b ? "yes" : "no"; };
  std::cout << "trainer " << build.version << " (git " << build.git_revision
            << (build.git_dirty ? ", dirty" : "") << ", " << build.build_type << ")\n"
            << "LibTorch " << rt.libtorch_version << "\n"
            << "CUDA compiled in: " << yes_no(rt.cuda_compiled);
  if (rt.cuda_compiled) std::cout << " (runtime " << rt.cuda_runtime_version << ")";
  std::cout << "\nCUDA available: " << yes_no(rt.cuda_available);
  if (rt.cuda_available) {
    std::cout << " (" << rt.cuda_device_count << " device(s)";
    for (const auto& name : rt.gpu_names) std::cout << ", " << name;
    if (!rt.driver_version.empty()) std::cout << ", driver " << rt.driver_version;
    std::cout << ")";
  }
  std::cout << "\ncuDNN available: " << yes_no(rt.cudnn_available);
  if (rt.cudnn_available) std::cout << " (" << rt.cudnn_version << ")";
  std::cout << "\nOpenCV " << rt.opencv_version << ", image codecs: " << data::image_codec_name()
            << "\n"
            << "threads: " << rt.torch_threads << " LibTorch, " << rt.hardware_threads
            << " hardware (" << rt.cpu_model << ")\n";
}

}  // namespace trainer::app
