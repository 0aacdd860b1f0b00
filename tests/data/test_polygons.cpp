// Polygons through the data pipeline (OBB): DOTA rows kept as polygons, the label cache, the
// reference's visible box and preserve_obb clip (hand-computed), each transform moving polygons
// like pixels, and the loader's rotated boxes (canonical, equal to the labels' without
// augmentation, and in step with the box rows under mosaic and perspective).
#include <doctest/doctest.h>
#include <torch/torch.h>

#include <algorithm>
#include <cmath>

#include "core/error.h"
#include "data/augment/affine.h"
#include "data/augment/flip.h"
#include "data/augment/letterbox.h"
#include "data/augment/mosaic.h"
#include "data/augment/polygon.h"
#include "data/batch_plot.h"
#include "data/dataset.h"
#include "data/loader.h"
#include "data/yolo_labels.h"
#include "data_test_util.h"

namespace fs = std::filesystem;
using namespace trainer::data;
using namespace trainer::data::augment;
using doctest::Approx;
using trainer::test::TempDir;

namespace {

// The points of `polygon` as a sorted list, to compare polygons whatever their starting vertex.
std::vector<std::pair<float, float>> sorted_points(const Polygon& polygon) {
  std::vector<std::pair<float, float>> out;
  for (const auto& p : polygon)
    out.emplace_back(std::round(p.x * 1000) / 1000, std::round(p.y * 1000) / 1000);
  std::sort(out.begin(), out.end());
  return out;
}

void check_box(const PixelBox& got, const PixelBox& want) {
  for (int k = 0; k < 4; ++k) CHECK(got[k] == Approx(want[k]).epsilon(1e-5));
}

Sample obb_sample(int h, int w, const Polygon& polygon) {
  Sample s = trainer::test::solid_sample(h, w, 90);
  s.oriented = true;
  s.classes = {0};
  s.segments = {polygon};
  s.boxes = {visible_box(polygon, static_cast<float>(w), static_cast<float>(h))};
  return s;
}

}  // namespace

TEST_CASE("yolo labels with polygons: DOTA rows kept, box rows refused with file:line") {
  const auto parsed =
      parse_yolo_labels("1 0.1 0.2 0.5 0.2 0.5 0.4 0.1 0.4\n", "a.txt", 2, {}, true);
  REQUIRE_FALSE(parsed.error);
  REQUIRE(parsed.segments.size() == 1);
  CHECK(parsed.segments[0] == std::vector<float>{0.1f, 0.2f, 0.5f, 0.2f, 0.5f, 0.4f, 0.1f, 0.4f});
  CHECK(parsed.boxes[0][0] == Approx(0.3f));
  CHECK(parsed.boxes[0][2] == Approx(0.4f));
  const auto box_row = parse_yolo_labels("0 0.1 0.1 0.1 0.1 0.1 0.1 0.1 0.1\n1 0.5 0.5 0.2 0.2\n",
                                         "b.txt", 2, {}, true);
  REQUIRE(box_row.error);
  CHECK(*box_row.error ==
        "b.txt:2: expected a polygon (class x1 y1 x2 y2 x3 y3 ..., at least 3 "
        "points), got 5 values");
  CHECK(box_row.segments.empty());
  // Without polygons the same row is its enclosing box and nothing else is kept.
  CHECK(parse_yolo_labels("1 0.1 0.2 0.5 0.2 0.5 0.4 0.1 0.4\n", "a.txt", 2).segments.empty());
  // A repeated row is a duplicate; the same box with another polygon is not.
  const auto dup = parse_yolo_labels(
      "0 0.1 0.1 0.3 0.1 0.3 0.3 0.1 0.3\n0 0.1 0.1 0.3 0.1 0.3 0.3 0.1 0.3\n"
      "0 0.1 0.1 0.3 0.1 0.3 0.3 0.2 0.3 0.1 0.3\n",
      "c.txt", 1, {}, true);
  CHECK(dup.duplicates == 1);
  CHECK(dup.segments.size() == 2);
  CHECK(parse_yolo_labels("0 0.1 0.1 nan 0.1 0.3 0.3\n", "d.txt", 1, {}, true).error);
}

