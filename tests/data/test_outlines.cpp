// Segmentation outlines through the data pipeline: the reference's resampling (hand-computed),
// joining an object's COCO polygons (hand-computed), rasterisation (pixel counts by hand, the
// region fill against a whole-image fill, overlap order), COCO json outlines on coco128, and the
// loader's masks in step with its label rows.
#include <doctest/doctest.h>
#include <torch/torch.h>

#include <opencv2/imgproc.hpp>

#include <algorithm>
#include <random>

#include "data/augment/copy_paste.h"
#include "data/augment/polygon.h"
#include "data/batch_plot.h"
#include "data/coco_dataset.h"
#include "data/dataset.h"
#include "data/dataset_yaml.h"
#include "data/instance_masks.h"
#include "data/loader.h"
#include "data/outline_merge.h"
#include "data_test_util.h"
#include "test_support.h"

using namespace trainer::data;
using trainer::test::TempDir;

TEST_CASE("resample_outline: vertices kept, even index positions between them (by hand)") {
  // Triangle (0,0) (4,0) (0,4), closed: vertex positions 0..3. 9 points: linspace(0, 3, 5) =
  // 0, .75, 1.5, 2.25, 3 merged with 0, 1, 2, 3 -> 0 0 .75 1 1.5 2 2.25 3 3.
  const std::vector<float> tri = {0, 0, 4, 0, 0, 4};
  const auto r = augment::resample_outline(tri, 9);
  const std::vector<float> want = {0, 0, 0, 0, 3, 0, 4, 0, 2, 2, 0, 4, 0, 3, 0, 0, 0, 0};
  CHECK(r == want);
  // As many or more points than asked: `count` even positions over the closed outline. The
  // unit square closed has positions 0..4: linspace(0, 4, 3) = 0, 2, 4 -> (0,0) (1,1) (0,0).
  const std::vector<float> four = {0, 0, 1, 0, 1, 1, 0, 1};
  CHECK(augment::resample_outline(four, 3) == std::vector<float>{0, 0, 1, 1, 0, 0});
  // linspace(0, 4, 5): the closed outline itself.
  CHECK(augment::resample_outline(four, 5) == std::vector<float>{0, 0, 1, 0, 1, 1, 0, 1, 0, 0});
  // Exactly `count` points: unchanged (not closed).
  CHECK(augment::resample_outline(four, 4) == four);
  CHECK(augment::resample_outline(tri, 3) == tri);
  // The default count: 1000, or the longest outline's points + 1.
  CHECK(augment::outline_resample_count({tri, four}) == 1000);
  CHECK(augment::outline_resample_count({std::vector<float>(2 * 1500, 0.5f)}) == 1501);
  const auto big = augment::resample_outline(four, 1000);
  REQUIRE(big.size() == 2000);
  CHECK(big[0] == 0);
  CHECK(big[1998] == 0);  // ends at the first vertex again
  CHECK(big[1999] == 0);
}

TEST_CASE("merge_outlines: two squares joined at their closest corners and walked back (by hand)") {
  // A = (0,0) (2,0) (2,2) (0,2), B = (5,0) (7,0) (7,2) (5,2): closest pair A[1] = (2,0), B[0] =
  // (5,0). A rotated to start at 1 and closed; B (the last) starts at 0 and is closed; no middle.
  const std::vector<double> a = {0, 0, 2, 0, 2, 2, 0, 2}, b = {5, 0, 7, 0, 7, 2, 5, 2};
  const auto m = merge_outlines({a, b});
  const std::vector<double> want = {2, 0, 2, 2, 0, 2, 0, 0, 2, 0,   // A from (2,0), closed
                                    5, 0, 7, 0, 7, 2, 5, 2, 5, 0};  // B from (5,0), closed
  CHECK(m == want);
  CHECK(merge_outlines({a}) == a);
  // Three: the middle one goes out from its first link to its second and comes back after.
  const std::vector<double> c = {10, 0, 12, 0, 12, 2, 10, 2};
  const auto three = merge_outlines({a, b, c});
  // Links: A1-B0 (d 3), B1-C0 (d 3). B: idx [0, 1] -> out B[0..1], back B[1..] closed.
  const std::vector<double> want3 = {2,  0, 2,  2, 0,  2, 0,  0, 2,  0,  // A
                                     5,  0, 7,  0,                       // B out
                                     10, 0, 12, 0, 12, 2, 10, 2, 10, 0,  // C
                                     7,  0, 7,  2, 5,  2, 5,  0};        // B back
  CHECK(three == want3);
}

