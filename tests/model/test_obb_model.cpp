// The OBB models: parameter counts of all ten at nc=15 and nc=80 (reference-tasks.md 3.2), the
// summary figures, state-dict keys and order, the angle branch and its decode, the rotated box
// decode (hand-computed, and against Detect's decode at angle 0), names and the weights round trip.
#include <doctest/doctest.h>
#include <torch/torch.h>

#include <cmath>
#include <map>

#include "core/error.h"
#include "model/model_summary.h"
#include "model/rotated_box_ops.h"
#include "model/weights_io.h"
#include "model/yolo_model.h"
#include "task_model_checks.h"
#include "test_support.h"

using namespace trainer;
using namespace trainer::model;
using trainer::test::head_attribute_order;
using trainer::test::parameter_count;

TEST_CASE(
    "obb parameter counts and GFLOPs equal the reference's for all ten (nc=15 and nc=80) (slow)") {
  struct Case {
    const char* name;
    int64_t nc15;
    double gflops_nc15;  // unrounded get_flops(OBBModel(yaml, nc=15), 640)
  };
  const Case cases[] = {
      {"yolo26n-obb", 2652984, 6.4174336},    {"yolo26s-obb", 10531832, 24.7706112},
      {"yolo26m-obb", 23493688, 82.4681472},  {"yolo26l-obb", 27897144, 100.9912832},
      {"yolo26x-obb", 62661528, 225.8539008}, {"yolo11n-obb", 2664432, 6.7622016},
      {"yolo11s-obb", 9719776, 22.681984},    {"yolo11m-obb", 20913408, 72.0595968},
      {"yolo11l-obb", 26170880, 91.267584},   {"yolo11x-obb", 58800256, 204.204672},
  };
  for (const auto& c : cases) {
    CAPTURE(c.name);
    const auto name = parse_model_name(c.name);
    CHECK(name.task == core::Task::kObb);
    CHECK(name.display() == c.name);
    auto model = build_yolo_model(name, 80);
    test::check_reference_summary(*model);
    auto dota = build_yolo_model(name, 15);
    CHECK(parameter_count(*dota) == c.nc15);
    CHECK(summarize_model(*dota, 640).gflops == doctest::Approx(c.gflops_nc15).epsilon(1e-9));
  }
}

TEST_CASE("obb names and head rows: OBB26 / OBB with the reference's arguments") {
  CHECK_THROWS_WITH_AS(parse_model_name("yolo26n-obbx"), doctest::Contains("unknown model"),
                       core::ConfigError);
  CHECK_THROWS_WITH_AS(parse_model_name("yolo26n-segx"), doctest::Contains("unknown model"),
                       core::ConfigError);
  CHECK(parse_model_name("YOLO11s-OBB.yaml").display() == "yolo11s-obb");
  auto m26 = build_yolo_model(parse_model_name("yolo26n-obb"), 15);
  const auto s26 = summarize_model(*m26, 640);
  CHECK(s26.rows[23].module == "OBB26");
  CHECK(s26.rows[23].arguments == "[15, 1, 1, True, [64, 128, 256]]");
  CHECK(s26.rows[23].params == 390360);
  auto m11 = build_yolo_model(parse_model_name("yolo11n-obb"), 15);
  const auto s11 = summarize_model(*m11, 640);
  CHECK(s11.rows[23].module == "OBB");
  CHECK(s11.rows[23].arguments == "[15, 1, 16, None, [64, 128, 256]]");
  CHECK(s11.rows[23].params == 505264);
}

TEST_CASE("obb keys: the reference's count, order and angle-tower shapes") {
  auto m26 = build_yolo_model(parse_model_name("yolo26n-obb"), 15);
  int64_t head = 0;
  CHECK(head_attribute_order(*m26, &head) ==
        std::vector<std::string>{"cv2", "cv3", "one2one_cv2", "one2one_cv3", "cv4", "one2one_cv4"});
  CHECK(head == 324);
  CHECK(state_dict(*m26).size() == 792);
  std::map<std::string, std::vector<int64_t>> shapes;
  for (const auto& [k, t] : state_dict(*m26)) shapes[k] = t.sizes().vec();
  CHECK(shapes.at("model.23.cv4.0.0.conv.weight") == std::vector<int64_t>{16, 64, 3, 3});
  CHECK(shapes.at("model.23.cv4.0.1.conv.weight") == std::vector<int64_t>{16, 16, 3, 3});
  CHECK(shapes.at("model.23.cv4.0.2.weight") == std::vector<int64_t>{1, 16, 1, 1});
  CHECK(shapes.at("model.23.one2one_cv4.2.2.bias") == std::vector<int64_t>{1});
  auto m11 = build_yolo_model(parse_model_name("yolo11n-obb"), 15);
  CHECK(head_attribute_order(*m11, &head) == std::vector<std::string>{"cv2", "cv3", "dfl", "cv4"});
  CHECK(head == 163);
  CHECK(state_dict(*m11).size() == 541);
  REQUIRE(m11->obb_head() != nullptr);
  CHECK(m11->oriented());
  CHECK(m11->obb_head()->kind() == ObbHeadKind::kObb);
  CHECK(m26->obb_head()->kind() == ObbHeadKind::kObb26);
  CHECK(m26->obb_head()->angle_hidden() == 16);
  CHECK(m26->head()->extra_channels() == 1);
  auto det = build_tiny_yolo_model(ModelFamily::kYolo26, 2);
  CHECK(det->obb_head() == nullptr);
  CHECK_FALSE(det->oriented());
}

