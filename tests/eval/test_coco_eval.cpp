// The whole COCO evaluator (eval/coco_eval.h) on tiny hand-computed cases.
#include <doctest/doctest.h>

#include <fmt/format.h>

#include <string>
#include <vector>

#include "data/coco_json.h"
#include "eval/coco_eval.h"

using namespace trainer;
using eval::Detection;

namespace {

// One 1000x1000 image per id in `images`; categories 1, 2, 3; annotations given as
// "{image_id, category_id, x, y, w, h, iscrowd}".
struct Ann {
  int64_t image_id, category_id;
  double x, y, w, h;
  int crowd = 0;
};

data::CocoFile make_gt(const std::vector<int64_t>& images, const std::vector<Ann>& anns) {
  std::string text = "{\"images\": [";
  for (size_t i = 0; i < images.size(); ++i) {
    text += fmt::format(
        "{}{{\"id\": {}, \"file_name\": \"{}.jpg\", \"width\": 1000, \"height\": 1000}}",
        i ? "," : "", images[i], images[i]);
  }
  text +=
      "], \"categories\": [{\"id\": 1, \"name\": \"a\"}, {\"id\": 2, \"name\": \"b\"}, "
      "{\"id\": 3, \"name\": \"c\"}], \"annotations\": [";
  for (size_t i = 0; i < anns.size(); ++i) {
    const Ann& a = anns[i];
    text += fmt::format(
        "{}{{\"id\": {}, \"image_id\": {}, \"category_id\": {}, \"bbox\": [{}, {}, {}, {}], "
        "\"area\": {}, \"iscrowd\": {}}}",
        i ? "," : "", i + 1, a.image_id, a.category_id, a.x, a.y, a.w, a.h, a.w * a.h, a.crowd);
  }
  text += "]}";
  return data::parse_coco_json(text, "gt.json");
}

// pycocotools' precision of a perfect prefix: 1 / (1 + np.spacing(1)), one ulp below 1.
constexpr double kOne = 1.0 / (1.0 + 2.220446049250313e-16);

Detection det(int64_t image, int64_t category, double x, double y, double w, double h,
              double score) {
  return Detection{image, category, {x, y, w, h}, score};
}

}  // namespace

TEST_CASE("one perfect detection: every defined stat is 1, undefined ones -1") {
  const auto gt = make_gt({1}, {{1, 1, 0, 0, 100, 100}});  // area 10000: large
  const auto stats = eval::evaluate_coco(gt, {det(1, 1, 0, 0, 100, 100, 0.5)});
  const std::array<double, 12> expected = {1, 1, 1, -1, -1, 1, 1, 1, 1, -1, -1, 1};
  // (AP values are means of 1 / (1 + eps): within an ulp or two of 1.)
  for (size_t i = 0; i < 12; ++i)
    CHECK(stats.stats[i] == doctest::Approx(expected[i]).epsilon(1e-15));
}

TEST_CASE("TP, FP, TP: AP 253/303, maxDets=1 keeps only the first, the FP is outside 'large'") {
  // gt0 [0,0,100,100], gt1 [200,0,100,100] (both large); d0 = gt0 (0.9), d1 far away (0.8),
  // d2 = gt1 (0.7); the same at every IoU threshold.
  // recall [.5, .5, 1], precision [1, .5, 2/3] -> envelope [1, 2/3, 2/3]; the 51 recall points
  // 0..0.50 take 1, the 50 points above take 2/3: AP = (51 + 50 * 2/3) / 101 = 253/303.
  // maxDets=1: only d0 -> recall [.5]: AP(maxDets 1) = 51/101, AR1 = 0.5.
  // 'large': d1 is 50x50 (area 2500), unmatched and outside the range -> ignored: APl = 1.
  const auto gt = make_gt({7}, {{7, 1, 0, 0, 100, 100}, {7, 1, 200, 0, 100, 100}});
  const std::vector<Detection> dets = {det(7, 1, 0, 0, 100, 100, 0.9),
                                       det(7, 1, 400, 400, 50, 50, 0.8),
                                       det(7, 1, 200, 0, 100, 100, 0.7)};
  const auto stats = eval::evaluate_coco(gt, dets);
  CHECK(stats.stats[0] == doctest::Approx(253.0 / 303.0).epsilon(1e-14));
  CHECK(stats.stats[1] == doctest::Approx(253.0 / 303.0).epsilon(1e-14));
  CHECK(stats.stats[2] == doctest::Approx(253.0 / 303.0).epsilon(1e-14));
  CHECK(stats.stats[3] == -1);
  CHECK(stats.stats[4] == -1);
  CHECK(stats.stats[5] == 1.0);
  CHECK(stats.stats[6] == 0.5);
  CHECK(stats.stats[7] == 1.0);
  CHECK(stats.stats[8] == 1.0);
  CHECK(stats.stats[11] == 1.0);

  const eval::CocoParams params;
  const auto acc = eval::accumulate_coco(gt, dets, params);
  CHECK(acc.precision[acc.precision_index(0, 50, 0, 0, 2)] == kOne);
  CHECK(acc.precision[acc.precision_index(0, 51, 0, 0, 2)] == doctest::Approx(2.0 / 3.0));
  CHECK(acc.precision[acc.precision_index(0, 51, 0, 0, 0)] == 0.0);  // maxDets 1: beyond recall
  CHECK(acc.precision[acc.precision_index(0, 0, 1, 0, 2)] == -1.0);  // category 2 has no gt
}

