// The reference trainer's metric (eval/reference_metric.h) on hand-computed cases.
#include <doctest/doctest.h>

#include <cstddef>
#include <stdexcept>
#include <vector>

#include "eval/reference_metric.h"

using namespace trainer::eval;
using Box = std::array<float, 4>;

TEST_CASE("reference_box_iou is the float32 box_iou with eps 1e-7") {
  // [0,0,10,10] vs [5,0,15,10]: 50 / (100 + 100 - 50 + 1e-7) = 1/3 in float32.
  CHECK(reference_box_iou({0, 0, 10, 10}, {5, 0, 15, 10}) ==
        doctest::Approx(1.0 / 3.0).epsilon(1e-6));
  CHECK(reference_box_iou({0, 0, 10, 10}, {0, 0, 10, 10}) ==
        1.0f);  // 100 / (100 + 1e-7) rounds to 1
  CHECK(reference_box_iou({0, 0, 10, 10}, {10, 0, 20, 10}) == 0.0f);
  CHECK(reference_iou_thresholds()[5] == 0.75f);
  CHECK(reference_iou_thresholds()[1] == 0.55f);
}

TEST_CASE("compute_ap: 8.4.190's sentinels, hand-computed and equal to the reference's values") {
  // 8.4.190 appends (last recall, 0) and (1, 0). One perfect detection: mrec [0, 1, 1, 1], mpre
  // [1, 1, 0, 0]; np.interp is 1 on [0, 1) and 0 at recall 1 (the last of the equal xp wins), so
  // the trapezoid is 99 * 0.01 + 0.01 * (1 + 0) / 2 = 0.995.
  CHECK(reference_ap({1.0}, {1.0}) == doctest::Approx(0.995).epsilon(1e-12));
  // Two detections, one gt: TP then FP. recall [1, 1], precision [1, 0.5] -> the same 0.995.
  CHECK(reference_ap({1.0, 1.0}, {1.0, 0.5}) == doctest::Approx(0.995).epsilon(1e-12));
  // FP then TP: recall [0, 1], precision [0, 0.5]: envelope 0.5 on [0, 1), 0 at 1:
  // 99 * 0.01 * 0.5 + 0.01 * (0.5 + 0) / 2 = 0.4975.
  CHECK(reference_ap({0.0, 1.0}, {0.0, 0.5}) == doctest::Approx(0.4975).epsilon(1e-12));
  // Half the objects found with precision 1: 1 on [0, 0.5), 0 from recall 0.5 on (the new sentinel;
  // older references interpolated linearly to (1, 0) and gave 0.75): 49 * 0.01 + 0.005 = 0.495.
  CHECK(reference_ap({0.5}, {1.0}) == doctest::Approx(0.495).epsilon(1e-12));
  // Recall [0.25, 0.5], precision [1, 0.5]: 1 on [0, 0.25], 0.5 on (0.25, 0.5), 0 after:
  // 25 * 0.01 + 0.01 * (1 + 0.5) / 2 + 24 * 0.01 * 0.5 + 0.01 * (0.5 + 0) / 2 = 0.435.
  CHECK(reference_ap({0.25, 0.5}, {1.0, 0.5}) == doctest::Approx(0.435).epsilon(1e-12));
}

TEST_CASE("match_predictions: by confidence order, each taking its best unclaimed ground truth") {
  // gt [0,0,10,10]; p0 = [0,0,10,6] (IoU 60/100 = 0.6f), p1 = [0,0,10,9] (IoU 0.9f), p0 first.
  // t <= 0.6: p0 claims the gt, p1 finds it claimed. t in 0.65..0.9: p0 falls short and leaves
  // it to p1. t = 0.95: none.
  const auto correct =
      reference_match({{0, 0, 10, 6}, {0, 0, 10, 9}}, {0, 0}, {{0, 0, 10, 10}}, {0});
  REQUIRE(correct.size() == 2);
  for (std::size_t t = 0; t < 10; ++t) {
    CHECK(correct[0][t] == (t <= 2));
    CHECK(correct[1][t] == (t >= 3 && t <= 8));
  }
  // 8.4.190 falls back to the next unclaimed ground truth (older references did not): gt0
  // [0,0,10,10], gt1 [0,2,10,12]. p0 = gt0 claims gt0 (IoU 1). p1 [0,.5,10,10.5] overlaps gt0 by
  // 95/105 = 0.905 and gt1 by 85/115 = 0.739: gt0 is claimed, so it takes gt1 for t <= 0.7.
  const auto fallback = reference_match({{0, 0, 10, 10}, {0, 0.5f, 10, 10.5f}}, {0, 0},
                                        {{0, 0, 10, 10}, {0, 2, 10, 12}}, {0, 0});
  CHECK(fallback[0][9]);
  CHECK(fallback[1][4]);
  CHECK_FALSE(fallback[1][5]);
  // With one ground truth only, the second prediction finds nothing left.
  const auto single =
      reference_match({{0, 0, 10, 10}, {0, 0.5f, 10, 10.5f}}, {0, 0}, {{0, 0, 10, 10}}, {0});
  CHECK(single[0][0]);
  CHECK_FALSE(single[1][0]);
  // Classes must agree.
  const auto other = reference_match({{0, 0, 10, 10}}, {1}, {{0, 0, 10, 10}}, {0});
  CHECK_FALSE(other[0][0]);
  // One prediction between two gts takes the one with the higher IoU: gt1 (IoU 0.8).
  const auto two = reference_match({{0, 0, 10, 10}}, {0}, {{0, 0, 10, 6}, {0, 0, 10, 8}}, {0, 0});
  CHECK(two[0][6]);  // 0.8 >= 0.8
  CHECK_FALSE(two[0][7]);
}

