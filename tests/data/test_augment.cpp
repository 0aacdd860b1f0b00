// Augmentation units against hand-computed values: letterbox and its inverse, mosaic placement,
// affine box transform, box candidates, HSV tables, flips, mixup, and the per-sample streams.
#include <doctest/doctest.h>

#include <opencv2/imgproc.hpp>

#include "data/augment/affine.h"
#include "data/augment/flip.h"
#include "data/augment/hsv.h"
#include "data/augment/letterbox.h"
#include "data/augment/mixup.h"
#include "data/augment/mosaic.h"
#include "data/augment/pipeline.h"
#include "data/augment/sample_rng.h"
#include "data/rect_shapes.h"
#include "data_test_util.h"

using namespace trainer::data::augment;
using doctest::Approx;
using trainer::test::solid_sample;

TEST_CASE("letterbox: python rounding halves to even") {
  CHECK(round_half_even(212.5) == 212);
  CHECK(round_half_even(213.5) == 214);
  CHECK(round_half_even(54.4) == 54);
  CHECK(round_half_even(54.6) == 55);
  CHECK(round_half_even(-0.5) == 0);
}

TEST_CASE("letterbox: geometry for hand-computed shapes") {
  // 480x640 into 640x640, scaleup: r = min(640/480, 640/640) = 1; dh = (640-480)/2 = 80;
  // top = round(79.9) = 80, bottom = round(80.1) = 80.
  auto g = letterbox_geometry(480, 640, 640, 640, true);
  CHECK(g.ratio == 1.0);
  CHECK(g.resized_width == 640);
  CHECK(g.resized_height == 480);
  CHECK(g.top == 80);
  CHECK(g.bottom == 80);
  CHECK(g.left == 0);
  CHECK(g.right == 0);
  // 422x640 into 320x320: r = 0.5, 211x320; dh = (320-211)/2 = 54.5: top = round(54.4) = 54,
  // bottom = round(54.6) = 55.
  g = letterbox_geometry(422, 640, 320, 320, true);
  CHECK(g.ratio == 0.5);
  CHECK(g.resized_height == 211);
  CHECK(g.top == 54);
  CHECK(g.bottom == 55);
  // 425 * 0.5 = 212.5 rounds to 212 (even); dh = 54 both sides.
  g = letterbox_geometry(425, 640, 320, 320, true);
  CHECK(g.resized_height == 212);
  CHECK(g.top == 54);
  CHECK(g.bottom == 54);
  // scaleup=false never enlarges: 100x50 into 320x320 keeps r = 1, pads (320-50)/2 = 135 each side
  // horizontally and (320-100)/2 = 110 vertically.
  g = letterbox_geometry(100, 50, 320, 320, false);
  CHECK(g.ratio == 1.0);
  CHECK(g.left == 135);
  CHECK(g.right == 135);
  CHECK(g.top == 110);
}

TEST_CASE("letterbox: image, boxes and the inverse") {
  Sample s = solid_sample(425, 640, 10);
  s.classes = {3};
  s.boxes = {{20, 12, 220, 212}};
  const auto g = letterbox_geometry(425, 640, 320, 320, true);
  const Sample out = letterbox(s, g);
  CHECK(out.width() == 320);
  CHECK(out.height() == 320);
  // boxes * 0.5 then + (left 0, top 54): (10, 60, 110, 160)
  CHECK(out.boxes[0][0] == Approx(10));
  CHECK(out.boxes[0][1] == Approx(60));
  CHECK(out.boxes[0][2] == Approx(110));
  CHECK(out.boxes[0][3] == Approx(160));
  CHECK(out.image.at<cv::Vec3b>(0, 0)[0] == 114);     // padding
  CHECK(out.image.at<cv::Vec3b>(100, 100)[0] == 10);  // image
  const PixelBox back = letterbox_inverse(out.boxes[0], g, 640, 425);
  CHECK(back[0] == Approx(20));
  CHECK(back[1] == Approx(12));
  CHECK(back[2] == Approx(220));
  CHECK(back[3] == Approx(212));
  // outside the image clips to it: x = -10 letterboxed -> (-10 - 0) / 0.5 < 0 -> 0
  CHECK(letterbox_inverse({-10, 54, 400, 400}, g, 640, 425)[0] == 0.0f);
  CHECK(letterbox_inverse({-10, 54, 400, 400}, g, 640, 425)[2] == 640.0f);
  CHECK(letterbox_inverse({-10, 54, 400, 400}, g, 640, 425)[3] == 425.0f);
}

