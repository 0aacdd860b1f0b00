// Fine-tuning's transfer as 8.4.190's DetectionModel.load: the class-branch rebuild rule, the
// remap of class rows by name, the copy of what fits, the first-conv fill, and the reference's
// count. Hand-computed on the tiny models (P3 width 16, so c3 = max(16, min(nc, 100))); the
// oracle's own load is compared in tests/parity/test_reference_checkpoint_parity.cpp.
#include <doctest/doctest.h>
#include <torch/torch.h>

#include <algorithm>
#include <map>

#include "model/detect_head.h"
#include "model/fine_tune_transfer.h"
#include "model/fuse.h"
#include "model/yolo_model.h"

using namespace trainer::model;
using trainer::core::Task;

namespace {

using TensorMap = std::map<std::string, at::Tensor>;

TensorMap snapshot(const torch::nn::Module& m) {
  TensorMap out;
  for (const auto& [k, t] : state_dict(m)) out[k] = t.clone();
  return out;
}

YoloModel tiny(ModelFamily family, int nc, uint64_t seed, Task task = Task::kDetect,
               ClassWidths widths = {}) {
  torch::manual_seed(seed);
  ModelName name{family, 't', {}, task, {}};
  name.cls_width = widths;
  return build_yolo_model(name, nc);
}

// The class-logit convs of a head at layer 23: cv3.i.2 and one2one_cv3.i.2 (weight, bias).
std::vector<std::string> class_logit_keys(bool one2one = true) {
  std::vector<std::string> keys;
  for (const char* branch : {"cv3", "one2one_cv3"}) {
    if (!one2one && std::string(branch) == "one2one_cv3") continue;
    for (int level = 0; level < 3; ++level) {
      for (const char* p : {"weight", "bias"}) {
        keys.push_back("model.23." + std::string(branch) + "." + std::to_string(level) + ".2." + p);
      }
    }
  }
  return keys;
}

}  // namespace

TEST_CASE("fine-tune transfer: equal classes copy every parameter and buffer") {
  auto from = tiny(ModelFamily::kYolo26, 4, 1);
  auto to = tiny(ModelFamily::kYolo26, 4, 2);
  CHECK_FALSE(rebuilt_class_widths(state_dict(*to), state_dict(*from)).has_value());
  const auto report =
      fine_tune_transfer(*to, {"a", "b", "c", "d"}, state_dict(*from), {"a", "b", "c", "d"});
  CHECK(report.total == static_cast<int64_t>(state_dict(*to).size()));
  CHECK(report.transferred == report.total);
  CHECK(report.remapped == 0);  // same names in the same order: intersect_dicts copies them
  CHECK(report.kept_initialised.empty());
  const auto a = snapshot(*from), b = snapshot(*to);
  for (const auto& [k, t] : a) CHECK(torch::equal(t, b.at(k)));
}

TEST_CASE("fine-tune transfer: other classes at the same width keep only the class-logit convs") {
  auto from = tiny(ModelFamily::kYolo26, 4, 1);
  auto to = tiny(ModelFamily::kYolo26, 7, 2);  // c3 = 16 for both: nothing to rebuild
  CHECK(to->head()->class_hidden() == 16);
  CHECK_FALSE(rebuilt_class_widths(state_dict(*to), state_dict(*from)).has_value());
  const auto before = snapshot(*to);
  const auto report = fine_tune_transfer(*to, {}, state_dict(*from), {});  // cls_remap off
  CHECK(report.transferred == report.total - 12);
  auto kept = report.kept_initialised;
  auto expected = class_logit_keys();
  std::sort(kept.begin(), kept.end());
  std::sort(expected.begin(), expected.end());
  CHECK(kept == expected);
  const auto after = snapshot(*to);
  for (const auto& key : expected) CHECK(torch::equal(after.at(key), before.at(key)));
  CHECK(torch::equal(after.at("model.0.conv.weight"), snapshot(*from).at("model.0.conv.weight")));
}

TEST_CASE(
    "fine-tune transfer: a source class branch of another width is rebuilt, its hidden "
    "layers transfer") {
  auto from = tiny(ModelFamily::kYolo26, 40, 1);  // c3 = 40
  auto to = tiny(ModelFamily::kYolo26, 4, 2);     // c3 = 16
  const auto widths = rebuilt_class_widths(state_dict(*to), state_dict(*from));
  REQUIRE(widths.has_value());
  CHECK(*widths == ClassWidths{40, 40});
  CHECK(class_widths_of(state_dict(*from)) == ClassWidths{40, 40});
  CHECK(class_widths_of(state_dict(*to)) == ClassWidths{16, 16});
  auto rebuilt = tiny(ModelFamily::kYolo26, 4, 2, Task::kDetect, *widths);
  CHECK(rebuilt->head()->class_hidden() == 40);
  CHECK(rebuilt->head()->class_hidden_one2one() == 40);
  CHECK(rebuilt->num_classes() == 4);
  const auto report = fine_tune_transfer(*rebuilt, {}, state_dict(*from), {});
  CHECK(report.transferred == report.total - 12);  // only the new 1x1 class-logit convs
  const auto src = snapshot(*from), dst = snapshot(*rebuilt);
  CHECK(torch::equal(dst.at("model.23.cv3.0.1.1.conv.weight"),
                     src.at("model.23.cv3.0.1.1.conv.weight")));  // (40, 40, 1, 1) hidden
  // The new conv's bias is the bias init for 4 classes: log(5 / 4 / (640 / 8)^2).
  const float b = dst.at("model.23.cv3.0.2.bias")[0].item<float>();
  CHECK(b == doctest::Approx(std::log(5.0 / 4.0 / (80.0 * 80.0))).epsilon(1e-6));
}

