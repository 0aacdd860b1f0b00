// Parameter counts of every built-in family and scale against the reference's exact figures
// (reference-behaviour.md 4.1, nc=80, training form with both heads), and the module settings the
// optimizer relies on (BatchNorm2d modules with eps 1e-3, momentum 0.03).
#include <doctest/doctest.h>
#include <torch/torch.h>

#include <cmath>

#include "model/model_summary.h"
#include "model/yolo_model.h"

using namespace trainer::model;

namespace {

int64_t count(const torch::nn::Module& m, bool trainable_only) {
  int64_t n = 0;
  for (const auto& p : m.parameters()) {
    if (!trainable_only || p.requires_grad()) n += p.numel();
  }
  return n;
}

}  // namespace

TEST_CASE(
    "parameter counts and GFLOPs equal the reference for yolo26 and yolo11 at n s m l x (slow)") {
  struct Case {
    const char* name;
    int64_t params;
    double gflops;  // the reference's figure at 640, one decimal
  };
  // Reference table (nc=80): YOLO26 n..x, then YOLO11 n..x.
  const Case cases[] = {{"yolo26n", 2572280, 6.2},    {"yolo26s", 10009784, 23.1},
                        {"yolo26m", 21896248, 75.6},  {"yolo26l", 26299704, 94.2},
                        {"yolo26x", 58993368, 210.1}, {"yolo11n", 2624080, 6.7},
                        {"yolo11s", 9458752, 21.8},   {"yolo11m", 20114688, 68.6},
                        {"yolo11l", 25372160, 87.9},  {"yolo11x", 56966176, 196.3}};
  for (const auto& c : cases) {
    CAPTURE(c.name);
    auto model = build_yolo_model(parse_model_name(c.name), 80);
    CHECK(count(*model, false) == c.params);
    // YOLO11's DFL conv (16 weights 0..15) is a frozen parameter: 2,624,080 params, 2,624,064
    // gradients for yolo11n. YOLO26 has no DFL.
    const int64_t frozen = model->reg_max() > 1 ? 16 : 0;
    CHECK(count(*model, true) == c.params - frozen);
    // thop-style GFLOPs (conv MACs + 4 per BN element + attention matmuls, x2) at 640, as
    // get_flops(model, 640) of Ultralytics 8.4.190 prints them.
    const auto summary = summarize_model(*model, 640);
    CHECK(std::round(summary.gflops * 10) / 10 == doctest::Approx(c.gflops));
  }
}

TEST_CASE("every BatchNorm is a BatchNorm2d module with eps 1e-3 and momentum 0.03") {
  auto model = build_yolo_model(parse_model_name("yolo26n"), 80);
  int bn = 0;
  for (const auto& m : model->modules()) {
    if (auto b = std::dynamic_pointer_cast<torch::nn::BatchNorm2dImpl>(m)) {
      ++bn;
      CHECK(b->options.eps() == doctest::Approx(1e-3));
      CHECK(b->options.momentum().value() == doctest::Approx(0.03));
    }
  }
  // One BN per Conv: every 4-d weight except the 6 head output convs (x2 heads) has one.
  int convs = 0;
  for (const auto& p : model->named_parameters()) {
    if (p.value().dim() == 4) ++convs;
  }
  CHECK(bn == convs - 12);
}

TEST_CASE("the tiny model has the family's structure and names at a fraction of the size") {
  auto tiny26 = build_tiny_yolo_model(ModelFamily::kYolo26, 80);
  auto full26 = build_yolo_model(parse_model_name("yolo26n"), 80);
  auto tiny_keys = tiny26->named_parameters().keys();
  auto full_keys = full26->named_parameters().keys();
  CHECK(tiny_keys == full_keys);
  CHECK(tiny26->named_buffers().keys() == full26->named_buffers().keys());
  CHECK(count(*tiny26, false) < 400000);
  CHECK(tiny26->end2end());
  CHECK(tiny26->reg_max() == 1);
  auto tiny11 = build_tiny_yolo_model(ModelFamily::kYolo11, 3);
  CHECK(tiny11->named_parameters().keys() ==
        build_yolo_model(parse_model_name("yolo11n"), 3)->named_parameters().keys());
  CHECK_FALSE(tiny11->end2end());
  CHECK(tiny11->reg_max() == 16);
  CHECK(tiny11->num_classes() == 3);
}