TEST_CASE("mosaic: placement for a fixed centre") {
  // s = 320, centre (300, 400), a 200x250 image fits entirely in every quadrant.
  auto p = mosaic_placement(0, 300, 400, 200, 250, 320);
  CHECK(p.x1a == 50);
  CHECK(p.y1a == 200);
  CHECK(p.x2a == 300);
  CHECK(p.y2a == 400);
  CHECK(p.x1b == 0);
  CHECK(p.y1b == 0);
  CHECK(p.padw == 50);
  CHECK(p.padh == 200);
  p = mosaic_placement(1, 300, 400, 200, 250, 320);
  CHECK(p.x1a == 300);
  CHECK(p.x2a == 550);
  CHECK(p.padw == 300);
  CHECK(p.padh == 200);
  p = mosaic_placement(2, 300, 400, 200, 250, 320);
  CHECK(p.y1a == 400);
  CHECK(p.y2a == 600);
  CHECK(p.padw == 50);
  CHECK(p.padh == 400);
  p = mosaic_placement(3, 300, 400, 200, 250, 320);
  CHECK(p.x2a == 550);
  CHECK(p.y2a == 600);
  CHECK(p.padw == 300);
  CHECK(p.padh == 400);
  // Cropping: centre (200, 180), a 300x400 image in quadrant 0 loses its top-left:
  // x1a = max(200-400, 0) = 0, x1b = 400 - 200 = 200, y1b = 300 - 180 = 120, pad (-200, -120).
  p = mosaic_placement(0, 200, 180, 300, 400, 320);
  CHECK(p.x1a == 0);
  CHECK(p.y1a == 0);
  CHECK(p.x1b == 200);
  CHECK(p.y1b == 120);
  CHECK(p.padw == -200);
  CHECK(p.padh == -120);
  // Quadrant 3 at (600, 500): cut at the canvas edge 640: x2b = min(400, 40), y2b = min(140, 300).
  p = mosaic_placement(3, 600, 500, 300, 400, 320);
  CHECK(p.x2a == 640);
  CHECK(p.y2a == 640);
  CHECK(p.x2b == 40);
  CHECK(p.y2b == 140);
}

TEST_CASE("mosaic: labels move with their image, clipped, zero-area dropped") {
  Sample a = solid_sample(300, 400, 1), b = solid_sample(300, 400, 2),
         c = solid_sample(300, 400, 3), d = solid_sample(300, 400, 4);
  a.classes = {5, 6};
  a.boxes = {{250, 150, 350, 250}, {0, 0, 100, 100}};
  d.classes = {7};
  d.boxes = {{0, 0, 100, 100}};
  const Sample m = mosaic4({&a, &b, &c, &d}, 320, 200, 180);
  CHECK(m.width() == 640);
  CHECK(m.height() == 640);
  // a's first box + (-200, -120) = (50, 30, 150, 130); its second box lands at (-200, -120,
  // -100, -20), clips to zero area and is dropped. d is placed at (200, 180): (200, 180, 300, 280).
  REQUIRE(m.boxes.size() == 2);
  CHECK(m.classes[0] == 5);
  CHECK(m.boxes[0][0] == Approx(50));
  CHECK(m.boxes[0][1] == Approx(30));
  CHECK(m.boxes[0][2] == Approx(150));
  CHECK(m.boxes[0][3] == Approx(130));
  CHECK(m.classes[1] == 7);
  CHECK(m.boxes[1][0] == Approx(200));
  CHECK(m.boxes[1][3] == Approx(280));
  CHECK(m.image.at<cv::Vec3b>(10, 10)[0] == 1);      // quadrant 0
  CHECK(m.image.at<cv::Vec3b>(10, 300)[0] == 2);     // quadrant 1 starts at xc = 200
  CHECK(m.image.at<cv::Vec3b>(300, 10)[0] == 3);     // quadrant 2 starts at yc = 180
  CHECK(m.image.at<cv::Vec3b>(300, 300)[0] == 4);    // quadrant 3
  CHECK(m.image.at<cv::Vec3b>(639, 639)[0] == 114);  // 200 + 400 = 600 < 640: fill
}