TEST_CASE("dataset with polygons: segments per box, cached, and a separate cache key") {
  TempDir dir;
  trainer::test::write_image(dir / "images/train/a.jpg", trainer::test::pattern_image(40, 60));
  trainer::test::write_text(dir / "labels/train/a.txt",
                            "0 0.1 0.2 0.5 0.2 0.5 0.4 0.1 0.4\n1 0.6 0.6 0.9 0.6 0.9 0.9\n");
  DatasetSpec spec;
  spec.yaml_file = dir / "data.yaml";
  spec.root = dir.path();
  spec.train = {dir / "images/train"};
  spec.names = {"a", "b"};
  LoadOptions options;
  options.cache_dir = dir / "cache";
  options.log = false;
  options.polygons = PolygonKind::kOrientedBoxes;
  const DatasetIndex first = load_split(spec, Split::kTrain, options);
  CHECK(first.polygons == PolygonKind::kOrientedBoxes);
  REQUIRE(first.items.size() == 1);
  REQUIRE(first.items[0].segments.size() == 2);
  CHECK(first.items[0].segments[1].size() == 6);
  const DatasetIndex second = load_split(spec, Split::kTrain, options);
  CHECK(second.from_cache);
  CHECK(second.items[0].segments == first.items[0].segments);
  // Boxes only: another key, so the cache is rebuilt without polygons.
  options.polygons = PolygonKind::kNone;
  const DatasetIndex boxes = load_split(spec, Split::kTrain, options);
  CHECK_FALSE(boxes.from_cache);
  CHECK(boxes.items[0].segments.empty());
  CHECK(boxes.items[0].boxes.size() == 2);
}

TEST_CASE("visible_box: inside, outside, and a diamond across the left border") {
  check_box(visible_box({{10, 10}, {30, 10}, {30, 20}}, 100, 100), {10, 10, 30, 20});
  check_box(visible_box({{-30, 10}, {-10, 10}, {-10, 20}}, 100, 100), {0, 0, 0, 0});
  // Diamond (-10,50) (20,20) (50,50) (20,80): its edges cross x = 0 at y = 40 and y = 60.
  check_box(visible_box({{-10, 50}, {20, 20}, {50, 50}, {20, 80}}, 100, 100), {0, 20, 50, 80});
  // A square around the top-left corner: the image corner (0, 0) is inside it.
  check_box(visible_box({{-10, -10}, {10, -10}, {10, 10}, {-10, 10}}, 100, 100), {0, 0, 10, 10});
}

TEST_CASE("clip_oriented_polygon: the visible part's rectangle in the polygon's own orientation") {
  // An axis-aligned 40 x 10 rectangle sticking out on the left: its visible part.
  Polygon rect = {{-10, 10}, {30, 10}, {30, 20}, {-10, 20}};
  PixelBox box{};
  CHECK(clip_oriented_polygon(rect, box, 100, 100));
  check_box(box, {0, 10, 30, 20});
  CHECK(sorted_points(rect) == sorted_points({{0, 10}, {30, 10}, {30, 20}, {0, 20}}));
  // A 45-degree square centred on the left border: the visible part is the right half (a
  // triangle), whose bounding rectangle at 45 degrees is the whole square again; the box is the
  // triangle's extent.
  const Polygon diamond = {{-20, 50}, {0, 30}, {20, 50}, {0, 70}};
  Polygon clipped = diamond;
  CHECK(clip_oriented_polygon(clipped, box, 100, 100));
  check_box(box, {0, 30, 20, 70});
  CHECK(sorted_points(clipped) == sorted_points(diamond));
  // Inside: untouched; outside: zeros.
  Polygon inside = {{10, 10}, {20, 10}, {20, 20}, {10, 20}};
  PixelBox kept{10, 10, 20, 20};
  CHECK(clip_oriented_polygon(inside, kept, 100, 100));
  CHECK(sorted_points(inside) == sorted_points({{10, 10}, {20, 10}, {20, 20}, {10, 20}}));
  Polygon gone = {{-30, 10}, {-10, 10}, {-10, 20}, {-30, 20}};
  CHECK_FALSE(clip_oriented_polygon(gone, box, 100, 100));
  check_box(box, {0, 0, 0, 0});
}

