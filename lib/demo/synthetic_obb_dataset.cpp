// See synthetic_obb_dataset.h.
// Tested by tests/demo/test_synthetic_datasets.cpp: deterministic; DOTA rows of 9 values, long
//   rotated rectangles inside the image, class names.
#include "demo/synthetic_obb_dataset.h"

#include <fmt/format.h>

#include <opencv2/imgproc.hpp>

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/atomic_file.h"
#include "core/error.h"
#include "data/image_codec.h"
#include "demo/synthetic_canvas.h"
#include "geometry/rotated_box.h"

namespace trainer::demo {
namespace {

constexpr double kPi = 3.14159265358979323846;

cv::Point to_pixel(const geometry::Point& p) {
  // Fixed-point drawing (shift 4): sub-pixel corners, so the drawn shape matches its label.
  return cv::Point(static_cast<int>(std::lround(p.x * 16)),
                   static_cast<int>(std::lround(p.y * 16)));
}

// A point at (u, v) in the box's own frame (u along w, v along h, origin at the centre).
geometry::Point at(const geometry::RotatedBox& b, double u, double v) {
  const double c = std::cos(b.angle), s = std::sin(b.angle);
  return {b.cx + u * c - v * s, b.cy + u * s + v * c};
}

void draw_object(cv::Mat& image, const geometry::RotatedBox& b, int cls, const cv::Scalar& fill,
                 const cv::Scalar& stripe) {
  std::vector<cv::Point> outline;
  if (cls == 1) {  // capsule: an ellipse filling the box
    for (int k = 0; k < 72; ++k) {
      const double t = 2 * kPi * k / 72;
      outline.push_back(to_pixel(at(b, b.w / 2 * std::cos(t), b.h / 2 * std::sin(t))));
    }
  } else if (cls == 2) {  // arrow: the box with its +u end drawn to a point
    const double tip = b.w / 2 - std::min(b.h, b.w / 3);
    for (const auto& [u, v] : std::vector<std::pair<double, double>>{{-b.w / 2, -b.h / 2},
                                                                     {tip, -b.h / 2},
                                                                     {b.w / 2, 0},
                                                                     {tip, b.h / 2},
                                                                     {-b.w / 2, b.h / 2}}) {
      outline.push_back(to_pixel(at(b, u, v)));
    }
  } else {  // bar
    for (const auto& p : geometry::corners(b)) outline.push_back(to_pixel(p));
  }
  cv::fillPoly(image, std::vector<std::vector<cv::Point>>{outline}, fill, cv::LINE_AA, 4);
  // Stripes along the long side make the orientation visible inside the shape.
  const int stripes = 3;
  for (int k = 1; k <= stripes; ++k) {
    const double v = -b.h / 2 + b.h * k / (stripes + 1);
    cv::line(image, to_pixel(at(b, -b.w * 0.35, v)), to_pixel(at(b, b.w * 0.3, v)), stripe,
             std::max(1, static_cast<int>(b.h / 12)), cv::LINE_AA, 4);
  }
}

// One image's shapes (drawn on `image`) and their label text.
std::string draw_shapes(cv::Mat& image, const SyntheticOptions& options, Rng& rng, int* objects) {
  const double size = options.image_size;
  std::vector<geometry::RotatedBox> boxes;
  std::string labels;
  const int wanted = rng.integer(1, std::max(1, options.max_objects));
  for (int attempt = 0; attempt < wanted * 4 && static_cast<int>(boxes.size()) < wanted;
       ++attempt) {
    const int cls = rng.integer(0, 2);
    const double w = rng.uniform(options.min_object_size, options.max_object_size);
    const double h = std::max(6.0, w / rng.uniform(1.6, 4.0));
    const geometry::RotatedBox box{rng.uniform(0, size), rng.uniform(0, size), w, h,
                                   rng.uniform(-kPi, kPi)};
    const auto corners = geometry::corners(box);
    const bool inside = std::all_of(corners.begin(), corners.end(), [&](const auto& p) {
      return p.x >= 1 && p.y >= 1 && p.x <= size - 1 && p.y <= size - 1;
    });
    const bool apart = std::none_of(boxes.begin(), boxes.end(), [&](const auto& other) {
      return geometry::rotated_iou(box, other) > 0.05;
    });
    const cv::Scalar fill = rng.colour(), stripe = rng.colour();
    if (!inside || !apart) continue;
    draw_object(image, box, cls, fill, stripe);
    boxes.push_back(box);
    labels += std::to_string(cls);
    for (const auto& p : corners) labels += fmt::format(" {:.6f} {:.6f}", p.x / size, p.y / size);
    labels += "\n";
    ++*objects;
  }
  return labels;
}

}  // namespace

const std::vector<std::string>& obb_class_names() {
  static const std::vector<std::string> names = {"bar", "capsule", "arrow"};
  return names;
}

SyntheticSummary generate_synthetic_obb_dataset(const std::filesystem::path& out_dir,
                                                const SyntheticOptions& options) {
  if (options.train_images < 1 || options.val_images < 1 || options.image_size < 32 ||
      options.min_object_size < 12 || options.max_object_size < options.min_object_size ||
      options.max_object_size > options.image_size * 3 / 4) {
    throw core::ConfigError(
        "synthetic OBB dataset: invalid sizes or counts (long sides 12 px to 75% of the image)");
  }
  SyntheticSummary summary =
      write_yolo_splits(out_dir, options, 201, [&](cv::Mat& image, Rng& rng, int* objects) {
        return draw_shapes(image, options, rng, objects);
      });
  std::string yaml =
      "# Generated by `trainer synth --task obb`: rotated shapes, DOTA-style labels.\n";
  yaml += "path: .\ntrain: images/train\nval: images/val\nnames:\n";
  for (size_t c = 0; c < obb_class_names().size(); ++c) {
    yaml += fmt::format("  {}: {}\n", c, obb_class_names()[c]);
  }
  summary.dataset_yaml = out_dir / "obb.yaml";
  core::write_file_atomically(summary.dataset_yaml, yaml);
  return summary;
}

}  // namespace trainer::demo
