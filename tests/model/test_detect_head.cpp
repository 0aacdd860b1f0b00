// The Detect head: strides, anchors at 640, bias init values, the one-to-one copy, and forward
// shapes for training and inference (reference-behaviour.md 4.2).
#include <doctest/doctest.h>
#include <torch/torch.h>

#include "model/anchors.h"
#include "model/yolo_model.h"

using namespace trainer::model;

TEST_CASE("strides are 8 16 32 and anchors at 640 are the 8400 cell centres") {
  auto model = build_tiny_yolo_model(ModelFamily::kYolo26, 80);
  CHECK(model->strides() == std::vector<double>{8.0, 16.0, 32.0});
  std::vector<torch::Tensor> feats = {torch::zeros({1, 1, 80, 80}), torch::zeros({1, 1, 40, 40}),
                                      torch::zeros({1, 1, 20, 20})};
  auto a = make_anchors(feats, model->strides());
  REQUIRE(a.points.sizes() == torch::IntArrayRef{8400, 2});  // 80^2 + 40^2 + 20^2
  REQUIRE(a.strides.sizes() == torch::IntArrayRef{8400, 1});
  auto p = a.points.accessor<float, 2>();
  auto s = a.strides.accessor<float, 2>();
  // Level P3: row-major (x + 0.5, y + 0.5); index 1 is the next x, index 80 the next row.
  CHECK(p[0][0] == 0.5f);
  CHECK(p[0][1] == 0.5f);
  CHECK(p[1][0] == 1.5f);
  CHECK(p[80][0] == 0.5f);
  CHECK(p[80][1] == 1.5f);
  CHECK(p[6399][0] == 79.5f);
  CHECK(s[6399][0] == 8.0f);
  // P4 starts at 6400, P5 at 6400 + 1600 = 8000.
  CHECK(p[6400][0] == 0.5f);
  CHECK(s[6400][0] == 16.0f);
  CHECK(p[8399][0] == 19.5f);
  CHECK(p[8399][1] == 19.5f);
  CHECK(s[8399][0] == 32.0f);
}

TEST_CASE("dist2bbox turns ltrb around an anchor into xyxy and xywh") {
  auto anchor = torch::tensor({{10.5f, 20.5f}});
  auto ltrb = torch::tensor({{1.0f, 2.0f, 3.0f, 4.0f}});
  // xyxy = (10.5 - 1, 20.5 - 2, 10.5 + 3, 20.5 + 4); xywh: centre (11.5, 21.5), size (4, 6).
  CHECK(torch::equal(dist2bbox(ltrb, anchor, false, -1),
                     torch::tensor({{9.5f, 18.5f, 13.5f, 24.5f}})));
  CHECK(
      torch::equal(dist2bbox(ltrb, anchor, true, -1), torch::tensor({{11.5f, 21.5f, 4.0f, 6.0f}})));
}

TEST_CASE("bias init: box 2.0 and class log(5 / nc / (640 / s)^2) in both heads") {
  auto model = build_tiny_yolo_model(ModelFamily::kYolo26, 80);
  auto& head = model->head();
  // log(5 / 80 / 80^2) = -11.5366, log(5 / 80 / 40^2) = -10.1503, log(5 / 80 / 20^2) = -8.7641.
  const double expected[] = {-11.536641991587544, -10.150347630467653, -8.764053269347762};
  for (size_t i = 0; i < 3; ++i) {
    for (bool o2o : {false, true}) {
      CAPTURE(i);
      CAPTURE(o2o);
      auto box = head->box_output(i, o2o)->bias;
      auto cls = head->class_output(i, o2o)->bias;
      CHECK(box.size(0) == 4);
      CHECK(torch::all(box == 2.0f).item<bool>());
      CHECK(cls.size(0) == 80);
      CHECK(cls.min().item<double>() == doctest::Approx(expected[i]).epsilon(1e-6));
      CHECK(cls.max().item<double>() == doctest::Approx(expected[i]).epsilon(1e-6));
    }
  }
  // nc = 3 at stride 8: log(5 / 3 / 6400) = -8.2532.
  auto small = build_tiny_yolo_model(ModelFamily::kYolo11, 3);
  CHECK(small->head()->class_output(0)->bias[0].item<double>() ==
        doctest::Approx(-8.253227645581772).epsilon(1e-6));
  CHECK(small->head()->box_output(0)->bias.size(0) == 64);  // 4 * reg_max 16
}

TEST_CASE("the one-to-one head starts as an exact copy of the one-to-many head") {
  auto model = build_tiny_yolo_model(ModelFamily::kYolo26, 5);
  auto params = model->named_parameters();
  int compared = 0;
  for (const auto& p : params) {
    const auto pos = p.key().find("one2one_");
    if (pos == std::string::npos) continue;
    auto twin = p.key();
    twin.erase(pos, 8);
    CAPTURE(p.key());
    CHECK(torch::equal(p.value(), params[twin]));
    ++compared;
  }
  // Per level: box tower 2 Conv (weight, BN weight, BN bias) + output (weight, bias), class tower
  // 4 Conv + output: 3 * (2 * 3 + 2 + 4 * 3 + 2) = 66.
  CHECK(compared == 66);
}