TEST_CASE("affine: the source region a warp reads, hand-computed") {
  // A pure translation by (-100, -50) from 400 x 300 to 200 x 100: output x in [-1, 200] comes
  // from x in [99, 300] (y: [49, 150]); widened to [97, 303) x [47, 153).
  cv::Matx33d m = cv::Matx33d::eye();
  m(0, 2) = -100;
  m(1, 2) = -50;
  CHECK(warp_source_region(m, 400, 300, 200, 100, false) == cv::Rect(97, 47, 206, 106));
  // Halving: output x in [-1, 200] reads [-2, 400], y in [-1, 100] reads [-2, 200]; widened to
  // [-4, 403) x [-4, 203) and clipped to the input: [0, 400) x [0, 203).
  cv::Matx33d half = cv::Matx33d::eye();
  half(0, 0) = half(1, 1) = 0.5;
  CHECK(warp_source_region(half, 400, 300, 200, 100, false) == cv::Rect(0, 0, 400, 203));
  CHECK(warp_source_region(m, 400, 300, 200, 100, true) == cv::Rect(0, 0, 400, 300));
}

TEST_CASE("mosaic: assembled only where the warp reads, the warped pixels are identical") {
  // The fast path (mosaic4_into a reused canvas, only the region warp_source_region names) against
  // the whole canvas, over random centres and matrices with rotation and shear, in a canvas that
  // holds garbage from an earlier call.
  const int s = 160;
  std::vector<Sample> parts;
  for (int i = 0; i < 4; ++i) {
    Sample p;
    p.image = trainer::test::pattern_image(100 + 30 * i, 160 - 20 * i, i);
    p.classes = {i};
    p.boxes = {{10.f, 10.f, 60.f, 70.f}};
    parts.push_back(p);
  }
  cv::Mat canvas(2 * s, 2 * s, CV_8UC3, cv::Scalar(1, 2, 3));
  const AffineParams params{10.0, 0.2, 0.9, 5.0, 0.0};
  int smaller = 0;
  for (int seed = 0; seed < 40; ++seed) {
    SampleRng rng(static_cast<uint64_t>(seed), 0, 0);
    const int yc = static_cast<int>(rng.uniform(0.5 * s, 1.5 * s));
    const int xc = static_cast<int>(rng.uniform(0.5 * s, 1.5 * s));
    const AffineDraw draw = random_affine_matrix(2 * s, 2 * s, s, s, params, rng);
    const std::array<const Sample*, 4> four{&parts[0], &parts[1], &parts[2], &parts[3]};
    const cv::Rect region = warp_source_region(draw.matrix, 2 * s, 2 * s, s, s, false);
    smaller += region.area() < 4 * s * s;
    const Sample fast =
        warp_sample(mosaic4_into(four, s, xc, yc, region, canvas), draw, s, s, false);
    const Sample full = warp_sample(mosaic4(four, s, xc, yc), draw, s, s, false);
    REQUIRE(fast.image.size() == full.image.size());
    CHECK(cv::norm(fast.image, full.image, cv::NORM_INF) == 0);
    CHECK((fast.boxes == full.boxes));
    canvas.setTo(cv::Scalar(200, 7, 99));  // whatever the next call finds outside its region
  }
  CHECK(smaller > 20);  // the fast path does skip work
}

TEST_CASE("affine: box transform for fixed matrices") {
  // Scale x by 2, y by 0.5, translate (10, -5): corners of (10, 20, 30, 40) map to x 30..70,
  // y 5..15.
  cv::Matx33d m(2, 0, 10, 0, 0.5, -5, 0, 0, 1);
  PixelBox b = transform_box({10, 20, 30, 40}, m, false, 100, 100);
  CHECK(b[0] == Approx(30));
  CHECK(b[1] == Approx(5));
  CHECK(b[2] == Approx(70));
  CHECK(b[3] == Approx(15));
  // A 90 degree rotation (x, y) -> (100 - y, x): corners (80,10) (60,30) (60,10) (80,30).
  cv::Matx33d rot(0, -1, 100, 1, 0, 0, 0, 0, 1);
  b = transform_box({10, 20, 30, 40}, rot, false, 100, 100);
  CHECK(b[0] == Approx(60));
  CHECK(b[1] == Approx(10));
  CHECK(b[2] == Approx(80));
  CHECK(b[3] == Approx(30));
  // Clipped to the output: x 30..70 in a 50-wide output -> 30..50.
  b = transform_box({10, 20, 30, 40}, m, false, 50, 100);
  CHECK(b[2] == Approx(50));
  // Perspective: z = 0.001 x + 1; the corner (100, 0) -> (100 / 1.1, 0).
  cv::Matx33d p(1, 0, 0, 0, 1, 0, 0.001, 0, 1);
  b = transform_box({0, 0, 100, 10}, p, true, 1000, 1000);
  CHECK(b[2] == Approx(100.0 / 1.1));
  CHECK(b[3] == Approx(10.0));  // the (0, 10) corner has z = 1
}

