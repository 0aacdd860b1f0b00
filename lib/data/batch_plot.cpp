// Batch tiling and box drawing; see batch_plot.h.
#include "data/batch_plot.h"

#include "data/image_codec.h"

#include <opencv2/imgproc.hpp>

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace trainer::data {
namespace {

cv::Scalar class_colour(int c) {
  // The reference's palette (Ultralytics Colors), as BGR.
  static const char* kHex[] = {"042AFF", "0BDBEB", "F3F3F3", "00DFB7", "111F68", "FF6FDD", "FF444F",
                               "CCED00", "00F344", "BD00FF", "00B4FF", "DD00BA", "00FFFF", "26C000",
                               "01FFB3", "7D24FF", "7B0068", "FF1B6C", "FC6D2F", "A2FF0B"};
  const std::string hex = kHex[c % 20];
  const int r = std::stoi(hex.substr(0, 2), nullptr, 16);
  const int g = std::stoi(hex.substr(2, 2), nullptr, 16);
  const int b = std::stoi(hex.substr(4, 2), nullptr, 16);
  return cv::Scalar(b, g, r);
}

// COCO's 17-point skeleton (0-based pairs): drawn when a dataset has 17 keypoints.
constexpr int kCocoSkeleton[][2] = {
    {15, 13}, {13, 11}, {16, 14}, {14, 12}, {11, 12}, {5, 11}, {6, 12}, {5, 6}, {5, 7}, {6, 8},
    {7, 9},   {8, 10},  {1, 2},   {0, 1},   {0, 2},   {1, 3},  {2, 4},  {3, 5}, {4, 6}};

// The visible keypoints of one label row as dots (coloured by point index), joined by the COCO
// skeleton when there are 17; invisible points (v = 0) are not drawn.
void draw_keypoints(cv::Mat& canvas, const float* points, int count, cv::Point origin, int tw,
                    int th) {
  const auto at = [&](int k) {
    return cv::Point(origin.x + static_cast<int>(points[3 * k] * tw),
                     origin.y + static_cast<int>(points[3 * k + 1] * th));
  };
  const auto visible = [&](int k) { return points[3 * k + 2] > 0.0f; };
  const int radius = std::max(2, std::min(tw, th) / 160);
  if (count == 17) {
    for (const auto& bone : kCocoSkeleton) {
      if (visible(bone[0]) && visible(bone[1])) {
        cv::line(canvas, at(bone[0]), at(bone[1]), class_colour(bone[0] + 3), 1, cv::LINE_AA);
      }
    }
  }
  for (int k = 0; k < count; ++k) {
    if (visible(k)) cv::circle(canvas, at(k), radius, class_colour(k + 3), cv::FILLED, cv::LINE_AA);
  }
}

}  // namespace

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
    for (int64_t r = 0; r < labels.size(0); ++r) {
      if (static_cast<int>(rows[r][0]) != i) continue;
      const int cls = static_cast<int>(rows[r][1]);
      const double cx = rows[r][2] * tw, cy = rows[r][3] * th;
      const double bw = rows[r][4] * tw, bh = rows[r][5] * th;
      const cv::Point p1(x0 + static_cast<int>(cx - bw / 2), y0 + static_cast<int>(cy - bh / 2));
      const cv::Point p2(x0 + static_cast<int>(cx + bw / 2), y0 + static_cast<int>(cy + bh / 2));
      const cv::Scalar colour = class_colour(cls);
      cv::rectangle(canvas, p1, p2, colour, 2, cv::LINE_AA);
      const std::string label =
          cls >= 0 && cls < static_cast<int>(names.size()) ? names[cls] : std::to_string(cls);
      int baseline = 0;
      const cv::Size text = cv::getTextSize(label, cv::FONT_HERSHEY_SIMPLEX, font, 1, &baseline);
      const cv::Point t1(p1.x, std::max(y0, p1.y - text.height - 4));
      cv::rectangle(canvas, t1, cv::Point(t1.x + text.width + 2, t1.y + text.height + 4), colour,
                    cv::FILLED);
      cv::putText(canvas, label, cv::Point(t1.x + 1, t1.y + text.height + 1),
                  cv::FONT_HERSHEY_SIMPLEX, font, cv::Scalar(255, 255, 255), 1, cv::LINE_AA);
      if (has_keypoints) {
        draw_keypoints(canvas, keypoints[r].data_ptr<float>(), static_cast<int>(keypoints.size(1)),
                       cv::Point(x0, y0), tw, th);
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
