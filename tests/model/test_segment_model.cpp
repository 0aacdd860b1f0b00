// The segmentation models: parameter counts of all ten at nc=80 and nc=3 (reference-tasks.md
// 4.2), the summary figures, head rows, state-dict keys and order, the prototype and coefficient
// outputs, the decode, mask assembly by hand, names and the weights round trip. Parity with the
// reference's outputs on identical weights is tests/parity/test_seg_model_parity.cpp.
#include <doctest/doctest.h>
#include <torch/torch.h>

#include <map>

#include "core/error.h"
#include "model/mask_ops.h"
#include "model/model_summary.h"
#include "model/yolo_model.h"
#include "task_model_checks.h"
#include "test_support.h"

using namespace trainer;
using namespace trainer::model;
using trainer::test::head_attribute_order;
using trainer::test::parameter_count;

TEST_CASE(
    "segment parameter counts and GFLOPs equal the reference's for all ten (nc=80, nc=3) (slow)") {
  struct Case {
    const char* name;
    int64_t nc3;
    double gflops_nc3;  // unrounded get_flops(SegmentationModel(yaml, nc=3), 640)
    int64_t proto;      // the proto module's parameters at nc=80 (reference-tasks.md 4.2)
  };
  const Case cases[] = {
      {"yolo26n-seg", 3053965, 10.2872064, 233552},
      {"yolo26s-seg", 11436269, 37.3307392, 917520},
      {"yolo26m-seg", 26973549, 132.118528, 3506064},
      {"yolo26l-seg", 31377005, 150.641664, 3506064},
      {"yolo26x-seg", 70486285, 337.209856, 7864080},
      {"yolo11n-seg", 2843193, 9.7877504, 92544},
      {"yolo11s-seg", 10083449, 33.1979264, 365248},
      {"yolo11m-seg", 22361529, 113.6370176, 1451328},
      {"yolo11l-seg", 27619001, 132.8450048, 1451328},
      {"yolo11x-seg", 62053721, 297.3956608, 3258304},
  };
  for (const auto& c : cases) {
    CAPTURE(c.name);
    const auto name = parse_model_name(c.name);
    CHECK(name.task == core::Task::kSegment);
    CHECK(name.display() == c.name);
    auto model = build_yolo_model(name, 80);
    test::check_reference_summary(*model);
    REQUIRE(model->segment_head() != nullptr);
    CHECK(parameter_count(*model->segment_head()->proto()) == c.proto);
    auto small = build_yolo_model(name, 3);
    CHECK(parameter_count(*small) == c.nc3);
    CHECK(summarize_model(*small, 640).gflops == doctest::Approx(c.gflops_nc3).epsilon(1e-9));
  }
}

TEST_CASE("segment names and head rows: Segment26 / Segment with the reference's arguments") {
  CHECK_THROWS_WITH_AS(parse_model_name("yolo26n-segm"), doctest::Contains("unknown model"),
                       core::ConfigError);
  CHECK(parse_model_name("YOLO11s-SEG.yaml").display() == "yolo11s-seg");
  // The rows the reference prints for SegmentationModel("yolo26n-seg.yaml", nc=3) and yolo11n-seg.
  auto m26 = build_yolo_model(parse_model_name("yolo26n-seg"), 3);
  const auto s26 = summarize_model(*m26, 640);
  CHECK(s26.rows[23].module == "Segment26");
  CHECK(s26.rows[23].arguments == "[3, 32, 64, 1, True, [64, 128, 256]]");
  CHECK(s26.rows[23].params == 791341);
  auto m11 = build_yolo_model(parse_model_name("yolo11n-seg"), 3);
  const auto s11 = summarize_model(*m11, 640);
  CHECK(s11.rows[23].module == "Segment");
  CHECK(s11.rows[23].arguments == "[3, 32, 64, 16, None, [64, 128, 256]]");
  CHECK(s11.rows[23].params == 684025);
  auto x26 = build_yolo_model(parse_model_name("yolo26x-seg"), 3);
  CHECK(summarize_model(*x26, 640).rows[23].arguments == "[3, 32, 384, 1, True, [384, 768, 768]]");
  CHECK(x26->segment_head()->proto_hidden() == 384);  // 256 x 1.5
}