TEST_CASE("affine: box candidate filter") {
  const PixelBox before = {0, 0, 10, 10};
  CHECK_FALSE(box_candidate(before, {0, 0, 3, 3}));            // area 9/100 = 0.09 <= 0.1
  CHECK(box_candidate(before, {0, 0, 4, 3}));                  // 12/100 = 0.12, 3 > 2 px
  CHECK_FALSE(box_candidate(before, {0, 0, 2, 50}));           // width 2 is not > 2
  CHECK_FALSE(box_candidate({0, 0, 3, 301}, {0, 0, 3, 301}));  // aspect 301/3 = 100.3 >= 100
  CHECK(box_candidate({0, 0, 3, 290}, {0, 0, 3, 290}));        // aspect 96.7 < 100
}

TEST_CASE("affine: warp of a whole sample with a pure translation") {
  Sample s = solid_sample(100, 100, 50);
  s.classes = {1, 2};
  s.boxes = {{10, 10, 30, 30}, {90, 90, 99, 99}};
  AffineDraw draw{cv::Matx33d(1, 0, 20, 0, 1, 0, 0, 0, 1), 1.0};
  const Sample out = warp_sample(s, draw, 100, 100, false);
  // Box 1 -> (30, 10, 50, 30); box 2 -> (110.., ) clipped to x 100: width 0 -> dropped.
  REQUIRE(out.boxes.size() == 1);
  CHECK(out.classes[0] == 1);
  CHECK(out.boxes[0][0] == Approx(30));
  CHECK(out.image.at<cv::Vec3b>(50, 5)[0] == 114);  // uncovered left strip
  CHECK(out.image.at<cv::Vec3b>(50, 50)[0] == 50);
}

TEST_CASE("affine: the random matrix with all ranges zero is a pure centring translation") {
  SampleRng rng(1, 0, 0);
  AffineParams params{0, 0, 0, 0, 0};
  // C moves the 200x100 input's centre (100, 50) to the origin; T to the output centre
  // 0.5 * (160, 60) = (80, 30): net translation (-20, -20).
  const AffineDraw d = random_affine_matrix(200, 100, 160, 60, params, rng);
  CHECK(d.scale == 1.0);
  CHECK(d.matrix(0, 0) == Approx(1));
  CHECK(d.matrix(0, 2) == Approx(-20));
  CHECK(d.matrix(1, 2) == Approx(-20));
  CHECK(d.matrix(2, 2) == Approx(1));
}

TEST_CASE("affine: a single image is placed by the warp, with a half-pixel shift for odd padding") {
  // 8.4.190 without mosaic: a 4 x 3 (w x h) image into 6 x 6 is centred by C (-2, -1.5) and moved
  // by T (3, 3): a shift of (1, 1.5), not a whole-pixel letterbox (top padding round(1.4) = 1).
  Sample s = solid_sample(3, 4, 200);
  s.classes = {0};
  s.boxes = {{0, 0, 4, 3}};
  SampleRng rng(1, 0, 0);
  const Sample out = random_perspective_to(s, 6, 6, AffineParams{0, 0, 0, 0, 0}, rng);
  REQUIRE(out.image.rows == 6);
  REQUIRE(out.image.cols == 6);
  REQUIRE(out.boxes.size() == 1);
  CHECK(out.boxes[0][0] == Approx(1));
  CHECK(out.boxes[0][1] == Approx(1.5));
  CHECK(out.boxes[0][2] == Approx(5));
  CHECK(out.boxes[0][3] == Approx(4.5));
  // Row 1 is half image, half border: bilinear (200 + 114) / 2 = 157; row 0 is border.
  CHECK(out.image.at<cv::Vec3b>(0, 2)[0] == 114);
  CHECK(out.image.at<cv::Vec3b>(1, 2)[0] == 157);
  CHECK(out.image.at<cv::Vec3b>(2, 2)[0] == 200);
  CHECK(out.image.at<cv::Vec3b>(2, 0)[0] == 114);  // column 0: left of the image (x < 1)
}