TEST_CASE("outline_mask: pixel counts of known polygons (fill, then a bilinear 1/ratio resize)") {
  // An 8 x 8 square (0..7 inclusive) in 16 x 16 at ratio 4: output pixels (0|1, 0|1) read
  // source pixels 1-2 and 5-6: 4 set. At ratio 1: 64.
  const std::vector<cv::Point2f> square = {{0, 0}, {7.9f, 0}, {7.9f, 7.9f}, {0, 7.9f}};
  CHECK(cv::countNonZero(outline_mask(square, 16, 16, 4)) == 4);
  CHECK(cv::countNonZero(outline_mask(square, 16, 16, 1)) == 64);  // 7.9 truncates to 7
  // A right triangle (0,0) (8,0) (0,8) at ratio 1: rows y = 0..8 fill x = 0..8 - y: 45 pixels.
  CHECK(cv::countNonZero(outline_mask({{0, 0}, {8, 0}, {0, 8}}, 16, 16, 1)) == 45);
  // At ratio 2, output (i, j) reads source position (2i + 0.5, 2j + 0.5): the average of a 2x2
  // block, rounded (set when 2 or more of its 4 are in). Block (i, j) holds x + y = 2(i + j) +
  // {0, 1, 1, 2}: all 4 in for i + j <= 3 (10 blocks), 1 of 4 for i + j = 4, none beyond.
  CHECK(cv::countNonZero(outline_mask({{0, 0}, {8, 0}, {0, 8}}, 16, 16, 2)) == 10);
  CHECK_THROWS_AS(rasterise_outlines({square}, 16, 16, 17, true), std::invalid_argument);
}

TEST_CASE("outline_mask: the region fill equals a whole-image fill and resize (oracle)") {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(-20.0f, 180.0f);
  for (int trial = 0; trial < 300; ++trial) {
    const int h = trial % 3 == 0 ? 96 : 160, w = trial % 2 ? 128 : 64;
    const int ratio = std::vector<int>{4, 2, 1, 8, 3}[trial % 5];
    std::vector<cv::Point2f> outline;
    const int n = 3 + trial % 9;
    for (int k = 0; k < n; ++k) {
      outline.emplace_back(std::clamp(u(rng), 0.0f, float(w)), std::clamp(u(rng), 0.0f, float(h)));
    }
    std::vector<cv::Point> points;
    for (const auto& p : outline) points.emplace_back(int(p.x), int(p.y));
    cv::Mat full = cv::Mat::zeros(h, w, CV_8U), want;
    cv::fillPoly(full, std::vector<std::vector<cv::Point>>{points}, cv::Scalar(1));
    cv::resize(full, want, cv::Size(w / ratio, h / ratio));
    const cv::Mat got = outline_mask(outline, h, w, ratio);
    CAPTURE(trial);
    REQUIRE(got.rows == want.rows);
    REQUIRE(got.cols == want.cols);
    CHECK(cv::countNonZero(got != want) == 0);
  }
}

