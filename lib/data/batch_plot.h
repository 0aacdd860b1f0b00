// Drawing a batch as one tiled image with its boxes and class names (train_batch0.jpg ...).
//
// Why: looking at augmented batches is the fastest way to catch a label or augmentation bug; the
// reference writes the first batches of a run as images. Up to 16 images on a square grid, scaled
// so the tile is at most 1920 px, each with its file name, boxes coloured by class and labelled,
// and for pose data the visible keypoints (joined by the skeleton for COCO's 17 points).
#pragma once

#include <opencv2/core.hpp>

#include <filesystem>
#include <string>
#include <vector>

#include "data/batch.h"

namespace trainer::data {

// BGR image of the tiled batch.
cv::Mat plot_batch(const Batch& batch, const std::vector<std::string>& names, int max_images = 16,
                   int max_size = 1920);

// plot_batch then writes a JPEG; throws std::runtime_error naming the file on failure.
void save_batch_plot(const Batch& batch, const std::vector<std::string>& names,
                     const std::filesystem::path& file);

}  // namespace trainer::data
