// State-dict key names and shapes equal the reference's for a sample of keys (hand-derived from
// the scale rules in reference-behaviour.md 4.1/4.2, yolo26n and yolo11n, nc=80).
#include <doctest/doctest.h>
#include <torch/torch.h>

#include <map>

#include "model/weights_io.h"
#include "model/yolo_model.h"

using namespace trainer::model;

namespace {

std::map<std::string, std::vector<int64_t>> shapes_of(const torch::nn::Module& m) {
  std::map<std::string, std::vector<int64_t>> out;
  for (const auto& [k, t] : state_dict(m)) out[k] = t.sizes().vec();
  return out;
}

void check_shapes(const std::map<std::string, std::vector<int64_t>>& got,
                  const std::map<std::string, std::vector<int64_t>>& expected) {
  for (const auto& [key, shape] : expected) {
    CAPTURE(key);
    REQUIRE(got.count(key) == 1);
    CHECK(got.at(key) == shape);
  }
}

}  // namespace

TEST_CASE("yolo26n key names and shapes") {
  auto model = build_yolo_model(parse_model_name("yolo26n"), 80);
  const auto got = shapes_of(*model);
  check_shapes(
      got, {
               {"model.0.conv.weight", {16, 3, 3, 3}},  // Conv(3, 64*0.25=16, 3, 2)
               {"model.0.bn.weight", {16}},
               {"model.0.bn.running_mean", {16}},
               {"model.0.bn.running_var", {16}},
               {"model.0.bn.num_batches_tracked", {}},
               // C3k2(32, 64, n=1, e=0.25): c = 16; cv1 Conv(32, 2c); cv2 Conv(3c, 64); m.0
               // Bottleneck(16, 16, e=0.5) with hidden 8.
               {"model.2.cv1.conv.weight", {32, 32, 1, 1}},
               {"model.2.cv2.conv.weight", {64, 48, 1, 1}},
               {"model.2.m.0.cv1.conv.weight", {8, 16, 3, 3}},
               {"model.2.m.0.cv2.conv.weight", {16, 8, 3, 3}},
               // C3k2(128, 128, c3k): c = 64, m.0 = C3k(64, 64, n=2): c_ = 32, Bottlenecks e=1.0.
               {"model.6.m.0.cv1.conv.weight", {32, 64, 1, 1}},
               {"model.6.m.0.cv3.conv.weight", {64, 64, 1, 1}},
               {"model.6.m.0.m.1.cv2.conv.weight", {32, 32, 3, 3}},
               // SPPF(256, 256): c_ = 128, cv2 over 4 * 128.
               {"model.9.cv1.conv.weight", {128, 256, 1, 1}},
               {"model.9.cv2.conv.weight", {256, 512, 1, 1}},
               // C2PSA(256): c = 128, 2 heads, head_dim 64, key_dim 32: qkv = 128 + 2*32*2 = 256.
               {"model.10.cv1.conv.weight", {256, 256, 1, 1}},
               {"model.10.m.0.attn.qkv.conv.weight", {256, 128, 1, 1}},
               {"model.10.m.0.attn.pe.conv.weight", {128, 1, 3, 3}},
               {"model.10.m.0.attn.proj.conv.weight", {128, 128, 1, 1}},
               {"model.10.m.0.ffn.0.conv.weight", {256, 128, 1, 1}},
               {"model.10.m.0.ffn.1.conv.weight", {128, 256, 1, 1}},
               // Layer 22: C3k2(384, 256, attn): c = 128, m.0 = [Bottleneck, PSABlock(2 heads)].
               {"model.22.cv1.conv.weight", {256, 384, 1, 1}},
               {"model.22.m.0.0.cv1.conv.weight", {64, 128, 3, 3}},
               {"model.22.m.0.1.attn.qkv.conv.weight", {256, 128, 1, 1}},
               // Detect: c2 = max(16, 64/4, 4) = 16, c3 = max(64, 80) = 80.
               {"model.23.cv2.0.0.conv.weight", {16, 64, 3, 3}},
               {"model.23.cv2.0.2.weight", {4, 16, 1, 1}},
               {"model.23.cv2.2.2.bias", {4}},
               {"model.23.cv3.0.0.0.conv.weight", {64, 1, 3, 3}},  // DWConv(64, 64, 3)
               {"model.23.cv3.0.0.1.conv.weight", {80, 64, 1, 1}},
               {"model.23.cv3.1.1.0.conv.weight", {80, 1, 3, 3}},
               {"model.23.cv3.2.2.weight", {80, 80, 1, 1}},
               {"model.23.one2one_cv2.1.1.conv.weight", {16, 16, 3, 3}},
               {"model.23.one2one_cv3.2.2.bias", {80}},  // level 2, output conv
           });
  CHECK(got.count("model.23.dfl.conv.weight") == 0);
  CHECK(got.count("model.11.weight") == 0);  // Upsample has none
}

TEST_CASE("yolo11n key names and shapes") {
  auto model = build_yolo_model(parse_model_name("yolo11n"), 80);
  const auto got = shapes_of(*model);
  check_shapes(got, {
                        {"model.0.conv.weight", {16, 3, 3, 3}},
                        {"model.9.cv1.conv.weight", {128, 256, 1, 1}},
                        // yolo11 layer 13 is C3k2(384, 128, c3k=False): c = 64, Bottleneck.
                        {"model.13.m.0.cv1.conv.weight", {32, 64, 3, 3}},
                        // layer 22 is C3k2(384, 256, c3k=True): m.0 = C3k(128, 128).
                        {"model.22.m.0.m.0.cv1.conv.weight", {64, 64, 3, 3}},
                        // Detect with reg_max 16: c2 = max(16, 16, 64) = 64.
                        {"model.23.cv2.0.0.conv.weight", {64, 64, 3, 3}},
                        {"model.23.cv2.0.2.weight", {64, 64, 1, 1}},
                        {"model.23.cv3.0.2.bias", {80}},
                        {"model.23.dfl.conv.weight", {1, 16, 1, 1}},
                    });
  for (const auto& k : got) CHECK(k.first.find("one2one") == std::string::npos);
  // The DFL weights are 0..15 and frozen.
  auto dfl = model->named_parameters()["model.23.dfl.conv.weight"];
  CHECK(torch::equal(dfl.flatten(), torch::arange(16, torch::kFloat)));
  CHECK_FALSE(dfl.requires_grad());
}

TEST_CASE("scale m forces c3k in every C3k2 and l doubles the repeats") {
  auto spec_m = make_model_spec(ModelFamily::kYolo11, scale_params('m'), 80);
  for (const auto& l : spec_m.layers) {
    if (l.kind == LayerKind::kC3k2) CHECK(l.c3k);
  }
  CHECK(spec_m.layers[2].repeats == 1);  // max(round(2 * 0.5), 1)
  auto spec_l = make_model_spec(ModelFamily::kYolo26, scale_params('l'), 80);
  CHECK(spec_l.layers[2].repeats == 2);   // round(2 * 1.0)
  CHECK(spec_l.layers[22].repeats == 1);  // written as 1 in the yaml
  CHECK(spec_l.layers[10].repeats == 2);  // C2PSA x2
  // max channels 512 at scale l: layer 7 Conv(1024) -> min(1024, 512) * 1.0 = 512.
  CHECK(spec_l.layers[7].c2 == 512);
  CHECK(make_divisible(1024 * 0.0625, 8) == 64);
  CHECK(make_divisible(20.0, 8) == 24);
}
