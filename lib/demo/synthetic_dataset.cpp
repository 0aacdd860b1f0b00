// See synthetic_dataset.h.
// Tested by tests/demo/test_synthetic_datasets.cpp: shapes dataset deterministic; its COCO json and
//   YOLO txt labels agree.
#include "demo/synthetic_dataset.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <opencv2/imgproc.hpp>
#include <random>

#include "core/atomic_file.h"
#include "core/error.h"
#include "data/image_codec.h"
#include "demo/synthetic_canvas.h"

namespace trainer::demo {
namespace {

enum Shape { kCircle, kSquare, kTriangle, kCross, kRing, kDiamond };

struct Object {
  int cls = 0;
  cv::Rect2d box;  // tight box in pixels
};

// Draws one shape centred at `c` with half-size `r` and returns its tight box.
cv::Rect2d draw_shape(cv::Mat& image, Shape shape, cv::Point2d c, double r, double angle,
                      const cv::Scalar& colour, Rng& rng) {
  std::vector<cv::Point2d> outline;
  auto polygon = [&](int n, double start) {
    for (int k = 0; k < n; ++k) {
      const double a = start + angle + 2 * M_PI * k / n;
      outline.emplace_back(c.x + r * std::cos(a), c.y + r * std::sin(a));
    }
  };
  switch (shape) {
    case kCircle:
    case kRing: {
      const int thickness = shape == kRing ? std::max(2, static_cast<int>(r / 3)) : cv::FILLED;
      const double outer = shape == kRing ? r - thickness / 2.0 : r;
      cv::circle(image, cv::Point(cvRound(c.x), cvRound(c.y)), cvRound(outer), colour, thickness,
                 cv::LINE_AA);
      return {c.x - r, c.y - r, 2 * r, 2 * r};
    }
    case kSquare:
      polygon(4, M_PI / 4);
      break;
    case kTriangle:
      polygon(3, -M_PI / 2);
      break;
    case kDiamond: {
      for (int k = 0; k < 4; ++k) {
        const double a = angle + M_PI / 2 * k;
        const double radius = (k % 2 == 0) ? r : r * 0.55;
        outline.emplace_back(c.x + radius * std::cos(a), c.y + radius * std::sin(a));
      }
      break;
    }
    case kCross: {
      const double w = r * 0.35;
      const double pts[12][2] = {{-w, -r}, {w, -r}, {w, -w}, {r, -w}, {r, w},   {w, w},
                                 {w, r},   {-w, r}, {-w, w}, {-r, w}, {-r, -w}, {-w, -w}};
      for (const auto& p : pts) {
        outline.emplace_back(c.x + p[0] * std::cos(angle) - p[1] * std::sin(angle),
                             c.y + p[0] * std::sin(angle) + p[1] * std::cos(angle));
      }
      break;
    }
  }
  std::vector<cv::Point> integer_outline;
  double x0 = 1e9, y0 = 1e9, x1 = -1e9, y1 = -1e9;
  for (const auto& p : outline) {
    integer_outline.emplace_back(cvRound(p.x), cvRound(p.y));
    x0 = std::min(x0, p.x);
    y0 = std::min(y0, p.y);
    x1 = std::max(x1, p.x);
    y1 = std::max(y1, p.y);
  }
  cv::fillPoly(image, std::vector<std::vector<cv::Point>>{integer_outline}, colour, cv::LINE_AA);
  (void)rng;
  return {x0, y0, x1 - x0, y1 - y0};
}

std::vector<Object> draw_image(cv::Mat& image, const SyntheticOptions& options, Rng& rng) {
  const int size = options.image_size;
  const int count = rng.integer(1, std::max(1, options.max_objects));
  std::vector<Object> objects;
  for (int i = 0; i < count; ++i) {
    const auto shape = static_cast<Shape>(rng.integer(0, 5));
    const double r = rng.uniform(options.min_object_size, options.max_object_size) / 2.0;
    const cv::Point2d c(rng.uniform(r * 0.6, size - r * 0.6), rng.uniform(r * 0.6, size - r * 0.6));
    const double angle = rng.uniform(0, 2 * M_PI);
    cv::Rect2d box = draw_shape(image, shape, c, r, angle, rng.colour(), rng);
    box &= cv::Rect2d(0, 0, size, size);  // clipped to the image
    // A later shape may hide most of an earlier one; keep labels honest by dropping objects that
    // get more than half covered.
    for (auto& o : objects) {
      const double covered = (o.box & box).area() / std::max(o.box.area(), 1e-9);
      if (covered > 0.5) o.cls = -1;
    }
    objects.erase(
        std::remove_if(objects.begin(), objects.end(), [](const Object& o) { return o.cls < 0; }),
        objects.end());
    if (box.width >= 2 && box.height >= 2) objects.push_back({static_cast<int>(shape), box});
  }
  return objects;
}

void write_split(const std::filesystem::path& out, const std::string& split, int count,
                 int first_id, const SyntheticOptions& options, Rng& rng,
                 SyntheticSummary& summary) {
  namespace fs = std::filesystem;
  fs::create_directories(out / "images" / split);
  fs::create_directories(out / "labels" / split);
  fs::create_directories(out / "annotations");
  nlohmann::json images = nlohmann::json::array();
  nlohmann::json annotations = nlohmann::json::array();
  int64_t annotation_id = 1;
  for (int i = 0; i < count; ++i) {
    const int id = first_id + i;
    const std::string stem = fmt::format("{:06d}", id);
    cv::Mat image = textured_background(options.image_size, rng);
    const auto objects = draw_image(image, options, rng);
    const fs::path image_file = out / "images" / split / (stem + ".jpg");
    data::write_image(image_file, image, 92);
    std::string label_text;
    const double s = options.image_size;
    for (const auto& o : objects) {
      label_text +=
          fmt::format("{} {:.6f} {:.6f} {:.6f} {:.6f}\n", o.cls, (o.box.x + o.box.width / 2) / s,
                      (o.box.y + o.box.height / 2) / s, o.box.width / s, o.box.height / s);
      annotations.push_back({{"id", annotation_id++},
                             {"image_id", id},
                             {"category_id", o.cls + 1},
                             {"bbox", {o.box.x, o.box.y, o.box.width, o.box.height}},
                             {"area", o.box.width * o.box.height},
                             {"iscrowd", 0}});
      ++summary.objects;
    }
    core::write_file_atomically(out / "labels" / split / (stem + ".txt"), label_text);
    images.push_back({{"id", id},
                      {"file_name", stem + ".jpg"},
                      {"width", options.image_size},
                      {"height", options.image_size}});
    ++summary.images;
  }
  nlohmann::json categories = nlohmann::json::array();
  const auto& names = synthetic_class_names();
  for (size_t c = 0; c < names.size(); ++c) {
    categories.push_back({{"id", c + 1}, {"name", names[c]}, {"supercategory", "shape"}});
  }
  nlohmann::json root = {{"info", {{"description", "trainer synthetic shapes"}}},
                         {"images", images},
                         {"annotations", annotations},
                         {"categories", categories}};
  core::write_file_atomically(out / "annotations" / ("instances_" + split + ".json"), root.dump());
}

}  // namespace

const std::vector<std::string>& synthetic_class_names() {
  static const std::vector<std::string> names = {"circle", "square", "triangle",
                                                 "cross",  "ring",   "diamond"};
  return names;
}

SyntheticSummary generate_synthetic_dataset(const std::filesystem::path& out_dir,
                                            const SyntheticOptions& options) {
  if (options.train_images < 1 || options.val_images < 1 || options.image_size < 32 ||
      options.min_object_size < 4 || options.max_object_size < options.min_object_size ||
      options.max_object_size > options.image_size) {
    throw core::ConfigError("synthetic dataset: invalid sizes or counts");
  }
  SyntheticSummary summary;
  Rng train_rng(options.seed * 2 + 1);
  Rng val_rng(options.seed * 2 + 2);
  write_split(out_dir, "train", options.train_images, 0, options, train_rng, summary);
  write_split(out_dir, "val", options.val_images, options.train_images, options, val_rng, summary);
  std::string yaml = "# Generated by `trainer synth`: drawn shapes on textured backgrounds.\n";
  yaml += "path: .\ntrain: images/train\nval: images/val\n";
  yaml +=
      "train_json: annotations/instances_train.json\nval_json: annotations/instances_val.json\n";
  yaml += "names:\n";
  const auto& names = synthetic_class_names();
  for (size_t c = 0; c < names.size(); ++c) yaml += fmt::format("  {}: {}\n", c, names[c]);
  summary.dataset_yaml = out_dir / "synthetic.yaml";
  core::write_file_atomically(summary.dataset_yaml, yaml);
  return summary;
}

}  // namespace trainer::demo