TEST_CASE("rasterise_outlines: overlap index by decreasing area, smaller objects on top") {
  const std::vector<cv::Point2f> small = {{4, 4}, {8, 4}, {8, 8}, {4, 8}};
  const std::vector<cv::Point2f> large = {{0, 0}, {15, 0}, {15, 15}, {0, 15}};
  const auto m = rasterise_outlines({small, large}, 16, 16, 1, true);
  CHECK(m.order == std::vector<int>{1, 0});  // large first
  REQUIRE(m.index.type() == CV_32S);
  CHECK(m.index.at<int>(6, 6) == 2);  // the small one (row 1 after the reorder) on top
  CHECK(m.index.at<int>(1, 1) == 1);
  CHECK(cv::countNonZero(m.index == 2) == 25);
  CHECK(cv::countNonZero(m.index == 1) == 256 - 25);
  const auto separate = rasterise_outlines({small, large}, 16, 16, 1, false);
  CHECK(separate.order == std::vector<int>{0, 1});
  REQUIRE(separate.masks.size() == 2);
  CHECK(cv::countNonZero(separate.masks[0]) == 25);
  CHECK(cv::countNonZero(separate.masks[1]) == 256);
}

TEST_CASE("coco json outlines: coco128's polygons become outlines with their extent as the box") {
  TRAINER_SKIP_IF_NO_SHARED_DATA(coco128, "coco128");
  const auto json = *coco128 / "annotations" / "instances_train2017.json";
  const CocoFile coco = read_coco_json(json);
  DatasetStats stats;
  const auto items = coco_to_labels(coco, *coco128 / "images" / "train2017", 80, stats, 0, true);
  size_t objects = 0, multi = 0;
  for (const auto& item : items) {
    REQUIRE(item.segments.size() == item.boxes.size());
    for (size_t k = 0; k < item.boxes.size(); ++k) {
      const auto& xy = item.segments[k];
      REQUIRE(xy.size() >= 6);
      float x1 = 1, x2 = 0, y1 = 1, y2 = 0;
      for (size_t j = 0; j < xy.size(); j += 2) {
        x1 = std::min(x1, xy[j]), x2 = std::max(x2, xy[j]);
        y1 = std::min(y1, xy[j + 1]), y2 = std::max(y2, xy[j + 1]);
      }
      CHECK(item.boxes[k][2] == doctest::Approx(x2 - x1).epsilon(1e-6));
      CHECK(item.boxes[k][3] == doctest::Approx(y2 - y1).epsilon(1e-6));
      ++objects;
    }
  }
  for (const auto& a : coco.annotations) multi += !a.iscrowd && a.segmentation.polygons.size() > 1;
  MESSAGE(objects << " outlines, " << multi << " objects of several polygons joined");
  CHECK(objects > 800);
  CHECK(multi > 0);
}

TEST_CASE("loader with outlines: masks per image, rows ordered by decreasing area") {
  TempDir dir;
  DatasetIndex index;
  index.names = {"a", "b"};
  index.polygons = PolygonKind::kOutlines;
  // 64 x 64 images: a small triangle (class 1) listed before a large square (class 0).
  const std::vector<float> triangle = {0.5f, 0.5f, 0.75f, 0.5f, 0.5f, 0.75f};
  const std::vector<float> square = {0.125f, 0.125f, 0.875f, 0.125f,
                                     0.875f, 0.875f, 0.125f, 0.875f};
  for (int i = 0; i < 2; ++i) {
    ImageLabels item;
    item.image = dir / ("s" + std::to_string(i) + ".png");
    trainer::test::write_image(item.image, trainer::test::pattern_image(64, 64, i));
    item.width = item.height = 64;
    item.classes = {1, 0};
    item.boxes = {{0.625f, 0.625f, 0.25f, 0.25f}, {0.5f, 0.5f, 0.75f, 0.75f}};
    item.segments = {triangle, square};
    index.items.push_back(item);
  }
  LoaderOptions o;
  o.imgsz = 64;
  o.batch = 2;
  o.workers = 0;
  o.show_progress = false;
  o.augment = false;
  {
    Loader val(index, o);
    val.start_epoch(0, false);
    auto batch = val.next();
    REQUIRE(batch);
    REQUIRE(batch->masks.defined());
    CHECK(batch->overlap_masks);
    CHECK(batch->masks.sizes() == torch::IntArrayRef{2, 16, 16});
    CHECK((batch->masks.scalar_type() == torch::kInt32));
    // The square (larger) is row 0 of each image now: class 0 first, then the triangle.
    CHECK(batch->labels[0][1].item<float>() == 0);
    CHECK(batch->labels[1][1].item<float>() == 1);
    const auto m0 = batch->masks[0];
    CHECK((m0 == 2).sum().item<int64_t>() > 0);
    CHECK((m0 == 1).sum().item<int64_t>() > (m0 == 2).sum().item<int64_t>());
    // The square spans pixels 8..56 of 64: blocks 2..13 of 16 (12 x 12), less the triangle's.
    CHECK((m0 > 0).sum().item<int64_t>() == 144);
  }
  o.overlap_mask = false;
  o.mask_ratio = 2;
  Loader val(index, o);
  val.start_epoch(0, false);
  auto batch = val.next();
  REQUIRE(batch);
  CHECK_FALSE(batch->overlap_masks);
  CHECK(batch->masks.sizes() == torch::IntArrayRef{4, 32, 32});  // one per row
  CHECK((batch->masks.scalar_type() == torch::kUInt8));
  CHECK(batch->labels[0][1].item<float>() == 1);  // file order kept
  // Training (mosaic, flips): one mask image per batch image, values <= the image's rows.
  o.overlap_mask = true;
  o.mask_ratio = 4;
  o.augment = true;
  Loader train(index, o);
  train.start_epoch(0, true);
  while (auto b = train.next()) {
    CHECK(b->masks.size(0) == b->images.size(0));
    for (int64_t k = 0; k < b->masks.size(0); ++k) {
      const int64_t rows = (b->labels.select(1, 0) == k).sum().item<int64_t>();
      CHECK(b->masks[k].max().item<int>() <= rows);
    }
  }
}