TEST_CASE("hsv: lookup tables") {
  // Hue is additive mod 180: r_h = 0.01 -> +1.8: 0 -> 1, 100 -> 101 (101.8), 179 -> 0 (0.8).
  HsvLuts l = hsv_luts(0.01, 0.5, 0.25);
  CHECK(l.hue[0] == 1);
  CHECK(l.hue[100] == 101);
  CHECK(l.hue[179] == 0);
  // r_h = -0.01 -> -1.8: 0 -> 178 (178.2), 1 -> 179 (179.2), 2 -> 0 (0.2).
  HsvLuts n = hsv_luts(-0.01, -0.5, 0.0);
  CHECK(n.hue[0] == 178);
  CHECK(n.hue[1] == 179);
  CHECK(n.hue[2] == 0);
  // Saturation x * 1.5: 100 -> 150, 200 -> 255 (clipped), 0 stays 0; x * 0.5: 3 -> 1 (1.5).
  CHECK(l.sat[100] == 150);
  CHECK(l.sat[200] == 255);
  CHECK(l.sat[0] == 0);
  CHECK(n.sat[3] == 1);
  // Value x * 1.25: 10 -> 12 (12.5), 204 -> 255.
  CHECK(l.val[10] == 12);
  CHECK(l.val[204] == 255);
  CHECK(n.val[77] == 77);  // gain 0: identity
}

TEST_CASE("hsv: zero gains leave the image unchanged and the identity tables round-trip") {
  cv::Mat im = trainer::test::pattern_image(8, 8);
  const cv::Mat before = im.clone();
  SampleRng rng(0, 0, 0);
  random_hsv(im, 0, 0, 0, rng);
  CHECK(cv::norm(im, before, cv::NORM_INF) == 0);
}

TEST_CASE("hsv: applying the tables equals a per-pixel lookup in OpenCV HSV") {
  cv::Mat im(61, 97, CV_8UC3);  // every value in every channel, odd sizes
  cv::randu(im, 0, 256);
  const HsvLuts luts = hsv_luts(-0.012, 0.45, -0.3);
  cv::Mat expected;  // the oracle: BGR -> HSV, index each channel's table, HSV -> BGR
  cv::cvtColor(im, expected, cv::COLOR_BGR2HSV);
  for (int y = 0; y < expected.rows; ++y) {
    for (int x = 0; x < expected.cols; ++x) {
      cv::Vec3b& p = expected.at<cv::Vec3b>(y, x);
      p = {luts.hue[p[0]], luts.sat[p[1]], luts.val[p[2]]};
    }
  }
  cv::cvtColor(expected, expected, cv::COLOR_HSV2BGR);
  apply_hsv(im, luts);
  CHECK(cv::norm(im, expected, cv::NORM_INF) == 0);
}

TEST_CASE("flip: boxes follow the pixels") {
  Sample s = solid_sample(50, 100, 0);
  s.image.at<cv::Vec3b>(0, 0) = cv::Vec3b(255, 255, 255);
  s.classes = {0};
  s.boxes = {{10, 20, 30, 40}};
  flip_horizontal(s);  // x -> 100 - x: (70, 20, 90, 40)
  CHECK(s.boxes[0][0] == Approx(70));
  CHECK(s.boxes[0][2] == Approx(90));
  CHECK(s.image.at<cv::Vec3b>(0, 99)[0] == 255);
  flip_vertical(s);  // y -> 50 - y: (70, 10, 90, 30)
  CHECK(s.boxes[0][1] == Approx(10));
  CHECK(s.boxes[0][3] == Approx(30));
  CHECK(s.image.at<cv::Vec3b>(49, 99)[0] == 255);
}

TEST_CASE("mixup: blend truncates and labels concatenate") {
  Sample a = solid_sample(4, 4, 100), b = solid_sample(4, 4, 201);
  a.classes = {1};
  a.boxes = {{0, 0, 1, 1}};
  b.classes = {2};
  b.boxes = {{1, 1, 2, 2}};
  const Sample m = mixup(a, b, 0.5);  // 100 * 0.5 + 201 * 0.5 = 150.5 -> 150
  CHECK(m.image.at<cv::Vec3b>(2, 2)[1] == 150);
  REQUIRE(m.classes.size() == 2);
  CHECK(m.classes[1] == 2);
}