TEST_CASE("obb angle decode: (sigmoid - 0.25) pi for OBB, raw for OBB26") {
  const auto logits = torch::tensor({-50.0, 0.0, 50.0}, torch::kDouble);
  const auto v11 = decode_angle(logits, ObbHeadKind::kObb);
  CHECK(v11[0].item<double>() == doctest::Approx(-M_PI / 4));
  CHECK(v11[1].item<double>() == doctest::Approx(M_PI / 4));
  CHECK(v11[2].item<double>() == doctest::Approx(3 * M_PI / 4));
  CHECK(torch::equal(decode_angle(logits, ObbHeadKind::kObb26), logits));
}

TEST_CASE("obb box decode: hand-computed rotated box, x stride") {
  // l, t, r, b = 1, 2, 3, 4 from anchor (10.5, 5.5), angle pi/2, stride 8:
  // (xf, yf) = ((r - l) / 2, (b - t) / 2) = (1, 1) turned by pi/2 = (-1, 1) -> centre (9.5, 6.5);
  // w = l + r = 4, h = t + b = 6; x 8 -> (76, 52, 32, 48).
  const auto o = torch::TensorOptions().dtype(torch::kDouble);
  const auto dist = torch::tensor({1.0, 2.0, 3.0, 4.0}, o).view({1, 4, 1});
  const auto angle = torch::full({1, 1, 1}, M_PI / 2, o);
  const auto points = torch::tensor({10.5, 5.5}, o).view({1, 2});
  const auto strides = torch::full({1, 1}, 8.0, o);
  const auto box = decode_rotated_boxes(dist, angle, points, strides).flatten();
  CHECK(box[0].item<double>() == doctest::Approx(76.0));
  CHECK(box[1].item<double>() == doctest::Approx(52.0));
  CHECK(box[2].item<double>() == doctest::Approx(32.0));
  CHECK(box[3].item<double>() == doctest::Approx(48.0));
}

TEST_CASE("obb decode_output at angle 0 equals Detect's xywh decode, then scores, then the angle") {
  for (const auto family : {ModelFamily::kYolo26, ModelFamily::kYolo11}) {
    CAPTURE(static_cast<int>(family));
    torch::manual_seed(3);
    auto model = build_tiny_yolo_model(family, 4, core::Task::kObb);
    auto head = model->obb_head();
    REQUIRE(head != nullptr);
    {
      // Angle 0 everywhere: OBB26's raw output 0; OBB's logit log(1/3) (sigmoid 0.25).
      torch::NoGradGuard no_grad;
      const double bias = head->kind() == ObbHeadKind::kObb26 ? 0.0 : std::log(1.0 / 3.0);
      for (size_t i = 0; i < 3; ++i) {
        for (bool one2one : {false, true}) {
          if (one2one && !head->end2end()) continue;
          head->angle_output(i, one2one)->weight.zero_();
          head->angle_output(i, one2one)->bias.fill_(bias);
        }
      }
    }
    model->eval();
    torch::NoGradGuard no_grad;
    const auto raw = model->forward_for_loss(torch::rand({2, 3, 64, 96}));
    REQUIRE(raw.one2many_angle.size() == 3);
    CHECK(raw.one2many_angle[0].sizes() == torch::IntArrayRef{2, 1, 8, 12});
    CHECK(raw.one2one_angle.size() == (head->end2end() ? 3u : 0u));
    const auto decoded = head->decode_output(raw, false);
    CHECK(decoded.sizes() == torch::IntArrayRef{2, 4 + 4 + 1, 96 + 24 + 6});
    const auto plain = head->decode(raw.one2many, /*xywh=*/true);
    CHECK(torch::allclose(decoded.slice(1, 0, 8), plain, 1e-5, 1e-4));
    CHECK(decoded.select(1, 8).abs().max().item<double>() < 1e-6);
  }
}