TEST_CASE("categories: one found, one missed entirely, one without ground truth") {
  // Category 1: AP 1. Category 2: ground truth but no detections: AP 0 (counted). Category 3: no
  // ground truth (a detection of it is a false positive nowhere counted): excluded. Mean 0.5.
  const auto gt = make_gt({1, 2}, {{1, 1, 0, 0, 100, 100}, {2, 2, 0, 0, 100, 100}});
  const std::vector<Detection> dets = {det(1, 1, 0, 0, 100, 100, 0.9),
                                       det(2, 3, 0, 0, 100, 100, 0.9)};
  const auto stats = eval::evaluate_coco(gt, dets);
  CHECK(stats.stats[0] == doctest::Approx(0.5).epsilon(1e-15));
  CHECK(stats.stats[8] == 0.5);
  REQUIRE(stats.per_category.size() == 3);
  CHECK(stats.per_category[0].ap == doctest::Approx(1.0).epsilon(1e-15));
  CHECK(stats.per_category[0].num_gt == 1);
  CHECK(stats.per_category[1].ap == 0.0);
  CHECK(stats.per_category[2].ap == -1.0);
  CHECK(stats.per_category[2].name == "c");
}

TEST_CASE("no detections at all, and an image with only false positives") {
  const auto gt = make_gt({1, 2}, {{1, 1, 0, 0, 10, 10}});  // small
  const auto none = eval::evaluate_coco(gt, {});
  CHECK(none.stats[0] == 0.0);
  CHECK(none.stats[3] == 0.0);
  CHECK(none.stats[4] == -1.0);
  // A false positive on the image without ground truth, scored above the true positive:
  // recall [0, 1], precision [0, 1/2]: envelope [1/2, 1/2] -> AP 0.5 at every threshold.
  const auto fp =
      eval::evaluate_coco(gt, {det(2, 1, 0, 0, 10, 10, 0.9), det(1, 1, 0, 0, 10, 10, 0.8)});
  CHECK(fp.stats[0] == 0.5);
  CHECK(fp.stats[3] == 0.5);
  CHECK(fp.stats[6] == 1.0);  // AR1: the best detection of each image, and image 1 has its TP
}

TEST_CASE("crowd regions: detections on them neither help nor hurt") {
  const auto gt = make_gt({1}, {{1, 1, 0, 0, 100, 100}, {1, 1, 300, 300, 400, 400, 1}});
  const auto alone = eval::evaluate_coco(gt, {det(1, 1, 0, 0, 100, 100, 0.5)});
  const auto with_crowd =
      eval::evaluate_coco(gt, {det(1, 1, 310, 310, 50, 50, 0.9), det(1, 1, 0, 0, 100, 100, 0.5),
                               det(1, 1, 400, 400, 30, 30, 0.95)});
  for (size_t i = 0; i < 12; ++i) {
    if (i != 6) CHECK(alone.stats[i] == with_crowd.stats[i]);
  }
  CHECK(with_crowd.stats[0] == doctest::Approx(1.0).epsilon(1e-15));
  // But they take detection slots: with maxDets=1 the 0.95 detection on the crowd is all that is
  // kept, so AR1 drops from 1 to 0.
  CHECK(alone.stats[6] == 1.0);
  CHECK(with_crowd.stats[6] == 0.0);
}