TEST_CASE("sample rng: same key same stream, any other key differs") {
  SampleRng a(7, 3, 11), b(7, 3, 11), c(7, 4, 11), d(7, 3, 12), e(8, 3, 11);
  const uint64_t first = a.next_u64();
  CHECK(first == b.next_u64());
  CHECK(first != c.next_u64());
  CHECK(first != d.next_u64());
  CHECK(first != e.next_u64());
  SampleRng u(1, 2, 3);
  double lo = 1, hi = 0, mean = 0;
  for (int i = 0; i < 10000; ++i) {
    const double v = u.uniform(-1, 1);
    lo = std::min(lo, v), hi = std::max(hi, v), mean += v / 10000;
  }
  CHECK(lo >= -1.0);
  CHECK(hi < 1.0);
  CHECK(std::abs(mean) < 0.03);
  // Beta(32, 32): mean 0.5, sd sqrt(32*32 / (64^2 * 65)) = 0.062.
  double bm = 0, bv = 0;
  for (int i = 0; i < 4000; ++i) {
    const double x = u.beta(32, 32);
    bm += x / 4000, bv += (x - 0.5) * (x - 0.5) / 4000;
  }
  CHECK(bm == Approx(0.5).epsilon(0.01));
  CHECK(std::sqrt(bv) == Approx(0.062).epsilon(0.1));
}

TEST_CASE("rect shapes: the reference's set_rectangle rule") {
  using trainer::data::rect_plan;
  using trainer::data::rect_shape;
  // imgsz 640, stride 32, pad 0.5. All wide (max ar 0.75 < 1): h = ceil(0.75 * 20 + 0.5) * 32 =
  // ceil(15.5) * 32 = 512, w = ceil(20.5) * 32 = 672.
  auto s = rect_shape(0.5, 0.75, 640, 32, 0.5);
  CHECK(s[0] == 512);
  CHECK(s[1] == 672);
  // All tall (min ar 1.5): w = ceil(20 / 1.5 + 0.5) * 32 = ceil(13.83) * 32 = 448.
  s = rect_shape(1.5, 2.0, 640, 32, 0.5);
  CHECK(s[0] == 672);
  CHECK(s[1] == 448);
  // Mixed: square (1, 1): 672 x 672. With pad 0 (train): 640 x 640.
  s = rect_shape(0.5, 2.0, 640, 32, 0.5);
  CHECK(s[0] == 672);
  CHECK(rect_shape(0.5, 2.0, 640, 32, 0.0)[0] == 640);
  // Sorting: sizes (h, w) with ar 2, 0.5, 1 -> order 1, 2, 0; batches of 2: {0.5, 1} and {2}.
  auto plan = rect_plan({{200, 100}, {100, 200}, {100, 100}}, 2, 64, 32, 0.5);
  REQUIRE(plan.order.size() == 3);
  CHECK(plan.order[0] == 1);
  CHECK(plan.order[1] == 2);
  CHECK(plan.order[2] == 0);
  REQUIRE(plan.shapes.size() == 2);
  CHECK(plan.shapes[0][0] == 96);  // ceil(2 + 0.5) * 32
  CHECK(plan.shapes[0][1] == 96);
  CHECK(plan.shapes[1][0] == 96);
  CHECK(plan.shapes[1][1] == 64);  // ceil(0.5 * 2 + 0.5) * 32
}