TEST_CASE("segment keys: the reference's count, order and prototype shapes") {
  auto m26 = build_yolo_model(parse_model_name("yolo26n-seg"), 80);
  int64_t head = 0;
  CHECK(head_attribute_order(*m26, &head) == std::vector<std::string>{"cv2", "cv3", "one2one_cv2",
                                                                      "one2one_cv3", "proto", "cv4",
                                                                      "one2one_cv4"});
  CHECK(head == 376);
  CHECK(state_dict(*m26).size() == 844);
  std::map<std::string, std::vector<int64_t>> shapes;
  for (const auto& [k, t] : state_dict(*m26)) shapes[k] = t.sizes().vec();
  using Shape = std::vector<int64_t>;
  CHECK(shapes.at("model.23.proto.feat_refine.0.conv.weight") == Shape{64, 128, 1, 1});
  CHECK(shapes.at("model.23.proto.feat_refine.1.conv.weight") == Shape{64, 256, 1, 1});
  CHECK(shapes.at("model.23.proto.feat_fuse.conv.weight") == Shape{64, 64, 3, 3});
  CHECK(shapes.at("model.23.proto.cv1.conv.weight") == Shape{64, 64, 3, 3});
  CHECK(shapes.at("model.23.proto.upsample.weight") == Shape{64, 64, 2, 2});
  CHECK(shapes.at("model.23.proto.upsample.bias") == Shape{64});
  CHECK(shapes.at("model.23.proto.cv2.conv.weight") == Shape{64, 64, 3, 3});
  CHECK(shapes.at("model.23.proto.cv3.conv.weight") == Shape{32, 64, 1, 1});
  CHECK(shapes.at("model.23.proto.semseg.0.conv.weight") == Shape{64, 64, 3, 3});
  CHECK(shapes.at("model.23.proto.semseg.1.conv.weight") == Shape{64, 64, 3, 3});
  CHECK(shapes.at("model.23.proto.semseg.2.weight") == Shape{80, 64, 1, 1});
  CHECK(shapes.at("model.23.proto.semseg.2.bias") == Shape{80});
  CHECK(shapes.at("model.23.cv4.0.0.conv.weight") == Shape{32, 64, 3, 3});
  CHECK(shapes.at("model.23.cv4.1.0.conv.weight") == Shape{32, 128, 3, 3});
  CHECK(shapes.at("model.23.cv4.0.1.conv.weight") == Shape{32, 32, 3, 3});
  CHECK(shapes.at("model.23.cv4.0.2.weight") == Shape{32, 32, 1, 1});
  CHECK(shapes.at("model.23.one2one_cv4.2.2.bias") == Shape{32});
  // Proto26 without its semantic branch: 233,552 - 79,184 (reference-tasks.md 4.2).
  int64_t semseg = 0;
  for (const auto& p : m26->segment_head()->proto()->named_parameters()) {
    if (p.key().rfind("semseg.", 0) == 0) semseg += p.value().numel();
  }
  CHECK(semseg == 79184);

  auto m11 = build_yolo_model(parse_model_name("yolo11n-seg"), 80);
  CHECK(head_attribute_order(*m11, &head) ==
        std::vector<std::string>{"cv2", "cv3", "dfl", "proto", "cv4"});
  CHECK(head == 183);
  CHECK(state_dict(*m11).size() == 561);
  std::map<std::string, Shape> shapes11;
  for (const auto& [k, t] : state_dict(*m11)) shapes11[k] = t.sizes().vec();
  CHECK(shapes11.at("model.23.proto.cv1.conv.weight") == Shape{64, 64, 3, 3});  // P3 -> npr
  CHECK(shapes11.at("model.23.proto.cv3.conv.weight") == Shape{32, 64, 1, 1});
  CHECK(shapes11.count("model.23.proto.feat_fuse.conv.weight") == 0);
  CHECK(shapes11.count("model.23.proto.semseg.2.weight") == 0);
  CHECK(m11->segment_head()->kind() == SegmentHeadKind::kSegment);
  CHECK_FALSE(m11->segment_head()->proto()->multi_scale());
  CHECK(m26->segment_head()->kind() == SegmentHeadKind::kSegment26);
  CHECK(m26->segment_head()->mask_hidden() == 32);  // max(64 / 4, 32)
  CHECK(m26->segments());
  CHECK(m26->head()->extra_channels() == 32);
  auto det = build_tiny_yolo_model(ModelFamily::kYolo26, 2);
  CHECK(det->segment_head() == nullptr);
  CHECK_FALSE(det->segments());
}

