// channels_last: which layout a run uses, and re-laying a module keeps its values.
#include <doctest/doctest.h>
#include <torch/torch.h>

#include "engine/device/memory_format.h"

using namespace trainer;

TEST_CASE("memory format: channels-last only for channels_last runs on CUDA") {
  core::TrainConfig c;
  const c10::Device cpu(c10::kCPU), gpu(c10::kCUDA, 0);
  CHECK((engine::model_memory_format(c, gpu) == c10::MemoryFormat::Contiguous));
  c.run.channels_last = true;
  CHECK((engine::model_memory_format(c, gpu) == c10::MemoryFormat::ChannelsLast));
  CHECK((engine::model_memory_format(c, cpu) == c10::MemoryFormat::Contiguous));
}

TEST_CASE("memory format: 4-D weights re-laid, values and other tensors unchanged") {
  torch::nn::Sequential net(torch::nn::Conv2d(torch::nn::Conv2dOptions(3, 4, 3)),
                            torch::nn::BatchNorm2d(4), torch::nn::Linear(4, 2));
  std::vector<at::Tensor> before;
  for (const auto& p : net->parameters()) before.push_back(p.detach().clone());
  engine::apply_memory_format(*net, c10::MemoryFormat::ChannelsLast);
  const auto params = net->parameters();
  for (size_t k = 0; k < params.size(); ++k) {
    CHECK(torch::equal(params[k], before[k]));
    if (params[k].dim() == 4) CHECK(params[k].is_contiguous(c10::MemoryFormat::ChannelsLast));
  }
  CHECK_FALSE(params[0].is_contiguous());  // the conv weight (4, 3, 3, 3) is NHWC now
}
