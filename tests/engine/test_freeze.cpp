// `freeze`: which layers a spec names, which parameters lose requires_grad, that frozen
// BatchNorm layers stay in eval mode and that the optimizer groups leave them out.
#include <doctest/doctest.h>
#include <torch/torch.h>

#include <algorithm>

#include "core/error.h"
#include "engine/freeze.h"
#include "model/yolo_model.h"
#include "optim/param_groups.h"

using namespace trainer;
using namespace trainer::engine;

TEST_CASE("freeze: N names layers 0..N-1, a list names its layers, empty names none") {
  CHECK(frozen_layer_indices("", 24).empty());
  CHECK(frozen_layer_indices("3", 24) == std::vector<int64_t>{0, 1, 2});
  CHECK(frozen_layer_indices("0", 24).empty());
  CHECK(frozen_layer_indices("[0, 5, 5, 7]", 24) == std::vector<int64_t>{0, 5, 7});
  CHECK(frozen_layer_indices("[]", 24).empty());
  CHECK_THROWS_AS(frozen_layer_indices("[30]", 24), core::ConfigError);
}

TEST_CASE("freeze: the named layers lose requires_grad, BatchNorm eval, optimizer excludes them") {
  auto model = model::build_tiny_yolo_model(model::ModelFamily::kYolo26, 3);
  model->train();
  const auto frozen = freeze_layers(*model, {0, 2});
  REQUIRE(!frozen.empty());
  for (const auto& p : model->named_parameters()) {
    CAPTURE(p.key());
    const bool in_frozen_layer =
        p.key().rfind("model.0.", 0) == 0 || p.key().rfind("model.2.", 0) == 0;
    const bool listed = std::find(frozen.begin(), frozen.end(), p.key()) != frozen.end();
    CHECK(listed == in_frozen_layer);
    if (in_frozen_layer) CHECK_FALSE(p.value().requires_grad());
    if (!in_frozen_layer && p.key().find(".dfl.") == std::string::npos) {
      CHECK(p.value().requires_grad());
    }
  }
  for (const auto& m : model->named_modules("", false)) {
    if (!m.value()->as<torch::nn::BatchNorm2d>()) continue;
    CAPTURE(m.key());
    const bool frozen_bn = m.key().rfind("model.0.", 0) == 0 || m.key().rfind("model.2.", 0) == 0;
    CHECK(m.value()->is_training() == !frozen_bn);
  }

  optim::GroupingOptions grouping;
  grouping.excluded.insert(frozen.begin(), frozen.end());
  const auto groups = optim::build_param_groups(*model, grouping);
  const auto all_groups = optim::build_param_groups(*model, optim::GroupingOptions{});
  size_t grouped = 0;
  size_t all = 0;
  for (const auto& g : all_groups) all += g.params.size();
  for (const auto& g : groups) {
    for (const auto& t : g.params) {
      ++grouped;
      for (const auto& name : frozen) {
        CHECK_FALSE(t.is_same(model->named_parameters()[name]));
      }
    }
  }
  CHECK(grouped + frozen.size() == all);
}

TEST_CASE("freeze: freezing every layer is refused") {
  auto model = model::build_tiny_yolo_model(model::ModelFamily::kYolo26, 3);
  std::vector<int64_t> every;
  for (size_t i = 0; i < model->layer_modules().size(); ++i)
    every.push_back(static_cast<int64_t>(i));
  CHECK_THROWS_AS(freeze_layers(*model, every), core::ConfigError);
}
