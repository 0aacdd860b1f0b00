// Reading an image as 3-channel BGR and resizing it for training (the reference's load_image).
//
// Why: grayscale and 4-channel files must become 3-channel before any augmentation, and the
// long-side resize rule decides the geometry that labels and the evaluator rely on:
// r = imgsz / max(h0, w0); if r != 1 the size becomes min(ceil(w0 r), imgsz) x min(ceil(h0 r),
// imgsz) with INTER_LINEAR (the reference uses INTER_AREA nowhere in this path).
#pragma once

#include <opencv2/core.hpp>

#include <cstdint>
#include <filesystem>
#include <vector>

namespace trainer::data {

// Decodes `file` to HxWx3 uint8 BGR (gray -> 3 channels, alpha dropped, 16-bit scaled to 8).
// Throws core::InputError naming the file when it cannot be decoded. The decode holds its
// reservation of the process's decode budget (data/decode_budget.h) while it runs.
cv::Mat read_image_bgr(const std::filesystem::path& file);

// The same for a file's bytes already in memory; `file` names it in the error.
cv::Mat decode_image_bgr_or_throw(const std::vector<uint8_t>& bytes,
                                  const std::filesystem::path& file);

// read_image_bgr + resize_long_side (decode_image_bgr_or_throw + resize_long_side), the
// reservation held until the full-size image is resized: what the loader and the caches use.
cv::Mat read_resized_bgr(const std::filesystem::path& file, int imgsz);
cv::Mat decode_resized_bgr_or_throw(const std::vector<uint8_t>& bytes,
                                    const std::filesystem::path& file, int imgsz);

// The resized size for an h0 x w0 image at `imgsz` (width, height).
cv::Size long_side_size(int height, int width, int imgsz);

// Resizes to long_side_size (returns `image` itself when the size does not change).
cv::Mat resize_long_side(const cv::Mat& image, int imgsz);

}  // namespace trainer::data
