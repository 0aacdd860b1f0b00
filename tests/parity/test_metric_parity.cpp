// Parity of the reference metric on identical predictions: many crowded images, several classes,
// predictions scattered around the ground truth (so every IoU threshold and 8.4.190's matching
// order matter: the older match rule gives a different mAP on this data), run through trainer's
// ReferenceMetric and the reference's match_predictions + DetMetrics.
#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <fstream>
#include <numeric>
#include <random>

#include "eval/reference_metric.h"
#include "parity_oracle.h"
#include "test_support.h"

using namespace trainer;
using nlohmann::json;
using Box = std::array<float, 4>;

TEST_CASE("parity: P, R, mAP50, mAP50-95 and per-class AP50 on identical predictions") {
  TRAINER_REQUIRE_ORACLE(python);
  test::TempDir dir;
  const int nc = 3, images = 60;
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> unit(0.0f, 1.0f);
  eval::ReferenceMetric ours(nc, /*max_det=*/300);
  json input = {{"nc", nc}, {"images", json::array()}};
  for (int k = 0; k < images; ++k) {
    std::vector<Box> gt;
    std::vector<int> gt_cls;
    const int objects = static_cast<int>(unit(rng) * 8);
    const int image_class = static_cast<int>(unit(rng) * nc);  // crowds of one class
    for (int o = 0; o < objects; ++o) {
      // Crowded: objects overlap each other, so a prediction's best ground truth is often
      // claimed by a higher-scored one and the matching order matters.
      const float x = unit(rng) * 60, y = unit(rng) * 60, w = 20 + unit(rng) * 40,
                  h = 20 + unit(rng) * 40;
      gt.push_back({x, y, x + w, y + h});
      gt_cls.push_back(unit(rng) < 0.8f ? image_class : static_cast<int>(unit(rng) * nc));
    }
    // Predictions: jittered copies of ground truth (sometimes the wrong class, sometimes two for
    // one object), plus boxes anywhere; sorted by descending score as NMS returns them.
    struct Pred {
      Box box;
      float score;
      int cls;
    };
    std::vector<Pred> preds;
    for (size_t o = 0; o < gt.size(); ++o) {
      const int copies = static_cast<int>(unit(rng) * 3);
      for (int c = 0; c < copies; ++c) {
        const float j = 0.4f * (gt[o][2] - gt[o][0]);
        Box b = gt[o];
        for (float& v : b) v += (unit(rng) - 0.5f) * j;
        const int cls = unit(rng) < 0.15f ? (gt_cls[o] + 1) % nc : gt_cls[o];
        preds.push_back({b, unit(rng), cls});
      }
    }
    const int clutter = static_cast<int>(unit(rng) * 4);
    for (int c = 0; c < clutter; ++c) {
      const float x = unit(rng) * 200, y = unit(rng) * 200;
      preds.push_back({{x, y, x + 30, y + 30}, unit(rng) * 0.5f, static_cast<int>(unit(rng) * nc)});
    }
    std::stable_sort(preds.begin(), preds.end(),
                     [](const Pred& a, const Pred& b) { return a.score > b.score; });
    std::vector<Box> boxes;
    std::vector<float> scores;
    std::vector<int> classes;
    json image = {{"pred_boxes", json::array()},
                  {"scores", json::array()},
                  {"pred_classes", json::array()},
                  {"gt_boxes", json::array()},
                  {"gt_classes", gt_cls}};
    for (const auto& p : preds) {
      boxes.push_back(p.box);
      scores.push_back(p.score);
      classes.push_back(p.cls);
      image["pred_boxes"].push_back(p.box);
      image["scores"].push_back(p.score);
      image["pred_classes"].push_back(p.cls);
    }
    for (const auto& g : gt) image["gt_boxes"].push_back(g);
    ours.add_image(boxes, scores, classes, gt, gt_cls);
    input["images"].push_back(image);
  }
  test::write_text(dir / "metric_in.json", input.dump());
  test::run_oracle(*python, "metric '" + (dir / "metric_out.json").string() + "' '" +
                                (dir / "metric_in.json").string() + "'");
  std::ifstream in(dir / "metric_out.json");
  REQUIRE(in.good());
  const json ref = json::parse(in);
  const auto r = ours.compute();
  MESSAGE("P " << r.precision << " / " << ref["precision"] << ", R " << r.recall << " / "
               << ref["recall"] << ", mAP50 " << r.map50 << " / " << ref["map50"] << ", mAP50-95 "
               << r.map50_95 << " / " << ref["map50_95"]);
  CHECK(r.map50 > 0.2);  // the scattered copies make a metric worth comparing
  CHECK(r.precision == doctest::Approx(ref["precision"].get<double>()).epsilon(1e-9));
  CHECK(r.recall == doctest::Approx(ref["recall"].get<double>()).epsilon(1e-9));
  CHECK(r.map50 == doctest::Approx(ref["map50"].get<double>()).epsilon(1e-9));
  CHECK(r.map50_95 == doctest::Approx(ref["map50_95"].get<double>()).epsilon(1e-9));
  for (const auto& c : r.per_class) {
    CAPTURE(c.class_id);
    CHECK(c.ap50 ==
          doctest::Approx(ref["ap50"][std::to_string(c.class_id)].get<double>()).epsilon(1e-9));
  }
}