TEST_CASE("two detections, one gt: AP 0.995 either way round only when the TP scores higher") {
  ReferenceMetric metric(2);
  // TP (0.9, exact box: IoU 1) and FP (0.8, far away) on one gt of class 0.
  metric.add_image({{0, 0, 10, 10}, {50, 50, 60, 60}}, {0.9f, 0.8f}, {0, 0}, {{0, 0, 10, 10}}, {0});
  auto r = metric.compute();
  CHECK(r.map50 == doctest::Approx(0.995).epsilon(1e-12));
  CHECK(r.map50_95 == doctest::Approx(0.995).epsilon(1e-12));
  CHECK(r.fitness == r.map50_95);
  REQUIRE(r.per_class.size() == 1);  // class 1 has no ground truth: not listed, not averaged
  CHECK(r.per_class[0].num_pred == 2);

  ReferenceMetric swapped(2);
  swapped.add_image({{0, 0, 10, 10}, {50, 50, 60, 60}}, {0.8f, 0.9f}, {0, 0}, {{0, 0, 10, 10}},
                    {0});
  CHECK(swapped.compute().map50 == doctest::Approx(0.4975).epsilon(1e-12));
}

TEST_CASE("P and R are taken at the argmax of the smoothed mean F1") {
  // One class: TP at 0.9, FP at 0.3. On x = linspace(0, 1, 1000): recall is 0 above 0.9 and 1
  // below; precision is 1 above 0.9, linear to 0.5 at 0.3, 0.5 below. F1 rises up to x = 0.9 and
  // is 0 above, so the 101-wide box filter peaks where its right edge is the last x <= 0.9:
  // x[899] = 899/999, centre index 849. There p = 1 - 0.5 * (0.9f - x[849]) / (0.9f - 0.3f), r = 1.
  ReferenceMetric metric(1);
  metric.add_image({{0, 0, 10, 10}, {50, 50, 60, 60}}, {0.9f, 0.3f}, {0, 0}, {{0, 0, 10, 10}}, {0});
  const auto r = metric.compute();
  const double x = 849.0 / 999.0;
  const double hi = static_cast<double>(0.9f), lo = static_cast<double>(0.3f);
  CHECK(r.precision == doctest::Approx(1.0 - 0.5 * (hi - x) / (hi - lo)).epsilon(1e-12));
  CHECK(r.recall == 1.0);
  CHECK(r.per_class[0].f1 == doctest::Approx(2 * r.precision / (r.precision + 1)).epsilon(1e-12));
}

TEST_CASE("two classes, each found once: P = R = 1, mAP 0.995, a missed class halves it") {
  ReferenceMetric metric(3);
  metric.add_image({{0, 0, 10, 10}}, {0.5f}, {0}, {{0, 0, 10, 10}}, {0});
  metric.add_image({{0, 0, 20, 20}}, {0.7f}, {2}, {{0, 0, 20, 20}}, {2});
  auto r = metric.compute();
  CHECK(r.precision == 1.0);
  CHECK(r.recall == 1.0);
  CHECK(r.map50 == doctest::Approx(0.995).epsilon(1e-12));
  CHECK(r.num_images == 2);
  CHECK(r.num_gt == 2);
  // Class 1 appears in the ground truth of a third image, never predicted: AP 0, P = R = 0.
  metric.add_image({}, {}, {}, {{5, 5, 9, 9}}, {1});
  r = metric.compute();
  REQUIRE(r.per_class.size() == 3);
  CHECK(r.per_class[1].ap50 == 0.0);
  CHECK(r.map50 == doctest::Approx(0.995 * 2 / 3).epsilon(1e-12));
}

