// Parameter-group membership for a small module tree, by the reference's rules.
#include <doctest/doctest.h>
#include <torch/torch.h>

#include "optim/param_groups.h"

using namespace trainer::optim;

namespace {

// model.0: conv (4-D weight) + bn; model.1: a "head" with cv2 (box) and cv3 / one2one_cv3 (class)
// convs with biases; plus a 3-D LayerScale-like parameter and a 1-D plain parameter.
struct HeadImpl : torch::nn::Module {
  HeadImpl() {
    cv2 = register_module("cv2", tower(4));
    cv3 = register_module("cv3", tower(2));
    o2o = register_module("one2one_cv3", tower(2));
  }
  static torch::nn::ModuleList tower(int out) {
    return torch::nn::ModuleList(torch::nn::Conv2d(torch::nn::Conv2dOptions(4, out, 1).bias(true)));
  }
  torch::nn::ModuleList cv2{nullptr}, cv3{nullptr}, o2o{nullptr};
};
TORCH_MODULE(Head);

struct TinyImpl : torch::nn::Module {
  TinyImpl() {
    auto layer0 = std::make_shared<torch::nn::Module>();
    layer0->register_module("conv",
                            torch::nn::Conv2d(torch::nn::Conv2dOptions(3, 4, 3).bias(false)));
    layer0->register_module("bn", torch::nn::BatchNorm2d(4));
    model = register_module("model", torch::nn::ModuleList());
    model->push_back(layer0);
    model->push_back(Head());
    gamma = register_parameter("gamma", torch::ones({4, 1, 1}));
    scale = register_parameter("scale", torch::ones({4}));
    fc = register_module("fc", torch::nn::Linear(4, 2));
  }
  torch::nn::ModuleList model{nullptr};
  torch::Tensor gamma, scale;
  torch::nn::Linear fc{nullptr};
};

size_t count(const std::vector<ParamGroup>& groups, const std::string& name) {
  for (const auto& g : groups) {
    if (g.name == name) return g.params.size();
  }
  return 0;
}

const ParamGroup& group(const std::vector<ParamGroup>& groups, const std::string& name) {
  for (const auto& g : groups) {
    if (g.name == name) return g;
  }
  FAIL("no group " << name);
  throw std::logic_error("unreachable");
}

}  // namespace

TEST_CASE("param groups: MuSGD rules, head split and lr x3") {
  TinyImpl tiny;
  GroupingOptions options;
  options.use_muon = true;
  options.lr = 0.01;
  options.weight_decay = 5e-4;
  options.head_prefix = "model.1.";
  auto groups = build_param_groups(tiny, options);
  // muon: conv0 weight, cv2 weight, fc weight (2-D); muon_head: cv3 + one2one_cv3 weights.
  CHECK(count(groups, "muon") == 3);
  CHECK(count(groups, "muon_head") == 2);
  // bias: bn.bias (rule 2 comes before the norm rule), cv2 bias, fc bias;
  // bias_head: cv3 and one2one_cv3 biases.
  CHECK(count(groups, "bias") == 3);
  CHECK(count(groups, "bias_head") == 2);
  // bn: bn.weight (bn.bias has "bias" in its name, so it is a bias).
  CHECK(count(groups, "bn") == 1);
  // weight: the 3-D gamma and the 1-D scale (ndim not in {2,4}).
  CHECK(count(groups, "weight") == 2);
  CHECK(group(groups, "muon_head").lr == doctest::Approx(0.03));
  CHECK(group(groups, "muon").lr == doctest::Approx(0.01));
  CHECK(group(groups, "muon").use_muon);
  CHECK_FALSE(group(groups, "bias").use_muon);
  CHECK(group(groups, "muon").weight_decay == 5e-4);
  CHECK(group(groups, "weight").weight_decay == 5e-4);
  CHECK(group(groups, "bias").weight_decay == 0.0);
  CHECK(group(groups, "bn").weight_decay == 0.0);
  size_t total = 0;
  for (const auto& g : groups) total += g.params.size();
  CHECK(total == tiny.parameters().size());
  // 8.4.190's order (results.csv lr/pg0..7): each kind's head part first, empty groups kept.
  const std::vector<std::string> order = {"weight_head", "weight", "bn_head",   "bn",
                                          "bias_head",   "bias",   "muon_head", "muon"};
  REQUIRE(groups.size() == order.size());
  for (size_t i = 0; i < order.size(); ++i) CHECK(groups[i].name == order[i]);
  CHECK(groups[0].params.empty());  // no weight-kind tensor in the head towers here
  CHECK(groups[0].lr == doctest::Approx(0.03));
}

TEST_CASE("param groups: SGD puts conv weights in the decayed weight group, no head split") {
  TinyImpl tiny;
  GroupingOptions options;
  options.use_muon = false;
  options.head_prefix = "model.1.";
  auto groups = build_param_groups(tiny, options);
  CHECK(count(groups, "muon") == 0);
  CHECK(count(groups, "weight") == 7);  // conv0, cv2, cv3, o2o, fc weights + gamma + scale
  CHECK(count(groups, "bias") == 5);    // bn.bias, cv2, cv3, o2o, fc biases
  CHECK(count(groups, "bn") == 1);
  CHECK(count(groups, "bias_head") == 0);
  REQUIRE(groups.size() == 3);  // weight, bn, bias: the reference's g0, g1, g2
  CHECK(groups[0].name == "weight");
  CHECK(groups[1].name == "bn");
  CHECK(groups[2].name == "bias");
}

TEST_CASE("param groups: classification-tower names") {
  CHECK(is_classification_tower("model.23.cv3.0.0.conv.weight", "model.23."));
  CHECK(is_classification_tower("model.23.one2one_cv3.2.bias", "model.23."));
  CHECK_FALSE(is_classification_tower("model.23.cv2.0.0.conv.weight", "model.23."));
  CHECK_FALSE(is_classification_tower("model.8.cv3.conv.weight", "model.23."));  // a C3k's cv3
  CHECK_FALSE(is_classification_tower("model.23.cv3.0.weight", ""));
}
