// What `trainer predict` writes for one image: the annotated picture, the YOLO txt rows, the
// console summary and the COCO results entries, all in the reference predictor's formats.
//
// Why apart from the predictor: these are pure functions of one image's predictions, tested by
// hand, and the place a new task (masks, rotated boxes) adds its drawing and its txt columns.
#pragma once

#include <opencv2/core.hpp>

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "eval/coco_results.h"
#include "predict/predictor.h"

namespace trainer::predict {

// The reference's line width: line_width, else max(round((h + w + 3) / 2 * 0.003), 2).
// A mask's outline in its pixels, x1 y1 x2 y2 ...: its external contours (OpenCV, simple chain)
// joined into one as the reference's masks2segments does; empty when the mask is empty.
std::vector<double> mask_outline(const cv::Mat& mask);

int annotation_line_width(int height, int width, int line_width);

// `image` (BGR) with each box, its label "name 0.87" and, for pose, its keypoints (confidence >
// 0.5) joined by the skeleton.
cv::Mat annotate(const cv::Mat& image, const ImagePrediction& prediction,
                 const std::vector<std::string>& names, int line_width);

// The reference's Results.verbose(): "2 persons, 1 bus, " (classes in id order, plural with 's'),
// "(no detections), " for none.
std::string summary(const ImagePrediction& prediction, const std::vector<std::string>& names);

// The reference's Results.save_txt rows, one per object: "class xc yc w h" normalised by the
// original image, then pose's K x (x y conf) normalised, then the score when `save_conf`, each
// number as %g. Empty when there is nothing to write.
std::string yolo_txt(const ImagePrediction& prediction, int height, int width, bool save_conf);

// COCO results entries (bbox x, y, w, h in original pixels, keypoints for pose) with `image_id`
// and category ids from `category_ids` (per class).
std::vector<eval::Detection> coco_detections(const ImagePrediction& prediction, int64_t image_id,
                                             const std::vector<int64_t>& category_ids);

// The reference's image_id: the file stem when it is a number, else `fallback`.
int64_t image_id_for(const std::filesystem::path& file, int64_t fallback);

}  // namespace trainer::predict