TEST_CASE(
    "fine-tune transfer: a YOLO11 source rebuilds cv3 only, an end-to-end one2one_cv3 keeps "
    "its width") {
  auto from = tiny(ModelFamily::kYolo11, 40, 1);
  auto to = tiny(ModelFamily::kYolo26, 4, 2);
  const auto widths = rebuilt_class_widths(state_dict(*to), state_dict(*from));
  REQUIRE(widths.has_value());
  CHECK(*widths == ClassWidths{40, 0});
  auto rebuilt = tiny(ModelFamily::kYolo26, 4, 2, Task::kDetect, *widths);
  CHECK(rebuilt->head()->class_hidden() == 40);
  CHECK(rebuilt->head()->class_hidden_one2one() == 16);
  const auto x = torch::zeros({1, 3, 64, 64});
  rebuilt->eval();
  CHECK(rebuilt->forward_for_loss(x).one2one.size() == 3);
}

TEST_CASE(
    "fine-tune transfer: another scale is not rebuilt; the first conv takes the filters "
    "that fit") {
  torch::manual_seed(1);
  auto from = build_yolo_model(ModelName{ModelFamily::kYolo26, 'n', {}, Task::kDetect, {}}, 80);
  auto to = tiny(ModelFamily::kYolo26, 4, 2);
  CHECK_FALSE(rebuilt_class_widths(state_dict(*to), state_dict(*from)).has_value());
  const auto src = snapshot(*from);
  const auto report = fine_tune_transfer(*to, {}, state_dict(*from), {});
  CHECK(report.first_conv_filled);
  const at::Tensor w = snapshot(*to).at("model.0.conv.weight");
  REQUIRE(w.sizes() == at::IntArrayRef({8, 3, 3, 3}));  // the source's is (16, 3, 3, 3)
  CHECK(torch::equal(w, src.at("model.0.conv.weight").slice(0, 0, 8)));
  CHECK(std::find(report.kept_initialised.begin(), report.kept_initialised.end(),
                  "model.0.conv.weight") == report.kept_initialised.end());
}

TEST_CASE(
    "fine-tune transfer: a first conv with one input channel takes the sum over the "
    "source's, into its first channel") {
  auto from = tiny(ModelFamily::kYolo26, 4, 1);
  auto to = tiny(ModelFamily::kYolo26, 4, 2);
  auto weights = state_dict(*from);
  const at::Tensor gray = torch::randn({8, 1, 3, 3});
  for (auto& [k, t] : weights) {
    if (k == "model.0.conv.weight") t = gray;
  }
  const at::Tensor before = snapshot(*to).at("model.0.conv.weight");
  const auto report = fine_tune_transfer(*to, {}, weights, {});
  CHECK(report.first_conv_filled);
  CHECK(report.transferred == report.total);
  const at::Tensor w = snapshot(*to).at("model.0.conv.weight");
  CHECK(torch::equal(w.slice(1, 0, 1), gray));
  CHECK(torch::equal(w.slice(1, 1, 3), before.slice(1, 1, 3)));
}

TEST_CASE("fine-tune transfer: a fused source (fewer than 10 BatchNorm layers) is not rebuilt") {
  auto from = tiny(ModelFamily::kYolo26, 40, 1);
  fuse_batchnorms(*from);
  auto to = tiny(ModelFamily::kYolo26, 4, 2);
  CHECK_FALSE(rebuilt_class_widths(state_dict(*to), state_dict(*from)).has_value());
}

TEST_CASE("fine-tune transfer: class rows follow the class names, case and spaces aside") {
  auto from = tiny(ModelFamily::kYolo26, 4, 1);
  auto to = tiny(ModelFamily::kYolo26, 3, 2);
  const auto src = snapshot(*from), before = snapshot(*to);
  const auto report = fine_tune_transfer(*to, {" DOG", "unicorn", "Cat\t"}, state_dict(*from),
                                         {"cat", "dog", "bird", "fish"});
  CHECK(report.remapped == 12);
  CHECK(report.matched_classes == 2);
  CHECK(report.transferred == report.total);  // the 12 remapped count as transferred
  const auto after = snapshot(*to);
  for (const auto& key : class_logit_keys()) {
    CAPTURE(key);
    CHECK(torch::equal(after.at(key)[0], src.at(key)[1]));     // dog
    CHECK(torch::equal(after.at(key)[1], before.at(key)[1]));  // unicorn: its initialisation
    CHECK(torch::equal(after.at(key)[2], src.at(key)[0]));     // cat
  }
}