TEST_CASE("max_det keeps the highest scores, merge adds images, bad input throws") {
  ReferenceMetric metric(1, /*max_det=*/2);
  // The TP has the lowest score of three: dropped.
  metric.add_image({{50, 50, 60, 60}, {70, 70, 80, 80}, {0, 0, 10, 10}}, {0.9f, 0.8f, 0.1f},
                   {0, 0, 0}, {{0, 0, 10, 10}}, {0});
  auto r = metric.compute();
  CHECK(r.num_pred == 2);
  CHECK(r.map50 == 0.0);
  ReferenceMetric other(1, 2);
  other.add_image({{0, 0, 10, 10}}, {0.95f}, {0}, {{0, 0, 10, 10}}, {0});
  metric.merge(other);
  r = metric.compute();
  CHECK(r.num_images == 2);
  CHECK(r.num_gt == 2);
  // TP (0.95), FP, FP; recall [.5, .5, .5], precision [1, .5, 1/3]: mrec [0, .5, .5, .5, .5, 1],
  // envelope [1, 1, .5, 1/3, 0, 0] (8.4.190's sentinels). interp: 1 below 0.5, 0 from 0.5 on (the
  // last equal xp). Trapezoid: 49 * 0.01 + 0.01 * (1 + 0) / 2 = 0.495 (older references: 0.58).
  CHECK(r.map50 == doctest::Approx(0.495).epsilon(1e-12));
  CHECK_THROWS_AS(metric.add_image({{0, 0, 1, 1}}, {}, {0}, {}, {}), std::invalid_argument);
  CHECK_THROWS_AS(metric.add_image({}, {}, {}, {{0, 0, 1, 1}}, {3}), std::invalid_argument);
  CHECK_THROWS_AS(ReferenceMetric(0), std::invalid_argument);
}

TEST_CASE("taken images added back in order give the same metric, bit for bit") {
  // Three images with near-equal scores across images (the stable sort keeps the order added).
  const auto add = [](ReferenceMetric& m, int image) {
    const float s = 0.5f;
    if (image == 0)
      m.add_image({{0, 0, 10, 10}, {20, 20, 30, 30}}, {s, 0.7f}, {0, 1}, {{0, 0, 10, 10}}, {0});
    if (image == 1) m.add_image({{0, 0, 9, 10}}, {s}, {0}, {{0, 0, 10, 10}, {5, 5, 9, 9}}, {0, 1});
    if (image == 2)
      m.add_image({{40, 40, 50, 50}, {5, 5, 9, 9}}, {s, s}, {1, 1}, {{5, 5, 9, 9}}, {1});
  };
  ReferenceMetric whole(2);
  for (int i = 0; i < 3; ++i) add(whole, i);
  // Image by image into bytes (as the ranks send them), then back in the original order.
  ReferenceMetric sender(2);
  std::vector<std::string> parts;
  for (int i = 0; i < 3; ++i) {
    add(sender, i);
    trainer::core::ByteWriter out;
    sender.take_images(out);
    parts.push_back(out.take());
  }
  CHECK(sender.compute().num_images == 0);  // taken: nothing left
  ReferenceMetric merged(2);
  for (const auto& bytes : parts) {
    trainer::core::ByteReader in(bytes);
    merged.append_taken(in);
    CHECK(in.done());
  }
  const auto a = merged.compute(), b = whole.compute();
  CHECK(a.num_images == 3);
  CHECK(a.num_pred == b.num_pred);
  CHECK(a.num_gt == b.num_gt);
  CHECK(a.map50 == b.map50);
  CHECK(a.map50_95 == b.map50_95);
  CHECK(a.precision == b.precision);
  CHECK(a.recall == b.recall);
  CHECK(a.map50 > 0.0);
  // Bytes of another class count, or cut short, are refused.
  ReferenceMetric three(3);
  trainer::core::ByteReader wrong(parts[0]);
  CHECK_THROWS_AS(three.append_taken(wrong), std::runtime_error);
  const std::string cut = parts[0].substr(0, parts[0].size() - 3);
  trainer::core::ByteReader shortened(cut);
  CHECK_THROWS_AS(merged.append_taken(shortened), std::runtime_error);
}

TEST_CASE("no ground truth at all: zeros") {
  ReferenceMetric metric(2);
  metric.add_image({{0, 0, 1, 1}}, {0.5f}, {1}, {}, {});
  const auto r = metric.compute();
  CHECK(r.map50_95 == 0.0);
  CHECK(r.per_class.empty());
  CHECK(r.num_pred == 1);
}