TEST_CASE("one2one trains on detached features: its loss gives the backbone no gradient (slow)") {
  auto model = build_tiny_yolo_model(ModelFamily::kYolo26, 2);
  auto out = model->forward_for_loss(torch::rand({1, 3, 64, 64}));
  torch::Tensor loss = torch::zeros({});
  for (const auto& l : out.one2one) loss = loss + l.sum();
  loss.backward();
  auto params = model->named_parameters();
  CHECK_FALSE(params["model.0.conv.weight"].grad().defined());
  CHECK(params["model.23.one2one_cv2.0.2.weight"].grad().defined());
}

TEST_CASE("training forward shapes at 640 for yolo26n and yolo11n (slow)") {
  for (const char* name : {"yolo26n", "yolo11n"}) {
    CAPTURE(name);
    auto model = build_yolo_model(parse_model_name(name), 80);
    auto out = model->forward_for_loss(torch::rand({1, 3, 640, 640}));
    const int64_t no = 4 * model->reg_max() + 80;
    REQUIRE(out.one2many.size() == 3);
    CHECK(out.one2many[0].sizes() == torch::IntArrayRef{1, no, 80, 80});
    CHECK(out.one2many[1].sizes() == torch::IntArrayRef{1, no, 40, 40});
    CHECK(out.one2many[2].sizes() == torch::IntArrayRef{1, no, 20, 20});
    if (model->end2end()) {
      REQUIRE(out.one2one.size() == 3);
      CHECK(out.one2one[2].sizes() == torch::IntArrayRef{1, 84, 20, 20});
    } else {
      CHECK(out.one2one.empty());
    }
  }
}

TEST_CASE("training forward shapes at a small non-square size, batch 2") {
  auto model = build_tiny_yolo_model(ModelFamily::kYolo11, 3);
  auto out = model->forward_for_loss(torch::rand({2, 3, 96, 64}));
  CHECK(out.one2many[0].sizes() == torch::IntArrayRef{2, 64 + 3, 12, 8});
  CHECK(out.one2many[2].sizes() == torch::IntArrayRef{2, 64 + 3, 3, 2});
  CHECK_THROWS(model->forward_for_loss(torch::rand({1, 3, 100, 64})));  // not a multiple of 32
}

TEST_CASE("inference: yolo26n at 640 gives (1, 300, 6) top-k, NMS rows at most max_det (slow)") {
  auto y26 = build_yolo_model(parse_model_name("yolo26n"), 80);
  auto images = torch::rand({1, 3, 640, 640});
  auto top = y26->predict_topk(images, 300);
  CHECK(top.sizes() == torch::IntArrayRef{1, 300, 6});
  CHECK(y26->is_training());  // the mode is restored
  // Sorted by score; classes are integers in [0, 80); boxes inside a loose frame.
  auto scores = top[0].select(1, 4);
  CHECK(torch::all(scores.slice(0, 0, 299) >= scores.slice(0, 1, 300)).item<bool>());
  auto cls = top[0].select(1, 5);
  CHECK(torch::all(cls == cls.round()).item<bool>());
  CHECK(cls.max().item<double>() < 80);
  // predict() = the same top-k rows with score > conf.
  auto rows = filter_by_confidence(top[0], PredictOptions{}.conf, 300);
  CHECK(rows.size(0) <= 300);

  // YOLO11 (NMS) and YOLO26's one-to-many head through predict(), small images, batch 2.
  auto y11 = build_tiny_yolo_model(ModelFamily::kYolo11, 80);
  auto small = torch::rand({2, 3, 128, 96});
  auto nms_rows = y11->predict(small, PredictOptions{});
  REQUIRE(nms_rows.size() == 2);
  CHECK(nms_rows[0].size(0) <= 300);
  CHECK(nms_rows[0].size(1) == 6);
  PredictOptions o2m;
  o2m.use_one2many = true;
  o2m.max_det = 50;
  auto o2m_rows = build_tiny_yolo_model(ModelFamily::kYolo26, 80)->predict(small, o2m);
  REQUIRE(o2m_rows.size() == 2);
  CHECK(o2m_rows[1].size(0) <= 50);
  auto e2e_rows = build_tiny_yolo_model(ModelFamily::kYolo26, 80)->predict(small, {});
  REQUIRE(e2e_rows.size() == 2);
  CHECK(e2e_rows[0].size(0) <= 300);
}

TEST_CASE("decode puts an anchor's raw ltrb into pixels with the level stride") {
  auto model = build_tiny_yolo_model(ModelFamily::kYolo26, 1);
  // One image 64x64: levels 8x8, 4x4, 2x2. Raw outputs: ltrb = (1, 1, 1, 1), logit 0.
  std::vector<torch::Tensor> levels = {torch::ones({1, 5, 8, 8}), torch::ones({1, 5, 4, 4}),
                                       torch::ones({1, 5, 2, 2})};
  for (auto& l : levels) l.select(1, 4).zero_();
  auto d = model->head()->decode(levels);  // (1, 5, 84)
  REQUIRE(d.sizes() == torch::IntArrayRef{1, 5, 64 + 16 + 4});
  // Anchor 0 of P3: centre (0.5, 0.5) -> xyxy (-0.5, -0.5, 1.5, 1.5) * 8.
  CHECK(torch::equal(d[0].select(1, 0), torch::tensor({-4.0f, -4.0f, 12.0f, 12.0f, 0.5f})));
  // Last anchor (P5, cell (1, 1), centre 1.5): (0.5, 0.5, 2.5, 2.5) * 32.
  CHECK(torch::equal(d[0].select(1, 83), torch::tensor({16.0f, 16.0f, 80.0f, 80.0f, 0.5f})));
}