TEST_CASE("train sample: the loader's fused RGB path gives train_sample's pixels and labels") {
  // The oracle is train_sample (warp, HSV, flips, BGR) followed by BGR -> RGB; the fast path fuses
  // the jitter, the horizontal flip and the channel swap. Mosaic, mixup, both flips, keypoints with
  // a flip_idx, with and without colour jitter, over many seeds.
  std::vector<Sample> images;
  for (int i = 0; i < 6; ++i) {
    Sample p;
    p.image = trainer::test::pattern_image(90 + 17 * i, 120 - 9 * i, i);
    p.classes = {i % 3, (i + 1) % 3};
    p.boxes = {{5.f, 8.f, 60.f, 70.f}, {30.f, 20.f, 80.f, 85.f}};
    p.keypoints_per_box = 2;
    p.keypoints = {10, 12, 2, 40, 50, 1, 35, 30, 2, 70, 60, 2};
    images.push_back(p);
  }
  const FetchSample fetch = [&](int64_t i) { return images[static_cast<size_t>(i)]; };
  const PickPartner pick = [](SampleRng& rng) { return static_cast<int64_t>(rng.below(6)); };
  TrainRecipe recipe;
  recipe.imgsz = 96;
  recipe.augment.mixup = 0.3;
  recipe.augment.flipud = 0.4;
  recipe.augment.degrees = 5.0;
  recipe.flip_idx = {1, 0};
  for (const bool jitter : {true, false}) {
    if (!jitter) recipe.augment.hsv_h = recipe.augment.hsv_s = recipe.augment.hsv_v = 0.0;
    for (int seed = 0; seed < 40; ++seed) {
      SampleRng rng_a(static_cast<uint64_t>(seed), 1, seed % 6), rng_b = rng_a;
      const Sample a = train_sample(seed % 6, fetch, pick, recipe, rng_a);
      cv::Mat slot(96, 96, CV_8UC3);
      const uint8_t* slot_data = slot.data;
      const Sample b = train_sample_rgb(seed % 6, fetch, pick, recipe, rng_b, slot);
      cv::Mat expected;
      cv::cvtColor(a.image, expected, cv::COLOR_BGR2RGB);
      CHECK(b.image.data == slot_data);  // written in place
      CHECK(cv::norm(b.image, expected, cv::NORM_INF) == 0);
      CHECK((b.boxes == a.boxes));
      CHECK(b.classes == a.classes);
      CHECK(b.keypoints == a.keypoints);
      CHECK(rng_a.next_u64() == rng_b.next_u64());  // the same draws were consumed
    }
  }
}

TEST_CASE("train sample: the mosaic path equals random_mosaic4 then random_perspective(-s/2)") {
  // The loader's mosaic (canvas assembled only where the warp reads it, in a reused buffer) against
  // the plain composition with the same draws, at an odd size, with a large translation, rotation
  // and shear, and with mixup (whose partner is built the same way).
  std::vector<Sample> images;
  for (int i = 0; i < 5; ++i) {
    Sample p;
    p.image = trainer::test::pattern_image(70 + 23 * i, 110 - 13 * i, i + 2);
    p.classes = {i % 2};
    p.boxes = {{4.f, 6.f, 50.f, 60.f}};
    images.push_back(p);
  }
  const FetchSample fetch = [&](int64_t i) { return images[static_cast<size_t>(i)]; };
  const PickPartner pick = [](SampleRng& rng) { return static_cast<int64_t>(rng.below(5)); };
  TrainRecipe recipe;
  recipe.imgsz = 97;
  recipe.augment.hsv_h = recipe.augment.hsv_s = recipe.augment.hsv_v = 0.0;
  recipe.augment.fliplr = 0.0;
  recipe.augment.translate = 0.4;
  recipe.augment.degrees = 20.0;
  recipe.augment.shear = 4.0;
  const AffineParams params{20.0, 0.4, recipe.augment.scale, 4.0, 0.0};
  const auto plain = [&](int64_t index, SampleRng& rng) {
    CHECK(rng.uniform() < 1.0);  // the mosaic draw (probability 1)
    const Sample first = fetch(index);
    Sample others[3];
    for (auto& other : others) other = fetch(pick(rng));
    const Sample mosaic =
        random_mosaic4({&first, &others[0], &others[1], &others[2]}, recipe.imgsz, rng);
    return random_perspective(mosaic, -recipe.imgsz / 2, params, rng);
  };
  for (const double mixup : {0.0, 1.0}) {
    recipe.augment.mixup = mixup;
    for (int seed = 0; seed < 20; ++seed) {
      SampleRng rng_a(static_cast<uint64_t>(seed), 2, seed % 5), rng_b = rng_a;
      const Sample fast = train_sample(seed % 5, fetch, pick, recipe, rng_a);
      Sample expected = plain(seed % 5, rng_b);
      if (mixup > 0.0) {
        CHECK(rng_b.uniform() < 1.0);  // the mixup draw
        const int64_t partner = pick(rng_b);
        SampleRng partner_rng(rng_b.next_u64(), 0, partner, StreamPurpose::kMixup);
        const Sample other = plain(partner, partner_rng);
        expected = trainer::data::augment::mixup(expected, other, rng_b.beta(32.0, 32.0));
      }
      REQUIRE(fast.image.size() == expected.image.size());
      CHECK(cv::norm(fast.image, expected.image, cv::NORM_INF) == 0);
      CHECK((fast.boxes == expected.boxes));
      CHECK(fast.classes == expected.classes);
    }
  }
}
