// See synthetic_canvas.h.
// Tested by tests/demo/test_synthetic_datasets.cpp: write_yolo_splits/textured_background via pose
//   and OBB generators: deterministic bytes, split image counts, yaml written.
#include "demo/synthetic_canvas.h"

#include <fmt/format.h>

#include <opencv2/imgproc.hpp>

#include "core/atomic_file.h"
#include "data/image_codec.h"

namespace trainer::demo {

cv::Mat textured_background(int size, Rng& rng) {
  cv::Mat small(4, 4, CV_8UC3);
  for (int y = 0; y < 4; ++y) {
    for (int x = 0; x < 4; ++x) {
      small.at<cv::Vec3b>(y, x) = cv::Vec3b(static_cast<uchar>(rng.integer(40, 215)),
                                            static_cast<uchar>(rng.integer(40, 215)),
                                            static_cast<uchar>(rng.integer(40, 215)));
    }
  }
  cv::Mat image;
  cv::resize(small, image, cv::Size(size, size), 0, 0, cv::INTER_CUBIC);
  const int stripes = rng.integer(0, 6);
  for (int i = 0; i < stripes; ++i) {
    cv::Point a(rng.integer(0, size), rng.integer(0, size));
    cv::Point b(rng.integer(0, size), rng.integer(0, size));
    cv::line(image, a, b, rng.colour(), rng.integer(1, 3), cv::LINE_AA);
  }
  cv::Mat noise(size, size, CV_8UC3);
  for (int y = 0; y < size; ++y) {
    auto* row = noise.ptr<cv::Vec3b>(y);
    for (int x = 0; x < size; ++x) {
      const auto n = static_cast<uchar>(rng.integer(0, 24));
      row[x] = cv::Vec3b(n, n, n);
    }
  }
  cv::add(image, noise, image);
  return image;
}

SyntheticSummary write_yolo_splits(const std::filesystem::path& out,
                                   const SyntheticOptions& options, uint64_t stream_base,
                                   const DrawObjects& draw) {
  SyntheticSummary summary;
  const auto split = [&](const std::string& name, int count, int first_id, Rng& rng) {
    std::filesystem::create_directories(out / "images" / name);
    std::filesystem::create_directories(out / "labels" / name);
    for (int i = 0; i < count; ++i) {
      const std::string stem = fmt::format("{:06d}", first_id + i);
      cv::Mat image = textured_background(options.image_size, rng);
      const std::string labels = draw(image, rng, &summary.objects);
      data::write_image(out / "images" / name / (stem + ".jpg"), image, 92);
      core::write_file_atomically(out / "labels" / name / (stem + ".txt"), labels);
      ++summary.images;
    }
  };
  Rng train_rng(options.seed * 2 + stream_base);
  Rng val_rng(options.seed * 2 + stream_base + 1);
  split("train", options.train_images, 0, train_rng);
  split("val", options.val_images, options.train_images, val_rng);
  return summary;
}

}  // namespace trainer::demo