namespace {

// A w x h sample whose column x has pixel value x (all channels), with square objects.
augment::Sample striped_sample(int h, int w, const std::vector<augment::PixelBox>& boxes) {
  augment::Sample s;
  s.image = cv::Mat(h, w, CV_8UC3);
  for (int x = 0; x < w; ++x) s.image.col(x).setTo(cv::Scalar(x, x, x));
  for (const auto& b : boxes) {
    s.classes.push_back(static_cast<int>(s.classes.size()));
    s.boxes.push_back(b);
    s.segments.push_back({{b[0], b[1]}, {b[2], b[1]}, {b[2], b[3]}, {b[0], b[3]}});
  }
  return s;
}

}  // namespace

TEST_CASE("copy_paste_flip: mirrored objects clear of every box are pasted with their pixels") {
  // 20 x 10; object 0 at x 2..6 (mirror 14..18: clear), object 1 centred at 8..12 (its mirror is
  // itself: IoA 1, not eligible).
  auto s = striped_sample(10, 20, {{2, 2, 6, 6}, {8, 2, 12, 6}});
  CHECK(augment::copy_paste_flip(s, 1.0) == 1);
  REQUIRE(s.size() == 3);
  CHECK(s.classes[2] == 0);
  CHECK(s.boxes[2] == augment::PixelBox{14, 2, 18, 6});
  CHECK(s.segments[2][0].x == 18.0f);
  // Inside the pasted square the pixels are the mirrored image's: column x shows 19 - x.
  CHECK(s.image.at<cv::Vec3b>(4, 16)[0] == 3);
  CHECK(s.image.at<cv::Vec3b>(4, 14)[0] == 5);   // the filled outline includes its border
  CHECK(s.image.at<cv::Vec3b>(4, 13)[0] == 13);  // outside: untouched
  CHECK(s.image.at<cv::Vec3b>(8, 16)[0] == 16);
  // round(fraction x eligible), half to even: 0.5 x 1 -> 0.
  auto t = striped_sample(10, 20, {{2, 2, 6, 6}});
  CHECK(augment::copy_paste_flip(t, 0.5) == 0);
  CHECK(augment::copy_paste_flip(t, 0.0) == 0);
  CHECK(t.size() == 1);
}