TEST_CASE(
    "segment forward: protos at 1/4, semantic logits at 1/8 in training only, o2o detached "
    "(slow)") {
  torch::manual_seed(0);
  const auto images = torch::rand({2, 3, 64, 96});
  auto m26 = build_tiny_yolo_model(ModelFamily::kYolo26, 3, core::Task::kSegment);
  m26->train();
  auto out = m26->forward_for_loss(images);
  REQUIRE(out.protos.size() == 1);
  CHECK(out.protos[0].sizes() == torch::IntArrayRef{2, 32, 16, 24});
  REQUIRE(out.semantic.size() == 1);
  CHECK(out.semantic[0].sizes() == torch::IntArrayRef{2, 3, 8, 12});
  REQUIRE(out.one2many_coef.size() == 3);
  REQUIRE(out.one2one_coef.size() == 3);
  CHECK(out.one2many_coef[1].sizes() == torch::IntArrayRef{2, 32, 4, 6});
  // The one-to-one coefficients run on detached features.
  out.one2one_coef[0].sum().backward();
  CHECK_FALSE(m26->named_parameters()["model.0.conv.weight"].grad().defined());
  m26->eval();
  {
    torch::NoGradGuard no_grad;
    out = m26->forward_for_loss(images);
    CHECK(out.semantic.empty());
    for (size_t i = 0; i < 3; ++i) CHECK(torch::equal(out.one2many_coef[i], out.one2one_coef[i]));
  }
  auto m11 = build_tiny_yolo_model(ModelFamily::kYolo11, 3, core::Task::kSegment);
  m11->train();
  const auto o = m11->forward_for_loss(images);
  CHECK(o.one2one_coef.empty());
  CHECK(o.semantic.empty());  // YOLO11's Proto has no semantic branch
  CHECK(o.protos.at(0).sizes() == torch::IntArrayRef{2, 32, 16, 24});
  // Prototypes are SiLU outputs: never below SiLU's minimum, -0.2785.
  CHECK(o.protos[0].min().item<double>() > -0.28);
}

TEST_CASE("segment decode_output: Detect's decode, then the coefficients as they are") {
  for (const auto family : {ModelFamily::kYolo26, ModelFamily::kYolo11}) {
    CAPTURE(static_cast<int>(family));
    torch::manual_seed(3);
    auto model = build_tiny_yolo_model(family, 4, core::Task::kSegment);
    model->eval();
    torch::NoGradGuard no_grad;
    const auto raw = model->forward_for_loss(torch::rand({2, 3, 64, 96}));
    const auto head = model->segment_head();
    const auto decoded = head->decode_output(raw, false);
    CHECK(decoded.sizes() == torch::IntArrayRef{2, 4 + 4 + 32, 96 + 24 + 6});
    CHECK(torch::equal(decoded.slice(1, 0, 8), head->decode(raw.one2many)));
    std::vector<torch::Tensor> flat;
    for (const auto& l : raw.one2many_coef) flat.push_back(l.flatten(2));
    CHECK(torch::equal(decoded.slice(1, 8), torch::cat(flat, 2)));
    // The postprocess carries the coefficients with their boxes: [box, score, class, 32 coef].
    PredictOptions options;
    options.conf = 0.0;
    options.use_one2many = true;
    const auto rows = model->postprocess(raw, options);
    REQUIRE(rows.size() == 2);
    CHECK(rows[0].size(1) == 6 + 32);
  }
}

TEST_CASE("mask_logits: coefficients x prototypes, by hand") {
  // Two prototypes on a 1 x 2 grid: p0 = [1, 2], p1 = [3, -1]. Coefficients (1, 1) and (2, -1):
  // masks [4, 1] and [-1, 5].
  const auto protos = torch::tensor({1.0f, 2.0f, 3.0f, -1.0f}).view({2, 1, 2});
  const auto coef = torch::tensor({1.0f, 1.0f, 2.0f, -1.0f}).view({2, 2});
  const auto m = mask_logits(coef, protos);
  CHECK(m.sizes() == torch::IntArrayRef{2, 1, 2});
  CHECK(torch::equal(m, torch::tensor({4.0f, 1.0f, -1.0f, 5.0f}).view({2, 1, 2})));
}

TEST_CASE("crop_mask: pixel indices x1 <= c < x2, y1 <= r < y2 (by hand)") {
  const auto ones = torch::ones({2, 4, 5});
  // Box 1: x 1..3 (columns 1, 2), y 0.5..2 (row 1: 0.5 > 0); box 2: fractional edges 1.5..4.2:
  // columns 2, 3, 4 (4 < 4.2), rows 2, 3.
  const auto boxes = torch::tensor({1.0f, 0.5f, 3.0f, 2.0f, 1.5f, 1.5f, 4.2f, 5.0f}).view({2, 4});
  const auto c = crop_mask(ones, boxes);
  CHECK(c[0].sum().item<float>() == 2);
  CHECK(c[0][1][1].item<float>() == 1);
  CHECK(c[0][1][2].item<float>() == 1);
  CHECK(c[0][0][1].item<float>() == 0);
  CHECK(c[1].sum().item<float>() == 6);
  CHECK(c[1][2][4].item<float>() == 1);
  CHECK(c[1][1][2].item<float>() == 0);
  CHECK(ones.sum().item<float>() == 40);  // the input is left as it was
}

TEST_CASE("segment weights: save then load is equal to the bit, detection weights do not fit") {
  test::check_task_weights_round_trip(core::Task::kSegment, [](YoloModelImpl& m) {
    torch::NoGradGuard no_grad;
    m.train();
    m.forward_for_loss(torch::rand({1, 3, 64, 64}));
  });
}
