// The EXIF orientation of a JPEG and the pixel transform that undoes it.
//
// Why: cv::imread turns a photo the way its camera says (EXIF tag 0x0112) before anything else
// sees it, and the reference's labels and sizes assume the turned image. The TurboJPEG decoder
// must do the same to give the same pixels; this is the one place that reads the tag.
#pragma once

#include <opencv2/core.hpp>

#include <cstddef>
#include <cstdint>

namespace trainer::data::codecs {

// The orientation (1..8) in a JPEG's APP1 Exif segment; 1 when absent, malformed or out of range.
int jpeg_exif_orientation(const uint8_t* data, size_t size);

// The orientation in one APP1 segment's payload (what follows its length field); 1 when it is
// not an Exif segment or holds no valid orientation. For readers that walk the segments
// themselves (the dataset's header scan) and so never load the rest of the file.
int exif_app1_orientation(const uint8_t* payload, size_t size);

// Applies orientation `o` the way OpenCV's imread does (2 mirror, 3 rotate 180, 4 flip, 5
// transpose, 6 rotate 90 clockwise, 7 transverse, 8 rotate 90 counter-clockwise).
cv::Mat apply_exif_orientation(const cv::Mat& image, int orientation);

}  // namespace trainer::data::codecs