TEST_CASE("paste_objects (mixup mode): a donor's objects by increasing overlap, 30% rule") {
  auto s = striped_sample(10, 40, {{0, 0, 10, 10}});
  // Donor objects: clear (IoA 0), 20% of the box (eligible, pasted second), 40% (not eligible).
  auto donor = striped_sample(10, 40, {{20, 0, 30, 10}, {8, 0, 18, 10}, {6, 0, 16, 10}});
  donor.image.setTo(cv::Scalar(200, 200, 200));
  CHECK(augment::paste_objects(s, donor, donor.image, 1.0) == 2);
  REQUIRE(s.size() == 3);
  CHECK(s.boxes[1] == augment::PixelBox{20, 0, 30, 10});  // smallest overlap first
  CHECK(s.boxes[2] == augment::PixelBox{8, 0, 18, 10});
  CHECK(s.image.at<cv::Vec3b>(5, 25)[0] == 200);
  CHECK(s.image.at<cv::Vec3b>(5, 35)[0] == 35);
}

TEST_CASE("loader with copy_paste: mirrored objects join the rows and the masks") {
  TempDir dir;
  DatasetIndex index;
  index.names = {"a"};
  index.polygons = PolygonKind::kOutlines;
  ImageLabels item;
  item.image = dir / "one.png";
  trainer::test::write_image(item.image, trainer::test::pattern_image(64, 64, 1));
  item.width = item.height = 64;
  item.classes = {0};
  item.boxes = {{0.25f, 0.5f, 0.25f, 0.25f}};  // x 8..24: its mirror 40..56 is clear
  item.segments = {{0.125f, 0.375f, 0.375f, 0.375f, 0.375f, 0.625f, 0.125f, 0.625f}};
  index.items = {item, item};
  LoaderOptions o;
  o.imgsz = 64;
  o.batch = 2;
  o.workers = 0;
  o.show_progress = false;
  o.augment_settings = {};
  o.augment_settings.mosaic = 0;
  o.augment_settings.translate = 0;
  o.augment_settings.scale = 0;
  o.augment_settings.fliplr = 0;
  o.augment_settings.hsv_h = o.augment_settings.hsv_s = o.augment_settings.hsv_v = 0;
  Loader plain(index, o);
  plain.start_epoch(0, true);
  CHECK(plain.next()->labels.size(0) == 2);
  o.augment_settings.copy_paste = 1.0;
  Loader pasted(index, o);
  pasted.start_epoch(0, true);
  auto batch = pasted.next();
  REQUIRE(batch);
  CHECK(batch->labels.size(0) == 4);  // each image gained its mirrored object
  CHECK(batch->masks[0].max().item<int>() == 2);
  pasted.start_epoch(1, false);  // close_mosaic: copy_paste off too
  CHECK(pasted.next()->labels.size(0) == 2);
}

TEST_CASE("batch plot: a segmentation batch tints each row's mask under its box") {
  Batch batch;
  batch.images = torch::zeros({1, 3, 32, 32}, torch::kUInt8);
  batch.labels = torch::tensor({0.0f, 0.0f, 0.75f, 0.75f, 0.25f, 0.25f}).view({1, 6});
  batch.files = {"a.png"};
  auto index = torch::zeros({1, 8, 8}, torch::kInt32);
  index[0].narrow(0, 5, 2).narrow(1, 5, 2).fill_(1);  // mask pixels (5..6, 5..6) of 8 x 8
  batch.masks = index;
  batch.overlap_masks = true;
  const cv::Mat with = plot_batch(batch, {"thing"});
  batch.masks = torch::Tensor();
  const cv::Mat without = plot_batch(batch, {"thing"});
  REQUIRE(with.rows == without.rows);
  REQUIRE(with.cols == without.cols);
  // Image pixel (25, 25) lies in mask pixel (6, 6) and inside the box (20..28), off its outline.
  CHECK(with.at<cv::Vec3b>(25, 25) != without.at<cv::Vec3b>(25, 25));
  CHECK(with.at<cv::Vec3b>(2, 30) == without.at<cv::Vec3b>(2, 30));
}
