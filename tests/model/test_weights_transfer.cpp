// Fine-tuning's transfer by name: every entry with equal nc, all but the class layers with a
// different nc, and shape mismatches or missing keys left at their initialisation.
#include <doctest/doctest.h>
#include <torch/torch.h>

#include <algorithm>
#include <map>

#include "model/detection_model.h"
#include "model/weights_transfer.h"

using namespace trainer::model;

namespace {

at::Tensor param(DetectionModelImpl& m, const std::string& key) {
  return m.named_parameters()[key];
}

}  // namespace

TEST_CASE("transfer: equal nc copies every parameter and buffer") {
  torch::manual_seed(1);
  auto from = build_tiny_detection_model(ModelFamily::kYolo26, 4);
  torch::manual_seed(2);
  auto to = build_tiny_detection_model(ModelFamily::kYolo26, 4);
  const auto report = transfer_weights(*to, state_dict(*from));
  CHECK(report.total == static_cast<int64_t>(state_dict(*to).size()));
  CHECK(report.transferred == report.total);
  CHECK(report.shape_mismatches.empty());
  CHECK(report.missing.empty());
  CHECK(torch::equal(param(*to, "model.0.conv.weight"), param(*from, "model.0.conv.weight")));
}

TEST_CASE("transfer: a different nc keeps the class layers initialised and copies the rest") {
  torch::manual_seed(1);
  auto from = build_tiny_detection_model(ModelFamily::kYolo26, 4);
  torch::manual_seed(2);
  auto to = build_tiny_detection_model(ModelFamily::kYolo26, 7);
  const auto before = state_dict(*to);
  std::map<std::string, at::Tensor> initial;
  for (const auto& [k, t] : before) initial[k] = t.clone();
  const auto report = transfer_weights(*to, state_dict(*from));
  const auto after_list = state_dict(*to);
  const std::map<std::string, at::Tensor> after(after_list.begin(), after_list.end());
  CHECK(report.total == static_cast<int64_t>(before.size()));
  CHECK(!report.shape_mismatches.empty());
  CHECK(report.transferred + static_cast<int64_t>(report.shape_mismatches.size()) == report.total);
  for (const auto& key : report.shape_mismatches) {
    CAPTURE(key);
    CHECK(key.rfind("model.23.", 0) == 0);  // the head's last (class) convolutions only
    CHECK(torch::equal(after.at(key), initial.at(key)));
  }
  CHECK(torch::equal(param(*to, "model.0.conv.weight"), param(*from, "model.0.conv.weight")));
}

TEST_CASE("transfer: mismatched shapes and missing keys are skipped, unknown keys ignored") {
  torch::manual_seed(1);
  auto from = build_tiny_detection_model(ModelFamily::kYolo26, 4);
  torch::manual_seed(2);
  auto to = build_tiny_detection_model(ModelFamily::kYolo26, 4);
  auto weights = state_dict(*from);
  const at::Tensor kept = param(*to, "model.0.conv.weight").clone();
  for (auto& [key, t] : weights) {
    if (key == "model.0.conv.weight") t = torch::zeros({1, 2, 3});
  }
  weights.erase(std::remove_if(weights.begin(), weights.end(),
                               [](const auto& e) { return e.first == "model.1.bn.bias"; }),
                weights.end());
  weights.emplace_back("not.a.key", torch::ones({2}));
  const auto report = transfer_weights(*to, weights);
  CHECK(report.transferred == report.total - 2);
  REQUIRE(report.shape_mismatches.size() == 1);
  CHECK(report.shape_mismatches[0] == "model.0.conv.weight");
  REQUIRE(report.missing.size() == 1);
  CHECK(report.missing[0] == "model.1.bn.bias");
  CHECK(torch::equal(param(*to, "model.0.conv.weight"), kept));
}