TEST_CASE("obb forward: angles per level and branch, OBB's in [-pi/4, 3pi/4], equal copies") {
  torch::manual_seed(0);
  const auto images = torch::rand({2, 3, 64, 64});
  auto m26 = build_tiny_yolo_model(ModelFamily::kYolo26, 3, core::Task::kObb);
  m26->train();
  auto out = m26->forward_for_loss(images);
  REQUIRE(out.one2one_angle.size() == 3);
  CHECK(out.one2many_angle[2].sizes() == torch::IntArrayRef{2, 1, 2, 2});
  // The one-to-one branch runs on detached features.
  out.one2one_angle[0].sum().backward();
  CHECK_FALSE(m26->named_parameters()["model.0.conv.weight"].grad().defined());
  m26->eval();
  {
    torch::NoGradGuard no_grad;
    out = m26->forward_for_loss(images);
    for (size_t i = 0; i < 3; ++i) CHECK(torch::equal(out.one2many_angle[i], out.one2one_angle[i]));
  }
  auto m11 = build_tiny_yolo_model(ModelFamily::kYolo11, 3, core::Task::kObb);
  torch::NoGradGuard no_grad;
  {
    // Large logits either way stay inside the range.
    for (size_t i = 0; i < 3; ++i) m11->obb_head()->angle_output(i)->bias.fill_(i == 0 ? -80 : 80);
  }
  const auto o = m11->forward_for_loss(images);
  CHECK(o.one2one_angle.empty());
  for (const auto& a : o.one2many_angle) {
    CHECK(a.min().item<double>() >= -M_PI / 4 - 1e-6);
    CHECK(a.max().item<double>() <= 3 * M_PI / 4 + 1e-6);
  }
}

TEST_CASE("obb weights: save then load is equal to the bit, detection weights do not fit") {
  test::check_task_weights_round_trip(core::Task::kObb, [](YoloModelImpl&) {});
}

TEST_CASE("rotated Fast-NMS: a suppressed box still suppresses (not greedy)") {
  // 10 x 10 boxes shifted by 2 px: ProbIoU 1 - sqrt(1 - exp(-0.06)) = 0.759 > 0.7; by 4 px:
  // 1 - sqrt(1 - exp(-0.24)) = 0.539. B is suppressed by A, and C by B although B is gone:
  // greedy NMS would keep C.
  const auto boxes = torch::tensor({{0.0f, 0.0f, 10.0f, 10.0f, 0.0f},
                                    {2.0f, 0.0f, 10.0f, 10.0f, 0.0f},
                                    {4.0f, 0.0f, 10.0f, 10.0f, 0.0f}});
  CHECK(model::batch_probiou(boxes.slice(0, 0, 1), boxes.slice(0, 1, 2)).item<float>() ==
        doctest::Approx(1 - std::sqrt(1 - std::exp(-0.06))).epsilon(1e-4));
  auto keep = rotated_fast_nms(boxes, 0.7);
  CHECK(keep.numel() == 1);
  CHECK(keep[0].item<int64_t>() == 0);
  // A and C alone: both kept; max_keep limits.
  keep = rotated_fast_nms(torch::stack({boxes[0], boxes[2]}), 0.7);
  CHECK(keep.numel() == 2);
  CHECK(rotated_fast_nms(torch::stack({boxes[0], boxes[2]}), 0.7, 1).numel() == 1);
  CHECK(rotated_fast_nms(torch::zeros({0, 5}), 0.7).numel() == 0);
}

TEST_CASE(
    "rotated NMS per image: class offset on the centre, rows [cx, cy, w, h, score, cls, angle]") {
  // One image, 3 anchors, 2 classes: anchors 0 and 1 hold the same box (class 0 scores 0.9 and
  // 0.8), anchor 2 the same box again with class 1 (0.6): anchor 1 goes, anchor 2 stays.
  const auto preds = torch::tensor({{50.0f, 50.0f, 50.0f},  // cx
                                    {40.0f, 40.0f, 40.0f},  // cy
                                    {30.0f, 30.0f, 30.0f},  // w
                                    {10.0f, 10.0f, 10.0f},  // h
                                    {0.9f, 0.8f, 0.0f},     // class 0
                                    {0.0f, 0.0f, 0.6f},     // class 1
                                    {0.5f, 0.5f, 0.5f}})    // angle
                         .unsqueeze(0);
  PredictOptions o;
  o.conf = 0.01;
  o.rotated = true;
  const auto out = non_max_suppression(preds, o, 1);
  REQUIRE(out.size() == 1);
  REQUIRE(out[0].size(0) == 2);
  CHECK(torch::allclose(out[0][0], torch::tensor({50.0f, 40.0f, 30.0f, 10.0f, 0.9f, 0.0f, 0.5f})));
  CHECK(torch::allclose(out[0][1], torch::tensor({50.0f, 40.0f, 30.0f, 10.0f, 0.6f, 1.0f, 0.5f})));
  o.agnostic = true;
  CHECK(non_max_suppression(preds, o, 1)[0].size(0) == 1);
}