TEST_CASE("more than 100 detections in an image: only the 100 best count") {
  // 100 false positives scored 0.9 and the true positive at 0.5: it is cut.
  const auto gt = make_gt({1}, {{1, 1, 0, 0, 100, 100}});
  std::vector<Detection> dets;
  for (int i = 0; i < 100; ++i) dets.push_back(det(1, 1, 500, 500 + i, 10, 10, 0.9));
  dets.push_back(det(1, 1, 0, 0, 100, 100, 0.5));
  CHECK(eval::evaluate_coco(gt, dets).stats[8] == 0.0);
  dets.pop_back();
  dets.insert(dets.begin(), det(1, 1, 0, 0, 100, 100, 0.9));  // ties: the earlier entry wins
  const auto stats = eval::evaluate_coco(gt, dets);
  CHECK(stats.stats[8] == 1.0);
  CHECK(stats.stats[6] == 1.0);  // maxDets=1 keeps the first of the tied 0.9s: the TP
}

TEST_CASE("the result does not depend on the number of threads") {
  std::vector<Ann> anns;
  std::vector<Detection> dets;
  std::vector<int64_t> images;
  for (int64_t im = 1; im <= 20; ++im) {
    images.push_back(im);
    for (int j = 0; j < 6; ++j) {
      const double x = 37.0 * j + im, y = 11.0 * j, w = 20.0 + 13 * j, h = 15.0 + 7 * j;
      anns.push_back({im, 1 + (j + im) % 3, x, y, w, h, j == 5 ? 1 : 0});
      dets.push_back(
          det(im, 1 + (j + im) % 3, x + (j % 3), y - 1, w, h + (im % 4), 0.1 * ((j * im) % 9)));
      dets.push_back(det(im, 1 + j % 3, x, y, w * 0.7, h, 0.05 * ((j + im) % 7)));
    }
  }
  const auto gt = make_gt(images, anns);
  eval::CocoEvalOptions one, three;
  one.threads = 1;
  three.threads = 3;
  const auto a = eval::evaluate_coco(gt, dets, one);
  const auto b = eval::evaluate_coco(gt, dets, three);
  CHECK(a.stats == b.stats);
  CHECK(a.stats[0] > 0.0);
  CHECK(a.stats[0] < 1.0);
}

TEST_CASE("unknown ids are rejected naming the detection") {
  const auto gt = make_gt({1}, {{1, 1, 0, 0, 10, 10}});
  CHECK_THROWS_WITH(
      eval::evaluate_coco(gt, {det(1, 1, 0, 0, 1, 1, 0.5), det(9, 1, 0, 0, 1, 1, 0.5)}),
      doctest::Contains("detection #1 (image_id 9): unknown image_id 9"));
  CHECK_THROWS_WITH(eval::evaluate_coco(gt, {det(1, 4, 0, 0, 1, 1, 0.5)}),
                    doctest::Contains("unknown category_id 4"));
}

TEST_CASE("summary lines are formatted like pycocotools") {
  eval::CocoStats stats;
  stats.stats = {0.5, 0.25, -1, 0, 0, 0, 0, 0, 0, 0, 0, 0.123456};
  const std::string text = eval::format_coco_summary(stats);
  CHECK(text.find(
            " Average Precision  (AP) @[ IoU=0.50:0.95 | area=   all | maxDets=100 ] = 0.500\n") ==
        0);
  CHECK(text.find(
            " Average Precision  (AP) @[ IoU=0.50      | area=   all | maxDets=100 ] = 0.250\n") !=
        std::string::npos);
  CHECK(text.find(
            " Average Precision  (AP) @[ IoU=0.75      | area=   all | maxDets=100 ] = -1.000\n") !=
        std::string::npos);
  CHECK(text.find(
            " Average Recall     (AR) @[ IoU=0.50:0.95 | area= large | maxDets=100 ] = 0.123\n") !=
        std::string::npos);
  CHECK(text.find(
            " Average Recall     (AR) @[ IoU=0.50:0.95 | area=   all | maxDets=  1 ] = 0.000\n") !=
        std::string::npos);
}
