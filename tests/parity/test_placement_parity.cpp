// Parity of image placement on real images: the load-time resize (long side to imgsz), the
// validation letterbox with its per-axis gains and padding, predictions mapped back to the
// original image with them (inverted boxes kept), and a training image without mosaic,
// which 8.4.190 places with the affine warp of random perspective (a half-pixel shift where the
// padding is odd), all against the reference.
#include <doctest/doctest.h>
#include <nlohmann/json.hpp>
#include <opencv2/core.hpp>

#include <algorithm>
#include <cmath>
#include <fstream>

#include "core/config.h"
#include "data/augment/pipeline.h"
#include "data/image_codec.h"
#include "data/image_io.h"
#include "data/letterbox_inverse.h"
#include "parity_oracle.h"
#include "test_support.h"

using namespace trainer;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

data::augment::Sample labelled_sample(const fs::path& image_file, const cv::Mat& resized) {
  data::augment::Sample s;
  s.image = resized;
  const fs::path label = image_file.parent_path().parent_path().parent_path() / "labels" /
                         image_file.parent_path().filename() /
                         (image_file.stem().string() + ".txt");
  std::ifstream in(label);
  int cls;
  float cx, cy, w, h;
  const float W = static_cast<float>(resized.cols), H = static_cast<float>(resized.rows);
  while (in >> cls >> cx >> cy >> w >> h) {
    s.classes.push_back(cls);
    s.boxes.push_back({(cx - w / 2) * W, (cy - h / 2) * H, (cx + w / 2) * W, (cy + h / 2) * H});
  }
  return s;
}

// Largest absolute pixel difference (the images must have the same size).
int max_abs_diff(const cv::Mat& a, const cv::Mat& b) {
  REQUIRE(a.size() == b.size());
  cv::Mat diff;
  cv::absdiff(a, b, diff);
  double hi = 0;
  cv::minMaxLoc(diff.reshape(1), nullptr, &hi);
  return static_cast<int>(hi);
}

void check_boxes(const std::vector<data::augment::PixelBox>& ours, const json& ref, float tol) {
  REQUIRE(ours.size() == ref.size());
  for (size_t i = 0; i < ours.size(); ++i) {
    for (int k = 0; k < 4; ++k) {
      CAPTURE(i);
      CAPTURE(k);
      CHECK(std::abs(ours[i][k] - ref[i][k].get<double>()) <= tol);
    }
  }
}

}  // namespace

TEST_CASE("parity: load resize, val letterbox gains and non-mosaic train placement") {
  TRAINER_REQUIRE_ORACLE(python);
  TRAINER_REQUIRE_SHARED_DATA(coco8, "coco8");
  test::TempDir dir;
  const int imgsz = 160;  // coco8's 640x480 / 640x427 ... images give odd and even paddings
  std::vector<fs::path> images;
  for (const auto& split : {"val", "train"}) {
    for (const auto& entry : fs::directory_iterator(*coco8 / "images" / split)) {
      images.push_back(entry.path());
    }
  }
  std::sort(images.begin(), images.end());
  std::string args = "placement '" + dir.path().string() + "' " + std::to_string(imgsz);
  for (const auto& f : images) args += " '" + f.string() + "'";
  test::run_oracle(*python, args);
  std::ifstream in(dir / "placement.json");
  REQUIRE(in.good());
  const json ref = json::parse(in);

  bool saw_odd_padding = false;
  for (const auto& file : images) {
    const std::string stem = file.stem().string();
    CAPTURE(stem);
    const json& r = ref.at(stem);
    const cv::Mat original = data::read_image_bgr(file);
    const cv::Mat resized = data::resize_long_side(original, imgsz);
    CHECK(resized.rows == r["resized"][0].get<int>());
    CHECK(resized.cols == r["resized"][1].get<int>());
    const data::augment::Sample sample = labelled_sample(file, resized);

    // Validation letterbox: pixels, padding, per-axis gains (original -> letterboxed).
    data::augment::LetterboxGeometry g;
    const auto val = data::augment::val_sample(sample, imgsz, imgsz, &g);
    const cv::Mat ref_val = data::read_image_bgr(dir / (stem + "_val.png"));
    CHECK(max_abs_diff(val.image, ref_val) == 0);
    CHECK(g.left == r["val"]["pad_x"].get<int>());
    CHECK(g.top == r["val"]["pad_y"].get<int>());
    const double gain_x = static_cast<double>(resized.cols) / original.cols * g.ratio;
    const double gain_y = static_cast<double>(resized.rows) / original.rows * g.ratio;
    CHECK(gain_x == doctest::Approx(r["val"]["gain_x"].get<double>()).epsilon(1e-12));
    CHECK(gain_y == doctest::Approx(r["val"]["gain_y"].get<double>()).epsilon(1e-12));
    check_boxes(val.boxes, r["val"]["boxes"], 1e-3f);
    // Back to the original image with the per-axis gains (an inverted box stays inverted).
    const data::ImageGeometry geometry{original.rows,
                                       original.cols,
                                       gain_x,
                                       gain_y,
                                       static_cast<double>(g.left),
                                       static_cast<double>(g.top)};
    const std::vector<data::augment::PixelBox> probes = {
        {10, 20, 100, 120}, {100, 120, 10, 20}, {-5, 3.5f, 300, 77.25f}};  // oracle.py's
    std::vector<data::augment::PixelBox> scaled;
    for (const auto& p : probes) scaled.push_back(data::to_original_xyxy(p, geometry));
    check_boxes(scaled, r["val"]["scaled_probes"], 1e-3f);
    CHECK(scaled[1][2] < scaled[1][0]);

    // Training without mosaic and without random parts: the warp's placement.
    core::AugmentConfig a;
    a.degrees = a.translate = a.scale = a.shear = a.perspective = 0;
    a.hsv_h = a.hsv_s = a.hsv_v = 0;
    a.fliplr = a.flipud = 0;
    a.mixup = 0;
    const data::augment::TrainRecipe recipe{imgsz, a, /*mosaic_on=*/false};
    data::augment::SampleRng rng(0, 0, 0);
    const auto train = data::augment::train_sample(
        0, [&](int64_t) { return sample; }, [](data::augment::SampleRng&) { return int64_t{0}; },
        recipe, rng);
    const cv::Mat ref_train = data::read_image_bgr(dir / (stem + "_train.png"));
    CHECK(max_abs_diff(train.image, ref_train) <= 1);  // warp rounding across OpenCV versions
    check_boxes(train.boxes, r["train"]["boxes"], 1e-3f);
    if ((imgsz - resized.rows) % 2 != 0 || (imgsz - resized.cols) % 2 != 0) saw_odd_padding = true;
  }
  CHECK(saw_odd_padding);  // the case the half-pixel placement is about
}
