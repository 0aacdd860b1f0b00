// Keypoints through every augmentation, against hand-computed points: they move exactly like the
// boxes, leave the image as invisible (v = 0) clamped points, trade places by flip_idx after a
// flip, follow their box when boxes are dropped, and reach the batch normalised.
#include <doctest/doctest.h>

#include "core/error.h"
#include "data/augment/affine.h"
#include "data/augment/flip.h"
#include "data/augment/letterbox.h"
#include "data/augment/mixup.h"
#include "data/augment/mosaic.h"
#include "data/batch_plot.h"
#include "data/dataset.h"
#include "data/dataset_yaml.h"
#include "data/loader.h"
#include "data_test_util.h"

using namespace trainer::data::augment;
using doctest::Approx;
using trainer::test::solid_sample;

namespace {

// One box with two keypoints.
Sample pose_sample(int h, int w, PixelBox box, std::vector<float> points) {
  Sample s = solid_sample(h, w, 9);
  s.classes = {0};
  s.boxes = {box};
  s.keypoints_per_box = 2;
  s.keypoints = std::move(points);
  return s;
}

void check_points(const std::vector<float>& got, const std::vector<float>& want) {
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    INFO("value " << i);
    CHECK(got[i] == Approx(want[i]).epsilon(1e-6));
  }
}

}  // namespace

TEST_CASE("keypoints: flips mirror them, then flip_idx swaps left and right") {
  Sample s = pose_sample(50, 100, {5, 10, 40, 45}, {10, 20, 2, 30, 40, 1});
  flip_horizontal(s, {1, 0});
  // x -> 100 - x: (90, 20, 2), (70, 40, 1); then point 0 takes point 1's values and vice versa.
  check_points(s.keypoints, {70, 40, 1, 90, 20, 2});
  flip_vertical(s, {1, 0});
  // y -> 50 - y: (70, 10, 1), (90, 30, 2); swapped again (8.4.190 permutes after either flip).
  check_points(s.keypoints, {90, 30, 2, 70, 10, 1});
  flip_horizontal(s);  // no flip_idx: mirrored only
  check_points(s.keypoints, {10, 30, 2, 30, 10, 1});
}

TEST_CASE("keypoints: mosaic shifts them with their tile and hides those outside the canvas") {
  // The mosaic test's layout: s = 320, centre (200, 180); tile 0 (a) is shifted by (-200, -120),
  // tile 3 (d) by (+200, +180).
  Sample a = pose_sample(300, 400, {250, 150, 350, 250}, {260, 160, 2, 100, 100, 2});
  Sample b = solid_sample(300, 400, 2), c = solid_sample(300, 400, 3);
  Sample d = pose_sample(300, 400, {0, 0, 100, 100}, {50, 60, 1, 399, 299, 2});
  b.keypoints_per_box = c.keypoints_per_box = 2;
  const Sample m = mosaic4({&a, &b, &c, &d}, 320, 200, 180);
  REQUIRE(m.boxes.size() == 2);
  REQUIRE(m.keypoints_per_box == 2);
  // a: (60, 40, 2) and (100 - 200, 100 - 120) = (-100, -20) -> outside: v = 0, clamped to (0, 0).
  // d: (250, 240, 1) and (599, 479, 2) inside the 640 x 640 canvas.
  check_points(m.keypoints, {60, 40, 2, 0, 0, 0, 250, 240, 1, 599, 479, 2});
}

TEST_CASE("keypoints: the warp moves them, hides those it pushes out, drops them with their box") {
  Sample s = pose_sample(100, 100, {10, 10, 30, 30}, {15, 20, 2, 95, 50, 1});
  s.classes = {1, 2};
  s.boxes.push_back({90, 90, 99, 99});  // dropped by the candidate filter
  s.keypoints.insert(s.keypoints.end(), {91, 91, 2, 92, 92, 2});
  AffineDraw draw{cv::Matx33d(1, 0, 20, 0, 1, -5, 0, 0, 1), 1.0};
  const Sample out = warp_sample(s, draw, 100, 100, false);
  REQUIRE(out.boxes.size() == 1);
  CHECK(out.classes[0] == 1);
  // (15, 20) + (20, -5) = (35, 15); (95, 50) -> (115, 45): x > 100, so v = 0 and x -> 100.
  check_points(out.keypoints, {35, 15, 2, 100, 45, 0});
  // A perspective matrix divides by z: (15, 20) with z = 0.001 * 15 + 1 = 1.015.
  AffineDraw persp{cv::Matx33d(1, 0, 0, 0, 1, 0, 0.001, 0, 1), 1.0};
  const auto p = transform_point(15, 20, persp.matrix);
  CHECK(p[0] == Approx(15 / 1.015));
  CHECK(p[1] == Approx(20 / 1.015));
}

TEST_CASE("keypoints: letterbox scales and pads them like the boxes") {
  Sample s = pose_sample(425, 640, {20, 12, 220, 212}, {100, 50, 2, 0, 0, 0});
  const auto g = letterbox_geometry(425, 640, 320, 320, true);  // ratio 0.5, top 54, left 0
  const Sample out = letterbox(s, g);
  check_points(out.keypoints, {50, 79, 2, 0, 54, 0});
}

