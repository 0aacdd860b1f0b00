// Drawing labelled boxes and keypoints on BGR images.
//
// Why: the training-batch previews (batch_plot.h) and `trainer predict`'s annotated images show
// the same things the same way: the reference's class palette, a filled label tab on each box,
// and keypoints as dots joined by COCO's skeleton when there are 17.
#pragma once

#include <opencv2/core.hpp>

#include <string>
#include <vector>

namespace trainer::data {

// The reference's palette (Ultralytics Colors) for class `c`, as BGR.
cv::Scalar class_colour(int c);

// A box from p1 to p2 with `label` on a filled tab above it (kept below `top_limit`).
void draw_labelled_box(cv::Mat& canvas, cv::Point p1, cv::Point p2, const std::string& label,
                       const cv::Scalar& colour, int thickness, double font_scale,
                       int top_limit = 0);

// `label` on a filled tab whose bottom-left is at p1 (kept below `top_limit`).
void draw_label_tab(cv::Mat& canvas, cv::Point p1, const std::string& label,
                    const cv::Scalar& colour, int thickness, double font_scale, int top_limit = 0);

// A rotated box through its 4 `corners` (in order) with `label` on a tab above its top corner.
void draw_labelled_polygon(cv::Mat& canvas, const std::vector<cv::Point>& corners,
                           const std::string& label, const cv::Scalar& colour, int thickness,
                           double font_scale, int top_limit = 0);

// `count` keypoints (x, y, v) at `points`, placed at origin + (x scale_x, y scale_y); drawn when
// v > min_visibility, joined by the COCO skeleton when count is 17.
// Tints the pixels of `region` where `mask` (CV_8U, any size: resized to the region, nearest) is
// non-zero with `colour` at `alpha` (instance masks in previews).
void draw_mask(cv::Mat region, const cv::Mat& mask, const cv::Scalar& colour, double alpha = 0.5);

void draw_keypoints(cv::Mat& canvas, const float* points, int count, cv::Point origin,
                    double scale_x, double scale_y, int radius, float min_visibility = 0.0f,
                    int thickness = 1);

}  // namespace trainer::data
