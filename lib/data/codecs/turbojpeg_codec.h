// JPEG and PNG without OpenCV's imgcodecs: TurboJPEG for JPEG, libpng for PNG.
//
// Why: the GPU machines' light bundle (scripts/make_gpu_bundle.sh) carries libjpeg-turbo and
// libpng but not imgcodecs and its dozen format libraries. Decoding reproduces cv::imread with
// IMREAD_COLOR pixel for pixel (tests/data/test_image_codecs.cpp checks it against cv::imdecode):
// JPEG (CMYK and YCCK included) with the same accurate integer DCT and fancy upsampling straight
// into BGR, then the EXIF orientation; PNG with OpenCV's libpng transforms (palette and low-bit
// gray expanded, 16-bit reduced to the high byte, alpha and tRNS dropped, gray replicated, RGB
// swapped to BGR).
#pragma once

#include <opencv2/core.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace trainer::data::codecs {

// HxWx3 uint8 BGR, or an empty Mat with `error` set (also for more than kMaxImagePixels).
cv::Mat decode_jpeg_bgr(const uint8_t* data, size_t size, std::string* error);
cv::Mat decode_png_bgr(const uint8_t* data, size_t size, std::string* error);

// 8-bit gray or BGR images (PNG also BGRA). Empty result with `error` set on failure.
std::vector<uint8_t> encode_jpeg(const cv::Mat& image, int quality, std::string* error);
std::vector<uint8_t> encode_png(const cv::Mat& image, std::string* error);

}  // namespace trainer::data::codecs
