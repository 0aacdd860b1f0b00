// See synthetic_pose_dataset.h.
// Tested by tests/demo/test_synthetic_datasets.cpp: deterministic; kpt_shape/flip_idx, keypoints
//   inside boxes, left limbs on the right.
#include "demo/synthetic_pose_dataset.h"

#include <fmt/format.h>

#include <opencv2/imgproc.hpp>

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/atomic_file.h"
#include "core/error.h"
#include "data/image_codec.h"
#include "demo/synthetic_canvas.h"

namespace trainer::demo {
namespace {

enum Point { kHead, kNeck, kLeftHand, kRightHand, kHip, kLeftFoot, kRightFoot };

struct Figure {
  std::array<cv::Point2d, kPoseKeypoints> points;
  std::array<int, kPoseKeypoints> visibility{};
  double thickness = 1;
  double head_radius = 1;
  cv::Rect2d box;  // tight box around the drawn figure, in pixels
};

// A figure of height `h` whose neck is at `neck`: arms and legs at random angles, the left limbs
// always on the image's right of the body line and the right limbs on its left.
Figure make_figure(cv::Point2d neck, double h, Rng& rng) {
  Figure f;
  f.thickness = std::max(2.0, h / 14);
  f.head_radius = h / 9;
  const double torso = h * 0.38, arm = h * 0.3, leg = h * 0.42;
  const double lean = rng.uniform(-0.25, 0.25);  // radians from vertical
  f.points[kNeck] = neck;
  f.points[kHead] = neck + cv::Point2d(std::sin(lean), -std::cos(lean)) * (f.head_radius * 1.3);
  f.points[kHip] = neck + cv::Point2d(-std::sin(lean), std::cos(lean)) * torso;
  const auto limb = [&](cv::Point2d from, double length, double lo, double hi, double side) {
    const double a = rng.uniform(lo, hi);  // angle from straight down, towards `side`
    return from + cv::Point2d(side * std::sin(a), std::cos(a)) * length;
  };
  f.points[kLeftHand] = limb(neck, arm, 0.3, 2.4, +1);
  f.points[kRightHand] = limb(neck, arm, 0.3, 2.4, -1);
  f.points[kLeftFoot] = limb(f.points[kHip], leg, 0.1, 0.6, +1);
  f.points[kRightFoot] = limb(f.points[kHip], leg, 0.1, 0.6, -1);
  f.visibility.fill(2);
  double x0 = 1e9, y0 = 1e9, x1 = -1e9, y1 = -1e9;
  for (int k = 0; k < kPoseKeypoints; ++k) {
    const double pad = k == kHead ? f.head_radius : f.thickness / 2;
    x0 = std::min(x0, f.points[k].x - pad), x1 = std::max(x1, f.points[k].x + pad);
    y0 = std::min(y0, f.points[k].y - pad), y1 = std::max(y1, f.points[k].y + pad);
  }
  f.box = cv::Rect2d(x0, y0, x1 - x0, y1 - y0);
  return f;
}

void draw_figure(cv::Mat& image, const Figure& f, const cv::Scalar& colour) {
  const auto p = [&](int k) {
    return cv::Point(static_cast<int>(std::lround(f.points[k].x)),
                     static_cast<int>(std::lround(f.points[k].y)));
  };
  const int thickness = static_cast<int>(std::lround(f.thickness));
  for (const auto& bone : pose_skeleton()) {
    cv::line(image, p(bone[0]), p(bone[1]), colour, thickness, cv::LINE_AA);
  }
  cv::circle(image, p(kHead), static_cast<int>(std::lround(f.head_radius)), colour, cv::FILLED,
             cv::LINE_AA);
}

// One image's figures (drawn on `image`) and their label text.
std::string draw_figures(cv::Mat& image, const SyntheticOptions& options, Rng& rng, int* objects) {
  const double size = options.image_size;
  std::vector<Figure> figures;
  const int wanted = rng.integer(1, std::max(1, options.max_objects));
  for (int n = 0; n < wanted; ++n) {
    const double h = rng.uniform(options.min_object_size, options.max_object_size);
    // The neck leaves room for the whole figure inside the image.
    const cv::Point2d neck(rng.uniform(h * 0.45, size - h * 0.45),
                           rng.uniform(h * 0.3, size - h * 0.85));
    Figure figure = make_figure(neck, h, rng);
    if ((figure.box & cv::Rect2d(0, 0, size, size)).area() < figure.box.area() * 0.999) continue;
    // Points of earlier figures under this one's box become "labelled, not visible".
    for (auto& earlier : figures) {
      for (int k = 0; k < kPoseKeypoints; ++k) {
        if (figure.box.contains(earlier.points[k])) earlier.visibility[k] = 1;
      }
    }
    draw_figure(image, figure, rng.colour());
    figures.push_back(figure);
  }
  std::string labels;
  for (const Figure& f : figures) {
    labels +=
        fmt::format("0 {:.6f} {:.6f} {:.6f} {:.6f}", (f.box.x + f.box.width / 2) / size,
                    (f.box.y + f.box.height / 2) / size, f.box.width / size, f.box.height / size);
    for (int k = 0; k < kPoseKeypoints; ++k) {
      labels += fmt::format(" {:.6f} {:.6f} {}", f.points[k].x / size, f.points[k].y / size,
                            f.visibility[k]);
    }
    labels += "\n";
    ++*objects;
  }
  return labels;
}

}  // namespace

const std::array<const char*, kPoseKeypoints>& pose_keypoint_names() {
  static const std::array<const char*, kPoseKeypoints> names = {
      "head", "neck", "left_hand", "right_hand", "hip", "left_foot", "right_foot"};
  return names;
}

const std::array<int, kPoseKeypoints>& pose_flip_idx() {
  static const std::array<int, kPoseKeypoints> flip = {0, 1, 3, 2, 4, 6, 5};
  return flip;
}

const std::array<std::array<int, 2>, 6>& pose_skeleton() {
  static const std::array<std::array<int, 2>, 6> bones = {{{kHead, kNeck},
                                                           {kNeck, kLeftHand},
                                                           {kNeck, kRightHand},
                                                           {kNeck, kHip},
                                                           {kHip, kLeftFoot},
                                                           {kHip, kRightFoot}}};
  return bones;
}

SyntheticSummary generate_synthetic_pose_dataset(const std::filesystem::path& out_dir,
                                                 const SyntheticOptions& options) {
  if (options.train_images < 1 || options.val_images < 1 || options.image_size < 32 ||
      options.min_object_size < 16 || options.max_object_size < options.min_object_size ||
      options.max_object_size > options.image_size * 9 / 10) {
    throw core::ConfigError(
        "synthetic pose dataset: invalid sizes or counts (figures 16 px to 90% of the image)");
  }
  SyntheticSummary summary =
      write_yolo_splits(out_dir, options, 101, [&](cv::Mat& image, Rng& rng, int* objects) {
        return draw_figures(image, options, rng, objects);
      });
  std::string yaml = "# Generated by `trainer synth --task pose`: stick figures, 7 keypoints.\n";
  yaml += "path: .\ntrain: images/train\nval: images/val\n";
  yaml += fmt::format("kpt_shape: [{}, 3]\nflip_idx: [{}]\n", kPoseKeypoints,
                      fmt::join(pose_flip_idx(), ", "));
  yaml += fmt::format("kpt_names:\n  0: [{}]\n", fmt::join(pose_keypoint_names(), ", "));
  yaml += "names:\n  0: figure\n";
  summary.dataset_yaml = out_dir / "pose.yaml";
  core::write_file_atomically(summary.dataset_yaml, yaml);
  return summary;
}

}  // namespace trainer::demo