TEST_CASE("keypoints: mixup concatenates them, keep_boxes keeps them with their boxes") {
  Sample a = pose_sample(4, 4, {0, 0, 1, 1}, {1, 1, 2, 2, 2, 2});
  Sample b = pose_sample(4, 4, {1, 1, 2, 2}, {3, 3, 1, 0, 0, 0});
  Sample m = mixup(a, b, 0.5);
  check_points(m.keypoints, {1, 1, 2, 2, 2, 2, 3, 3, 1, 0, 0, 0});
  keep_boxes(m, {false, true});
  check_points(m.keypoints, {3, 3, 1, 0, 0, 0});
  Sample three_points = b;
  three_points.keypoints_per_box = 3;
  three_points.keypoints.insert(three_points.keypoints.end(), {1, 1, 1});
  CHECK_THROWS_AS(mixup(a, three_points, 0.5), std::invalid_argument);
}

TEST_CASE("keypoints: the loader's batch holds them normalised in the labels' row order") {
  trainer::test::TempDir dir;
  trainer::test::write_image(dir / "images/val/a.jpg", trainer::test::pattern_image(50, 100));
  // Two people; kpt_shape [2, 3]. Letterboxed to 64: ratio 0.64, 100 x 50 -> 64 x 32, top 16.
  trainer::test::write_text(dir / "labels/val/a.txt",
                            "0 0.5 0.5 0.2 0.4 0.1 0.2 2 0.3 0.4 1\n"
                            "0 0.25 0.5 0.1 0.2 0.5 0.5 0 0.0 1.0 2\n");
  trainer::test::write_text(dir / "data.yaml",
                            "path: .\ntrain: images/val\nval: images/val\nnames: [person]\n"
                            "kpt_shape: [2, 3]\nflip_idx: [1, 0]\n");
  const auto spec = trainer::data::load_dataset_yaml(dir / "data.yaml");
  trainer::data::LoadOptions load;
  load.use_cache = false;
  load.log = false;
  const auto index = trainer::data::load_split(spec, trainer::data::Split::kVal, load);
  CHECK(index.keypoints_per_box == 2);
  CHECK(index.flip_idx == std::vector<int>{1, 0});
  trainer::data::LoaderOptions options;
  options.imgsz = 64;
  options.batch = 1;
  options.workers = 0;
  options.augment = false;
  options.show_progress = false;
  trainer::data::Loader loader(index, options);
  loader.start_epoch(0, false);
  const auto batch = loader.next();
  REQUIRE(batch);
  REQUIRE(batch->keypoints.sizes() == torch::IntArrayRef({2, 2, 3}));
  // x: 0.1 * 64 / 64 = 0.1; y: (0.2 * 32 + 16) / 64 = 0.35; (0.3, 0.4 * 32 + 16 = 28.8 -> 0.45).
  const auto k = batch->keypoints.contiguous();
  const float* v = k.data_ptr<float>();
  check_points(std::vector<float>(v, v + 12),
               {0.1f, 0.35f, 2, 0.3f, 0.45f, 1, 0.5f, 0.5f, 0, 0.0f, 0.75f, 2});
}

TEST_CASE(
    "keypoints: a pose dataset without flip_idx turns flips off, a bad flip_idx is an error") {
  trainer::test::TempDir dir;
  trainer::test::write_image(dir / "images/a.jpg", trainer::test::pattern_image(50, 100));
  trainer::test::write_text(dir / "labels/a.txt", "0 0.5 0.5 0.2 0.4 0.1 0.2 2 0.3 0.4 1\n");
  trainer::test::write_text(dir / "data.yaml",
                            "path: .\ntrain: images\nnames: [person]\nkpt_shape: [2, 3]\n");
  trainer::data::LoadOptions load;
  load.use_cache = false;
  load.log = false;
  const auto index = trainer::data::load_split(trainer::data::load_dataset_yaml(dir / "data.yaml"),
                                               trainer::data::Split::kTrain, load);
  trainer::data::LoaderOptions options;
  options.imgsz = 64;
  options.batch = 1;
  options.workers = 0;
  options.show_progress = false;
  trainer::test::LogCapture log;
  trainer::data::Loader loader(index, options);
  CHECK(log.count("no 'flip_idx': fliplr and flipud set to 0") == 1);
  for (const char* bad : {"[0]", "[0, 0]", "[1, 2]"}) {
    trainer::test::write_text(
        dir / "bad.yaml",
        std::string("path: .\ntrain: images\nnames: [person]\nkpt_shape: [2, 3]\nflip_idx: ") +
            bad + "\n");
    INFO(bad);
    CHECK_THROWS_WITH_AS(trainer::data::load_dataset_yaml(dir / "bad.yaml"),
                         doctest::Contains("'flip_idx' must be a permutation of 0..1"),
                         trainer::core::ConfigError);
  }
}

TEST_CASE("keypoints: the batch plot draws visible points only") {
  trainer::data::Batch batch;
  batch.images = torch::full({1, 3, 64, 64}, 128, torch::kUInt8);
  batch.labels = torch::tensor({{0.f, 0.f, 0.5f, 0.25f, 0.25f, 0.25f}});  // x 24..40, y 8..24
  // Point 0 visible at (16, 48), point 1 invisible at (48, 48).
  batch.keypoints = torch::tensor({0.25f, 0.75f, 2.f, 0.75f, 0.75f, 0.f}).reshape({1, 2, 3});
  const cv::Mat canvas = trainer::data::plot_batch(batch, {"person"});
  REQUIRE(canvas.size() == cv::Size(64, 64));
  CHECK(canvas.at<cv::Vec3b>(48, 16) != cv::Vec3b(128, 128, 128));
  CHECK(canvas.at<cv::Vec3b>(48, 48) == cv::Vec3b(128, 128, 128));
  batch.keypoints = torch::zeros({1, 2, 3});  // nothing visible: no dot
  CHECK(trainer::data::plot_batch(batch, {"person"}).at<cv::Vec3b>(48, 16) ==
        cv::Vec3b(128, 128, 128));
}
