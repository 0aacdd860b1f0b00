// See results_plot.h.
// Tested by tests/engine/log/test_results_log.cpp: plot_results writes a results.png (>1000 bytes)
//   from resumed rows; plot content not checked.
#include "engine/log/results_plot.h"

#include "data/image_codec.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <opencv2/imgproc.hpp>

namespace trainer::engine {
namespace {

constexpr int kPanelWidth = 320;
constexpr int kPanelHeight = 220;
constexpr int kMargin = 36;

void draw_panel(cv::Mat& canvas, cv::Rect area, const std::string& title,
                const std::vector<double>& x, const std::vector<double>& y) {
  cv::rectangle(canvas, area, cv::Scalar(235, 235, 235), cv::FILLED);
  cv::putText(canvas, title, {area.x + 6, area.y + 18}, cv::FONT_HERSHEY_SIMPLEX, 0.45,
              cv::Scalar(20, 20, 20), 1, cv::LINE_AA);
  double lo = 1e300, hi = -1e300;
  for (double v : y) {
    if (std::isfinite(v)) {
      lo = std::min(lo, v);
      hi = std::max(hi, v);
    }
  }
  if (lo > hi) return;  // nothing finite to draw
  if (hi - lo < 1e-12) {
    hi += 0.5 * std::max(std::abs(hi), 1e-6);
    lo -= 0.5 * std::max(std::abs(lo), 1e-6);
  }
  const double x0 = x.front(), x1 = std::max(x.back(), x.front() + 1);
  const cv::Rect plot(area.x + kMargin, area.y + 26, area.width - kMargin - 10,
                      area.height - 26 - 22);
  cv::rectangle(canvas, plot, cv::Scalar(255, 255, 255), cv::FILLED);
  auto to_pixel = [&](double xv, double yv) {
    return cv::Point(plot.x + static_cast<int>((xv - x0) / (x1 - x0) * plot.width),
                     plot.y + plot.height - static_cast<int>((yv - lo) / (hi - lo) * plot.height));
  };
  for (size_t i = 1; i < y.size(); ++i) {
    if (std::isfinite(y[i - 1]) && std::isfinite(y[i])) {
      cv::line(canvas, to_pixel(x[i - 1], y[i - 1]), to_pixel(x[i], y[i]), cv::Scalar(180, 100, 30),
               2, cv::LINE_AA);
    }
  }
  for (size_t i = 0; i < y.size(); ++i) {
    if (std::isfinite(y[i]))
      cv::circle(canvas, to_pixel(x[i], y[i]), 3, cv::Scalar(180, 100, 30), -1);
  }
  const auto small = cv::FONT_HERSHEY_SIMPLEX;
  cv::putText(canvas, fmt::format("{:.4g}", hi), {area.x + 2, plot.y + 8}, small, 0.32,
              cv::Scalar(60, 60, 60), 1, cv::LINE_AA);
  cv::putText(canvas, fmt::format("{:.4g}", lo), {area.x + 2, plot.y + plot.height}, small, 0.32,
              cv::Scalar(60, 60, 60), 1, cv::LINE_AA);
  cv::putText(canvas, fmt::format("epoch {:.0f}..{:.0f}", x0, x.back()),
              {plot.x, plot.y + plot.height + 16}, small, 0.35, cv::Scalar(60, 60, 60), 1,
              cv::LINE_AA);
}

}  // namespace

bool plot_results(const std::vector<std::string>& columns,
                  const std::vector<std::vector<double>>& rows, const std::filesystem::path& png) {
  if (rows.empty() || columns.empty()) return false;
  std::vector<size_t> shown;
  for (size_t c = 0; c < columns.size(); ++c) {
    if (columns[c] != "epoch" && columns[c] != "time") shown.push_back(c);
  }
  const int per_row = 5;
  const int panel_rows = static_cast<int>((shown.size() + per_row - 1) / per_row);
  cv::Mat canvas(std::max(1, panel_rows) * kPanelHeight, per_row * kPanelWidth, CV_8UC3,
                 cv::Scalar(255, 255, 255));
  std::vector<double> x;
  for (const auto& row : rows) x.push_back(row[0]);
  for (size_t k = 0; k < shown.size(); ++k) {
    std::vector<double> y;
    for (const auto& row : rows) y.push_back(row[shown[k]]);
    const cv::Rect area(static_cast<int>(k % per_row) * kPanelWidth + 2,
                        static_cast<int>(k / per_row) * kPanelHeight + 2, kPanelWidth - 4,
                        kPanelHeight - 4);
    draw_panel(canvas, area, columns[shown[k]], x, y);
  }
  const std::filesystem::path tmp = png.string() + ".tmp.png";
  data::write_image(tmp, canvas);
  std::filesystem::rename(tmp, png);
  return true;
}

}  // namespace trainer::engine