TEST_CASE("polygon_rotated_box: a 4 x 2 rectangle turned by 30 degrees") {
  const double a = M_PI / 6, c = std::cos(a), s = std::sin(a);
  Polygon p;
  for (auto [u, v] : {std::pair{2.0, 1.0}, {2.0, -1.0}, {-2.0, -1.0}, {-2.0, 1.0}}) {
    p.emplace_back(static_cast<float>(50 + u * c - v * s), static_cast<float>(40 + u * s + v * c));
  }
  const auto r = polygon_rotated_box(p);
  CHECK(r.cx == Approx(50).epsilon(1e-5));
  CHECK(r.cy == Approx(40).epsilon(1e-5));
  CHECK(r.w == Approx(4).epsilon(1e-5));
  CHECK(r.h == Approx(2).epsilon(1e-5));
  CHECK(r.angle == Approx(a).epsilon(1e-5));
}

TEST_CASE("transforms move polygons like pixels: warp, flips, letterbox, mosaic") {
  const Polygon p = {{10, 10}, {30, 10}, {30, 20}, {10, 20}};
  // A translation by (5, -3) into a 64 x 64 output.
  AffineDraw draw;
  draw.matrix = cv::Matx33d(1, 0, 5, 0, 1, -3, 0, 0, 1);
  const Sample moved = warp_sample(obb_sample(40, 50, p), draw, 64, 64, false);
  REQUIRE(moved.segments.size() == 1);
  CHECK(moved.oriented);
  CHECK(sorted_points(moved.segments[0]) == sorted_points({{15, 7}, {35, 7}, {35, 17}, {15, 17}}));
  check_box(moved.boxes[0], {15, 7, 35, 17});
  // Pushed half out of the output: the visible part, in the polygon's orientation.
  draw.matrix = cv::Matx33d(1, 0, -20, 0, 1, 0, 0, 0, 1);
  const Sample cut = warp_sample(obb_sample(40, 50, p), draw, 64, 64, false);
  REQUIRE(cut.boxes.size() == 1);
  check_box(cut.boxes[0], {0, 10, 10, 20});
  CHECK(sorted_points(cut.segments[0]) == sorted_points({{0, 10}, {10, 10}, {10, 20}, {0, 20}}));

  Sample flipped = obb_sample(40, 50, p);
  flip_horizontal(flipped, {});
  CHECK(sorted_points(flipped.segments[0]) ==
        sorted_points({{40, 10}, {20, 10}, {20, 20}, {40, 20}}));
  flip_vertical(flipped, {});
  CHECK(sorted_points(flipped.segments[0]) ==
        sorted_points({{40, 30}, {20, 30}, {20, 20}, {40, 20}}));

  // Letterbox 40 x 50 into 100 x 100 (not scaled up: ratio 1, 25 px left, 30 px above).
  const LetterboxGeometry g = letterbox_geometry(40, 50, 100, 100, false);
  REQUIRE(g.ratio == 1.0);
  REQUIRE(g.left == 25);
  REQUIRE(g.top == 30);
  const Sample boxed = letterbox(obb_sample(40, 50, p), g);
  CHECK(boxed.oriented);
  CHECK(sorted_points(boxed.segments[0]) ==
        sorted_points({{35, 40}, {55, 40}, {55, 50}, {35, 50}}));

  // Mosaic: each part's polygon shifted with its pixels, then clipped to the 2s canvas.
  const Sample a = obb_sample(40, 50, p);
  const Sample m = mosaic4({&a, &a, &a, &a}, 50, 50, 50);
  CHECK(m.oriented);
  REQUIRE(m.segments.size() == m.boxes.size());
  for (size_t i = 0; i < m.boxes.size(); ++i) {
    CHECK(visible_box(m.segments[i], 100, 100)[0] == Approx(m.boxes[i][0]).epsilon(1e-5));
    CHECK(visible_box(m.segments[i], 100, 100)[3] == Approx(m.boxes[i][3]).epsilon(1e-5));
  }
}

