// See draw.h.
// Tested by tests/predict/test_predict_output.cpp: indirect: annotate draws box, tinted mask,
//   rotated polygon (non-zero pixels); keypoint dots via plot_batch in test_augment_keypoints.
#include "data/draw.h"

#include <opencv2/imgproc.hpp>

#include <algorithm>

namespace trainer::data {
namespace {

// COCO's 17-point skeleton (0-based pairs).
constexpr int kCocoSkeleton[][2] = {
    {15, 13}, {13, 11}, {16, 14}, {14, 12}, {11, 12}, {5, 11}, {6, 12}, {5, 6}, {5, 7}, {6, 8},
    {7, 9},   {8, 10},  {1, 2},   {0, 1},   {0, 2},   {1, 3},  {2, 4},  {3, 5}, {4, 6}};

}  // namespace

cv::Scalar class_colour(int c) {
  static const char* kHex[] = {"042AFF", "0BDBEB", "F3F3F3", "00DFB7", "111F68", "FF6FDD", "FF444F",
                               "CCED00", "00F344", "BD00FF", "00B4FF", "DD00BA", "00FFFF", "26C000",
                               "01FFB3", "7D24FF", "7B0068", "FF1B6C", "FC6D2F", "A2FF0B"};
  const std::string hex = kHex[((c % 20) + 20) % 20];
  const int r = std::stoi(hex.substr(0, 2), nullptr, 16);
  const int g = std::stoi(hex.substr(2, 2), nullptr, 16);
  const int b = std::stoi(hex.substr(4, 2), nullptr, 16);
  return cv::Scalar(b, g, r);
}

void draw_labelled_box(cv::Mat& canvas, cv::Point p1, cv::Point p2, const std::string& label,
                       const cv::Scalar& colour, int thickness, double font_scale, int top_limit) {
  cv::rectangle(canvas, p1, p2, colour, thickness, cv::LINE_AA);
  draw_label_tab(canvas, p1, label, colour, thickness, font_scale, top_limit);
}

void draw_labelled_polygon(cv::Mat& canvas, const std::vector<cv::Point>& corners,
                           const std::string& label, const cv::Scalar& colour, int thickness,
                           double font_scale, int top_limit) {
  if (corners.empty()) return;
  cv::polylines(canvas, corners, /*isClosed=*/true, colour, thickness, cv::LINE_AA);
  const auto top =
      *std::min_element(corners.begin(), corners.end(),
                        [](const cv::Point& a, const cv::Point& b) { return a.y < b.y; });
  draw_label_tab(canvas, top, label, colour, thickness, font_scale, top_limit);
}

void draw_label_tab(cv::Mat& canvas, cv::Point p1, const std::string& label,
                    const cv::Scalar& colour, int thickness, double font_scale, int top_limit) {
  const int text_thickness = std::max(thickness - 1, 1);
  int baseline = 0;
  const cv::Size text =
      cv::getTextSize(label, cv::FONT_HERSHEY_SIMPLEX, font_scale, text_thickness, &baseline);
  const cv::Point t1(p1.x, std::max(top_limit, p1.y - text.height - 4));
  cv::rectangle(canvas, t1, cv::Point(t1.x + text.width + 2, t1.y + text.height + 4), colour,
                cv::FILLED);
  cv::putText(canvas, label, cv::Point(t1.x + 1, t1.y + text.height + 1), cv::FONT_HERSHEY_SIMPLEX,
              font_scale, cv::Scalar(255, 255, 255), text_thickness, cv::LINE_AA);
}

void draw_keypoints(cv::Mat& canvas, const float* points, int count, cv::Point origin,
                    double scale_x, double scale_y, int radius, float min_visibility,
                    int thickness) {
  const auto at = [&](int k) {
    return cv::Point(origin.x + static_cast<int>(points[3 * k] * scale_x),
                     origin.y + static_cast<int>(points[3 * k + 1] * scale_y));
  };
  const auto visible = [&](int k) { return points[3 * k + 2] > min_visibility; };
  if (count == 17) {
    for (const auto& bone : kCocoSkeleton) {
      if (visible(bone[0]) && visible(bone[1])) {
        cv::line(canvas, at(bone[0]), at(bone[1]), class_colour(bone[0] + 3), thickness,
                 cv::LINE_AA);
      }
    }
  }
  for (int k = 0; k < count; ++k) {
    if (visible(k)) cv::circle(canvas, at(k), radius, class_colour(k + 3), cv::FILLED, cv::LINE_AA);
  }
}

void draw_mask(cv::Mat region, const cv::Mat& mask, const cv::Scalar& colour, double alpha) {
  cv::Mat fitted;
  cv::resize(mask, fitted, region.size(), 0, 0, cv::INTER_NEAREST);
  cv::Mat tinted(region.size(), region.type(), colour);
  cv::Mat blended;
  cv::addWeighted(region, 1.0 - alpha, tinted, alpha, 0.0, blended);
  blended.copyTo(region, fitted);
}

}  // namespace trainer::data
