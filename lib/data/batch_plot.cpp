// Batch tiling and box drawing; see batch_plot.h.
// Tested by tests/data/test_loader.cpp: plot_batch grid tiles and save_batch_plot JPEG
//   (keypoint/OBB/mask drawing in other data tests).
#include "data/batch_plot.h"

#include "data/draw.h"
#include "data/image_codec.h"
#include "geometry/rotated_box.h"

#include <opencv2/imgproc.hpp>

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace trainer::data {

cv::Mat plot_batch(const Batch& batch, const std::vector<std::string>& names, int max_images,
                   int max_size) {
  const torch::Tensor images = batch.images.permute({0, 2, 3, 1}).contiguous();  // B, H, W, 3 RGB
  const int count = static_cast<int>(std::min<int64_t>(images.size(0), max_images));
  const int h = static_cast<int>(images.size(1)), w = static_cast<int>(images.size(2));
  const int grid = static_cast<int>(std::ceil(std::sqrt(static_cast<double>(count))));
  const double scale = std::min(1.0, max_size / static_cast<double>(grid * std::max(h, w)));
  const int th = static_cast<int>(std::ceil(h * scale)),
            tw = static_cast<int>(std::ceil(w * scale));
  cv::Mat canvas(grid * th, grid * tw, CV_8UC3, cv::Scalar(255, 255, 255));
  const torch::Tensor labels = batch.labels.contiguous();
  const auto rows = labels.accessor<float, 2>();
  const bool has_keypoints = batch.keypoints.defined() && batch.keypoints.dim() == 3 &&
                             batch.keypoints.size(1) > 0 &&
                             batch.keypoints.size(0) == labels.size(0);
  const torch::Tensor keypoints = has_keypoints ? batch.keypoints.contiguous() : torch::Tensor();
  // OBB batches: each row's rotated box is drawn instead of its axis-aligned box.
  const bool rotated = batch.rboxes.defined() && batch.rboxes.dim() == 2 &&
                       batch.rboxes.size(0) == labels.size(0) && labels.size(0) > 0;
  const torch::Tensor rboxes = rotated ? batch.rboxes.contiguous() : torch::Tensor();
  // Segmentation batches: each row's mask tinted in its class colour under the boxes.
  const bool masked = batch.masks.defined() && batch.masks.dim() == 3 && batch.masks.numel() > 0;
  const torch::Tensor masks = masked ? batch.masks.contiguous() : torch::Tensor();
  const double font = std::max(0.35, std::min(th, tw) / 640.0 * 0.6);
  for (int i = 0; i < count; ++i) {
    const int x0 = (i % grid) * tw, y0 = (i / grid) * th;
    cv::Mat rgb(h, w, CV_8UC3, images[i].data_ptr<uint8_t>());
    cv::Mat bgr, tile;
    cv::cvtColor(rgb, bgr, cv::COLOR_RGB2BGR);
    cv::resize(bgr, tile, cv::Size(tw, th), 0, 0, cv::INTER_AREA);
    tile.copyTo(canvas(cv::Rect(x0, y0, tw, th)));
    cv::rectangle(canvas, cv::Rect(x0, y0, tw, th), cv::Scalar(255, 255, 255), 2);
    if (i < static_cast<int>(batch.files.size())) {
      const std::string name = std::filesystem::path(batch.files[i]).filename().string();
      cv::putText(canvas, name.substr(0, 40), cv::Point(x0 + 5, y0 + 15), cv::FONT_HERSHEY_SIMPLEX,
                  font, cv::Scalar(220, 220, 220), 1, cv::LINE_AA);
    }
    for (int64_t r = 0, j = 0; masked && r < labels.size(0); ++r) {
      if (static_cast<int>(rows[r][0]) != i) continue;
      cv::Mat mask;  // row r (the image's j-th) as a 0/1 CV_8U image
      if (batch.overlap_masks) {
        const torch::Tensor index = masks[i].to(torch::kInt32).contiguous();
        mask = cv::Mat(static_cast<int>(index.size(0)), static_cast<int>(index.size(1)), CV_32S,
                       index.data_ptr<int32_t>()) == static_cast<int>(++j);
      } else {
        const torch::Tensor one = masks[r].to(torch::kUInt8).contiguous();
        mask = cv::Mat(static_cast<int>(one.size(0)), static_cast<int>(one.size(1)), CV_8U,
                       one.data_ptr<uint8_t>())
                   .clone();
      }
      draw_mask(canvas(cv::Rect(x0, y0, tw, th)), mask, class_colour(static_cast<int>(rows[r][1])));
    }
    for (int64_t r = 0; r < labels.size(0); ++r) {
      if (static_cast<int>(rows[r][0]) != i) continue;
      const int cls = static_cast<int>(rows[r][1]);
      const double cx = rows[r][2] * tw, cy = rows[r][3] * th;
      const double bw = rows[r][4] * tw, bh = rows[r][5] * th;
      const cv::Point p1(x0 + static_cast<int>(cx - bw / 2), y0 + static_cast<int>(cy - bh / 2));
      const cv::Point p2(x0 + static_cast<int>(cx + bw / 2), y0 + static_cast<int>(cy + bh / 2));
      const std::string label =
          cls >= 0 && cls < static_cast<int>(names.size()) ? names[cls] : std::to_string(cls);
      if (rotated) {
        const float* q = rboxes[r].data_ptr<float>();
        std::vector<cv::Point> corners;
        for (const auto& c :
             geometry::corners({q[0] * tw, q[1] * th, q[2] * tw, q[3] * th, q[4]})) {
          corners.emplace_back(x0 + static_cast<int>(std::lround(c.x)),
                               y0 + static_cast<int>(std::lround(c.y)));
        }
        draw_labelled_polygon(canvas, corners, label, class_colour(cls), 2, font, y0);
      } else {
        draw_labelled_box(canvas, p1, p2, label, class_colour(cls), 2, font, y0);
      }
      if (has_keypoints) {
        draw_keypoints(canvas, keypoints[r].data_ptr<float>(), static_cast<int>(keypoints.size(1)),
                       cv::Point(x0, y0), tw, th, std::max(2, std::min(tw, th) / 160));
      }
    }
  }
  return canvas;
}

void save_batch_plot(const Batch& batch, const std::vector<std::string>& names,
                     const std::filesystem::path& file) {
  const cv::Mat canvas = plot_batch(batch, names);
  write_image(file, canvas, 90);
}

}  // namespace trainer::data