TEST_CASE("loader with oriented boxes: rotated rows in step with the box rows") {
  TempDir dir;
  DatasetIndex index;
  index.names = {"a", "b"};
  index.polygons = PolygonKind::kOrientedBoxes;
  // 64 x 64 images with a 30-degree 24 x 8 box in the middle.
  const double angle = M_PI / 6, c = std::cos(angle), s = std::sin(angle);
  std::vector<float> flat;
  for (auto [u, v] : {std::pair{12.0, 4.0}, {12.0, -4.0}, {-12.0, -4.0}, {-12.0, 4.0}}) {
    flat.push_back(static_cast<float>((32 + u * c - v * s) / 64));
    flat.push_back(static_cast<float>((32 + u * s + v * c) / 64));
  }
  for (int i = 0; i < 4; ++i) {
    ImageLabels item;
    item.image = dir / ("o" + std::to_string(i) + ".png");
    trainer::test::write_image(item.image, trainer::test::pattern_image(64, 64, i));
    item.width = item.height = 64;
    item.classes = {i % 2};
    float x1 = 1, y1 = 1, x2 = 0, y2 = 0;
    for (size_t k = 0; k < flat.size(); k += 2) {
      x1 = std::min(x1, flat[k]), x2 = std::max(x2, flat[k]);
      y1 = std::min(y1, flat[k + 1]), y2 = std::max(y2, flat[k + 1]);
    }
    item.boxes = {{(x1 + x2) / 2, (y1 + y2) / 2, x2 - x1, y2 - y1}};
    item.segments = {flat};
    index.items.push_back(item);
  }
  LoaderOptions o;
  o.imgsz = 64;
  o.batch = 4;
  o.workers = 0;
  o.show_progress = false;
  o.augment = false;
  Loader val(index, o);
  val.start_epoch(0, false);
  auto batch = val.next();
  REQUIRE(batch);
  REQUIRE(batch->rboxes.size(0) == 4);
  for (int64_t r = 0; r < 4; ++r) {
    CHECK(batch->rboxes[r][0].item<float>() == Approx(0.5).epsilon(1e-4));
    CHECK(batch->rboxes[r][2].item<float>() == Approx(24.0 / 64).epsilon(1e-4));
    CHECK(batch->rboxes[r][3].item<float>() == Approx(8.0 / 64).epsilon(1e-4));
    CHECK(batch->rboxes[r][4].item<float>() == Approx(angle).epsilon(1e-4));
  }
  // Training with mosaic, rotation and flips: one rotated row per box row, canonical.
  o.augment = true;
  o.augment_settings.degrees = 30;
  o.augment_settings.flipud = 0.5;
  Loader train(index, o);
  for (int e = 0; e < 3; ++e) {
    train.start_epoch(e, true);
    while (auto b = train.next()) {
      CHECK(b->rboxes.size(0) == b->labels.size(0));
      if (b->rboxes.size(0) == 0) continue;
      const auto w = b->rboxes.select(1, 2) * 64, h = b->rboxes.select(1, 3) * 64;
      CHECK((w >= h - 1e-3).all().item<bool>());
      CHECK(b->rboxes.select(1, 4).min().item<float>() >= -M_PI / 4 - 1e-6);
      CHECK(b->rboxes.select(1, 4).max().item<float>() < 3 * M_PI / 4 + 1e-6);
    }
  }
}

TEST_CASE("batch plot: an OBB batch draws each row's rotated box, not its axis-aligned box") {
  // One black 200 x 200 image with a 45-degree 100 x 20 box in the middle: the plot has colour on
  // the rotated edge and none at the corners of the axis-aligned extent (the text tab aside).
  Batch batch;
  batch.images = torch::zeros({1, 3, 200, 200}, torch::kUInt8);
  batch.labels = torch::tensor({0.0f, 0.0f, 0.5f, 0.5f, 0.42f, 0.42f}).view({1, 6});
  batch.rboxes = torch::tensor({0.5f, 0.5f, 0.5f, 0.1f, static_cast<float>(M_PI / 4)}).view({1, 5});
  batch.files = {"a.jpg"};
  const cv::Mat plot = plot_batch(batch, {"bar"});
  REQUIRE(plot.rows == 200);
  auto lit = [&](int x, int y) {
    const cv::Vec3b p = plot.at<cv::Vec3b>(y, x);
    return p[0] + p[1] + p[2] > 150;
  };
  // The corner c + v1 + v2 of the rotated box: (100 + 35.4 - 7.1, 100 + 35.4 + 7.1) = (128, 142).
  CHECK(lit(128, 142));
  // The axis-aligned extent's bottom-right corner (142, 142) lies outside the rotated box.
  CHECK_FALSE(lit(142, 142));
}
