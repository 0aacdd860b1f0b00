// CMYK and YCCK JPEG files written with libjpeg for tests (TurboJPEG's encoder cannot write plain
// CMYK, OpenCV's cannot write either). Only with TRAINER_HAS_LIBJPEG (tests/data/CMakeLists.txt).
#pragma once

#include <opencv2/core.hpp>

#include <cstdint>
#include <cstdio>  // jpeglib.h needs FILE
#include <cstdlib>
#include <vector>

#include <jpeglib.h>

namespace trainer::test {

// A CMYK image stored as Adobe CMYK or YCCK (libjpeg writes the Adobe marker for both).
inline std::vector<uint8_t> encode_cmyk_jpeg(const cv::Mat& cmyk, J_COLOR_SPACE stored) {
  jpeg_compress_struct c{};
  jpeg_error_mgr err{};
  c.err = jpeg_std_error(&err);
  jpeg_create_compress(&c);
  unsigned char* buffer = nullptr;
  unsigned long size = 0;
  jpeg_mem_dest(&c, &buffer, &size);
  c.image_width = static_cast<JDIMENSION>(cmyk.cols);
  c.image_height = static_cast<JDIMENSION>(cmyk.rows);
  c.input_components = 4;
  c.in_color_space = JCS_CMYK;
  jpeg_set_defaults(&c);
  jpeg_set_colorspace(&c, stored);
  jpeg_set_quality(&c, 90, TRUE);
  jpeg_start_compress(&c, TRUE);
  while (c.next_scanline < c.image_height) {
    JSAMPROW row = const_cast<JSAMPROW>(cmyk.ptr<uint8_t>(static_cast<int>(c.next_scanline)));
    jpeg_write_scanlines(&c, &row, 1);
  }
  jpeg_finish_compress(&c);
  jpeg_destroy_compress(&c);
  std::vector<uint8_t> out(buffer, buffer + size);
  std::free(buffer);
  return out;
}

}  // namespace trainer::test