TEST_CASE(
    "fine-tune transfer: the same classes in another order are remapped, the same order is "
    "copied") {
  auto from = tiny(ModelFamily::kYolo26, 3, 1);
  const auto src = snapshot(*from);
  auto to = tiny(ModelFamily::kYolo26, 3, 2);
  auto report = fine_tune_transfer(*to, {"c", "a", "b"}, state_dict(*from), {"a", "b", "c"});
  CHECK(report.remapped == 12);
  CHECK(report.transferred == report.total);
  const std::string key = "model.23.one2one_cv3.2.2.weight";
  CHECK(torch::equal(snapshot(*to).at(key)[0], src.at(key)[2]));
  auto same = tiny(ModelFamily::kYolo26, 3, 2);
  report = fine_tune_transfer(*same, {"a", "b", "c"}, state_dict(*from), {"a", "b", "c"});
  CHECK(report.remapped == 0);
  CHECK(torch::equal(snapshot(*same).at(key), src.at(key)));
}

TEST_CASE("fine-tune transfer: placeholder names and names that share nothing remap nothing") {
  CHECK(placeholder_names({}));
  CHECK(placeholder_names({"0", "1", "2"}));
  CHECK_FALSE(placeholder_names({"0", "2"}));
  CHECK_FALSE(placeholder_names({"person"}));
  auto from = tiny(ModelFamily::kYolo26, 4, 1);
  for (const auto& [target, source] :
       {std::pair<std::vector<std::string>, std::vector<std::string>>{{"0", "1", "2"},
                                                                      {"a", "b", "c", "d"}},
        {{"a", "b", "c"}, {"0", "1", "2", "3"}},
        {{"x", "y", "z"}, {"a", "b", "c", "d"}}}) {
    auto to = tiny(ModelFamily::kYolo26, 3, 2);
    const auto report = fine_tune_transfer(*to, target, state_dict(*from), source);
    CHECK(report.remapped == 0);
    CHECK(report.transferred == report.total - 12);
  }
}

TEST_CASE("fine-tune transfer: a name the source repeats maps to its last row, as a dict does") {
  auto from = tiny(ModelFamily::kYolo26, 3, 1);
  const auto src = snapshot(*from);
  auto to = tiny(ModelFamily::kYolo26, 2, 2);
  const auto report =
      fine_tune_transfer(*to, {"car", "bus"}, state_dict(*from), {"car", "bus", "Car"});
  CHECK(report.remapped == 12);
  const std::string key = "model.23.cv3.1.2.bias";
  CHECK(torch::equal(snapshot(*to).at(key)[0], src.at(key)[2]));
  CHECK(torch::equal(snapshot(*to).at(key)[1], src.at(key)[1]));
}

TEST_CASE("fine-tune transfer: a segmentation head's semantic classifier is remapped too") {
  auto from = tiny(ModelFamily::kYolo26, 4, 1, Task::kSegment);
  auto to = tiny(ModelFamily::kYolo26, 3, 2, Task::kSegment);
  const auto src = snapshot(*from);
  const auto report =
      fine_tune_transfer(*to, {"d", "c", "b"}, state_dict(*from), {"a", "b", "c", "d"});
  CHECK(report.remapped == 14);  // 12 cv3 / one2one_cv3 tensors, proto.semseg.2 weight and bias
  CHECK(report.transferred == report.total);
  const std::string key = "model.23.proto.semseg.2.weight";
  CHECK(torch::equal(snapshot(*to).at(key)[0], src.at(key)[3]));
}

TEST_CASE(
    "fine-tune transfer: mismatched shapes and missing keys are skipped, unknown keys "
    "ignored") {
  auto from = tiny(ModelFamily::kYolo26, 4, 1);
  auto to = tiny(ModelFamily::kYolo26, 4, 2);
  auto weights = state_dict(*from);
  const at::Tensor kept = snapshot(*to).at("model.2.cv1.conv.weight");
  for (auto& [key, t] : weights) {
    if (key == "model.2.cv1.conv.weight") t = torch::zeros({1, 2, 3});
  }
  weights.erase(std::remove_if(weights.begin(), weights.end(),
                               [](const auto& e) { return e.first == "model.1.bn.bias"; }),
                weights.end());
  weights.emplace_back("not.a.key", torch::ones({2}));
  const auto report = fine_tune_transfer(*to, {}, weights, {});
  CHECK(report.transferred == report.total - 2);
  CHECK(report.kept_initialised ==
        std::vector<std::string>{"model.1.bn.bias", "model.2.cv1.conv.weight"});
  CHECK(torch::equal(snapshot(*to).at("model.2.cv1.conv.weight"), kept));
}
