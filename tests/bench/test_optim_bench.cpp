// `bench optim` on a small hand-built module: every comparison present, counts as asked, the
// padded schedule forms a mixed-width batch, and every arm starts from the same parameter values.
#include <doctest/doctest.h>
#include <torch/torch.h>
#include <nlohmann/json.hpp>

#include "bench/optim_bench.h"
#include "optim/param_groups.h"

using namespace trainer::bench;

namespace {

// model.0: two linear maps sharing the smaller dimension 4 (widths 8 and 16: one padded batch),
// a 3x3 conv and a batch norm (with integer num_batches_tracked for the EMA); model.1: a head
// whose cv3 conv lands in the x3-lr groups.
struct SmallImpl : torch::nn::Module {
  SmallImpl() {
    auto layer0 = std::make_shared<torch::nn::Module>();
    layer0->register_module("a", torch::nn::Linear(8, 4));
    layer0->register_module("b", torch::nn::Linear(16, 4));
    layer0->register_module("conv", torch::nn::Conv2d(torch::nn::Conv2dOptions(3, 6, 3)));
    layer0->register_module("bn", torch::nn::BatchNorm2d(6));
    auto head = std::make_shared<torch::nn::Module>();
    head->register_module("cv3", torch::nn::Conv2d(torch::nn::Conv2dOptions(6, 5, 1)));
    model = register_module("model", torch::nn::ModuleList());
    model->push_back(layer0);
    model->push_back(head);
  }
  torch::nn::ModuleList model{nullptr};
};
TORCH_MODULE(Small);

}  // namespace

TEST_CASE("bench optim compares every schedule on a small module") {
  torch::manual_seed(0);
  Small net;
  std::vector<at::Tensor> before;
  for (const auto& p : net->parameters()) before.push_back(p.detach().clone());

  OptimBenchOptions options;
  options.warmup = 1;
  options.measure = 3;
  options.pairs = 2;
  options.head_prefix = "model.1.";
  std::vector<std::string> log;
  const Json j =
      run_optim_bench(*net, options, [&](const std::string& line) { log.push_back(line); });

  CHECK(missing_fields(j, optim_json_keys()).empty());
  CHECK(j["benchmark"] == "optim");
  CHECK(j["device"] == "cpu");
  // 2 linear (w, b) + conv (w, b) + bn (w, b) + head conv (w, b) = 10 tensors;
  // elements 8*4+4 + 16*4+4 + 6*3*3*3+6 + 6+6 + 5*6+5 = 36 + 68 + 168 + 12 + 35 = 319.
  CHECK(j["parameters"]["tensors"] == 10);
  CHECK(j["parameters"]["elements"] == 319);
  // EMA: 10 parameters + bn running_mean, running_var, num_batches_tracked.
  CHECK(j["parameters"]["ema_tensors"] == 13);
  bool head_group = false;
  for (const auto& g : j["groups"]) head_group |= g["name"] == "muon_head";
  CHECK(head_group);
  CHECK(j["buckets"]["padded"]["padded_batches"].get<int>() >= 1);
  CHECK(j["buckets"]["batched"]["padded_batches"] == 0);

  for (const char* part : {"optimizer", "ema", "step_plus_ema"}) {
    CAPTURE(part);
    const Json& c = j[part];
    for (const auto& [label, arm] : c["arms"].items()) {
      CAPTURE(label);
      CHECK(arm["arm_medians_ms"].size() == 2);  // one per round
      CHECK(arm["raw_ms"].size() == 2);
      CHECK(arm["raw_ms"][0].size() == 3);  // measured steps; the warm-up step is dropped
      CHECK(arm["median_ms"].get<double>() > 0.0);
    }
    for (const auto& [label, red] : c["reduction_vs_baseline"].items()) {
      CHECK(red["values"].size() == 2);
      CHECK(red.contains("verdict"));
    }
  }
  CHECK(j["optimizer"]["baseline"] == "scalar");
  CHECK(j["optimizer"]["arms"].contains("batched"));
  CHECK(j["optimizer"]["reduction_vs_baseline"].contains("padded"));
  CHECK(j["ema"]["reduction_vs_baseline"].contains("foreach"));
  CHECK(j["step_plus_ema"]["baseline"] == "scalar+scalar");
  CHECK(j["step_plus_ema"]["reduction_vs_baseline"].contains("padded+foreach"));
  CHECK(log.size() == 2 * (3 + 2 + 2));  // rounds x arms

  // Every arm starts from the same values: replaying the last arm (padded + foreach, warm-up +
  // measured steps) from the original values with the fixed gradients the benchmark installed
  // gives exactly the parameters it left behind. Had an earlier arm's steps leaked into the last
  // arm's start, the replay would differ.
  std::vector<at::Tensor> after, grads;
  for (const auto& p : net->parameters()) {
    after.push_back(p.detach().clone());
    grads.push_back(p.grad().defined() ? p.grad().clone() : at::Tensor());
  }
  {
    torch::NoGradGuard no_grad;
    size_t k = 0;
    for (auto& p : net->parameters()) {
      p.copy_(before[k]);
      if (grads[k].defined()) p.mutable_grad() = grads[k].clone();
      ++k;
    }
  }
  trainer::optim::GroupingOptions grouping;
  grouping.use_muon = true;
  grouping.lr = options.lr;
  grouping.momentum = options.momentum;
  grouping.weight_decay = options.weight_decay;
  grouping.head_prefix = options.head_prefix;
  trainer::optim::MuSGDOptions musgd = options.musgd;
  musgd.schedule = trainer::optim::MuonSchedule::kPadded;
  trainer::optim::MuSGD replay(trainer::optim::build_param_groups(*net, grouping), musgd);
  for (int i = 0; i < options.warmup + options.measure; ++i) replay.step();
  size_t k = 0;
  for (const auto& p : net->parameters()) {
    CAPTURE(k);
    CHECK(torch::equal(p.detach(), after[k++]));
  }
  CHECK_FALSE(torch::equal(after[0], before[0]));  // the steps did move the parameters
}

TEST_CASE("bench optim rejects empty counts") {
  Small net;
  OptimBenchOptions options;
  options.measure = 0;
  CHECK_THROWS_AS(run_optim_bench(*net, options), std::invalid_argument);
}
