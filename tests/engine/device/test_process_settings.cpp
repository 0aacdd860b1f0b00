// apply_process_settings: the device it resolves, and the seed it sets (the same seed draws the
// same numbers; another seed others), so a run's first random draw follows its config.
#include <doctest/doctest.h>
#include <torch/torch.h>

#include "core/config.h"
#include "core/error.h"
#include "engine/device/process_settings.h"

using trainer::engine::apply_process_settings;

TEST_CASE("apply_process_settings: resolves the device and seeds the generators") {
  trainer::core::TrainConfig config;
  config.run.device = "cpu";
  config.run.seed = 7;
  CHECK(apply_process_settings(config) == c10::Device(c10::kCPU));
  const at::Tensor first = torch::rand({8});
  apply_process_settings(config);
  CHECK(torch::equal(torch::rand({8}), first));  // the same seed: the same draw
  config.run.seed = 8;
  apply_process_settings(config);
  CHECK_FALSE(torch::equal(torch::rand({8}), first));
}

TEST_CASE("apply_process_settings: a device this machine cannot use is a config error") {
  if (torch::cuda::is_available()) return;  // the CPU machine's message is what is checked
  trainer::core::TrainConfig config;
  config.run.device = "cuda:0";
  CHECK_THROWS_AS(apply_process_settings(config), trainer::core::ConfigError);
}
