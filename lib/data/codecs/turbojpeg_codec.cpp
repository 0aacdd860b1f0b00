// Tested by tests/data/test_image_codecs.cpp: turbojpeg/libpng decode equals cv::imdecode (COCO,
//   gray, CMYK, truncated), encoder round-trip, pixel limit.
// See turbojpeg_codec.h. libpng reports errors by longjmp: the functions that call setjmp keep
// only trivially destructible locals, and buffers they fill are owned by their callers.
#include "data/codecs/turbojpeg_codec.h"

#include <png.h>
#include <turbojpeg.h>

#include <csetjmp>
#include <cstring>

#include "data/codecs/exif_orientation.h"
#include "data/image_codec.h"

namespace trainer::data::codecs {
namespace {

struct TjHandle {
  explicit TjHandle(tjhandle h) : handle(h) {}
  ~TjHandle() {
    if (handle) tjDestroy(handle);
  }
  TjHandle(const TjHandle&) = delete;
  TjHandle& operator=(const TjHandle&) = delete;
  tjhandle handle;
};

// ---- PNG reading -------------------------------------------------------------------------------

struct PngSource {
  const uint8_t* data;
  size_t size;
  size_t at;
  char message[200];
};

void png_read_from_memory(png_structp png, png_bytep out, png_size_t length) {
  auto* src = static_cast<PngSource*>(png_get_io_ptr(png));
  if (length > src->size - src->at) png_error(png, "unexpected end of PNG data");
  std::memcpy(out, src->data + src->at, length);
  src->at += length;
}

void png_on_error(png_structp png, png_const_charp message) {
  auto* src = static_cast<PngSource*>(png_get_error_ptr(png));
  std::snprintf(src->message, sizeof(src->message), "%s", message);
  png_longjmp(png, 1);
}

void png_on_warning(png_structp, png_const_charp) {}

// Reads the header (rows == nullptr) or the pixels into `rows` (height row pointers of width*3
// bytes). Returns false with src->message set on error.
bool png_read(PngSource* src, int* width, int* height, png_bytep* rows) {
  png_structp png =
      png_create_read_struct(PNG_LIBPNG_VER_STRING, src, png_on_error, png_on_warning);
  if (png == nullptr) return false;
  png_infop info = png_create_info_struct(png);
  if (info == nullptr) {
    png_destroy_read_struct(&png, nullptr, nullptr);
    return false;
  }
  if (setjmp(png_jmpbuf(png))) {
    png_destroy_read_struct(&png, &info, nullptr);
    return false;
  }
  src->at = 0;
  png_set_read_fn(png, src, png_read_from_memory);
  png_read_info(png, info);
  *width = static_cast<int>(png_get_image_width(png, info));
  *height = static_cast<int>(png_get_image_height(png, info));
  if (rows != nullptr) {
    const int color_type = png_get_color_type(png, info);
    const int bit_depth = png_get_bit_depth(png, info);
    // The transforms of OpenCV's PNG decoder for a 3-channel 8-bit result.
    if (bit_depth > 8) png_set_strip_16(png);
    png_set_strip_alpha(png);
    if (color_type == PNG_COLOR_TYPE_PALETTE) png_set_palette_to_rgb(png);
    if ((color_type & PNG_COLOR_MASK_COLOR) == 0 && bit_depth < 8) {
      png_set_expand_gray_1_2_4_to_8(png);
    }
    if (color_type & PNG_COLOR_MASK_COLOR) {
      png_set_bgr(png);
    } else {
      png_set_gray_to_rgb(png);
    }
    png_set_interlace_handling(png);
    png_read_update_info(png, info);
    if (png_get_rowbytes(png, info) != static_cast<png_size_t>(*width) * 3) {
      png_error(png, "unexpected PNG row size after conversion");
    }
    png_read_image(png, rows);
    png_read_end(png, nullptr);
  }
  png_destroy_read_struct(&png, &info, nullptr);
  return true;
}

// ---- PNG writing -------------------------------------------------------------------------------

struct PngSink {
  std::vector<uint8_t>* out;
  char message[200];
};

void png_write_to_memory(png_structp png, png_bytep data, png_size_t length) {
  auto* sink = static_cast<PngSink*>(png_get_io_ptr(png));
  sink->out->insert(sink->out->end(), data, data + length);
}

void png_flush_memory(png_structp) {}

void png_on_write_error(png_structp png, png_const_charp message) {
  auto* sink = static_cast<PngSink*>(png_get_error_ptr(png));
  std::snprintf(sink->message, sizeof(sink->message), "%s", message);
  png_longjmp(png, 1);
}

bool png_write(PngSink* sink, int width, int height, int channels, png_bytep* rows) {
  png_structp png =
      png_create_write_struct(PNG_LIBPNG_VER_STRING, sink, png_on_write_error, png_on_warning);
  if (png == nullptr) return false;
  png_infop info = png_create_info_struct(png);
  if (info == nullptr) {
    png_destroy_write_struct(&png, nullptr);
    return false;
  }
  if (setjmp(png_jmpbuf(png))) {
    png_destroy_write_struct(&png, &info);
    return false;
  }
  png_set_write_fn(png, sink, png_write_to_memory, png_flush_memory);
  png_set_compression_level(png, 3);
  const int color_type = channels == 4   ? PNG_COLOR_TYPE_RGB_ALPHA
                         : channels == 3 ? PNG_COLOR_TYPE_RGB
                                         : PNG_COLOR_TYPE_GRAY;
  png_set_IHDR(png, info, static_cast<png_uint_32>(width), static_cast<png_uint_32>(height), 8,
               color_type, PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT,
               PNG_FILTER_TYPE_DEFAULT);
  png_write_info(png, info);
  if (channels >= 3) png_set_bgr(png);
  png_write_image(png, rows);
  png_write_end(png, nullptr);
  png_destroy_write_struct(&png, &info);
  return true;
}

// OpenCV's conversion of libjpeg's CMYK output (Adobe files store the inks inverted, so 255 is
// no ink): each colour channel becomes k - (255 - ink) * k / 256, integer arithmetic.
cv::Mat inverted_cmyk_to_bgr(const cv::Mat& cmyk) {
  cv::Mat bgr(cmyk.rows, cmyk.cols, CV_8UC3);
  for (int y = 0; y < cmyk.rows; ++y) {
    const uint8_t* in = cmyk.ptr<uint8_t>(y);
    uint8_t* out = bgr.ptr<uint8_t>(y);
    for (int x = 0; x < cmyk.cols; ++x, in += 4, out += 3) {
      const int k = in[3];
      const auto ink = [k](int v) { return static_cast<uint8_t>(k - (((255 - v) * k) >> 8)); };
      out[2] = ink(in[0]);  // cyan -> red
      out[1] = ink(in[1]);  // magenta -> green
      out[0] = ink(in[2]);  // yellow -> blue
    }
  }
  return bgr;
}

std::string pixel_limit_error(int width, int height) {
  return "image of " + std::to_string(width) + " x " + std::to_string(height) +
         " pixels is over the decoder's limit of " + std::to_string(kMaxImagePixels) + " pixels";
}

}  // namespace

cv::Mat decode_jpeg_bgr(const uint8_t* data, size_t size, std::string* error) {
  TjHandle tj(tjInitDecompress());
  if (tj.handle == nullptr) {
    *error = "cannot start the TurboJPEG decoder";
    return {};
  }
  int width = 0, height = 0, subsampling = 0, colorspace = 0;
  if (tjDecompressHeader3(tj.handle, data, static_cast<unsigned long>(size), &width, &height,
                          &subsampling, &colorspace) != 0) {
    *error = std::string("corrupt JPEG: ") + tjGetErrorStr2(tj.handle);
    return {};
  }
  if (static_cast<int64_t>(width) * height > kMaxImagePixels) {
    *error = pixel_limit_error(width, height);
    return {};
  }
  // CMYK and YCCK (Adobe) files decode to inverted CMYK and are converted as OpenCV does.
  const bool cmyk = colorspace == TJCS_CMYK || colorspace == TJCS_YCCK;
  cv::Mat image(height, width, cmyk ? CV_8UC4 : CV_8UC3);
  // Flags 0: the accurate integer DCT and fancy upsampling, as libjpeg's (and OpenCV's) default.
  if (tjDecompress2(tj.handle, data, static_cast<unsigned long>(size), image.data, width,
                    static_cast<int>(image.step[0]), height, cmyk ? TJPF_CMYK : TJPF_BGR, 0) != 0) {
    // Warnings (for example a truncated file) still give an image, as libjpeg does for imread.
    if (tjGetErrorCode(tj.handle) != TJERR_WARNING) {
      *error = std::string("corrupt JPEG: ") + tjGetErrorStr2(tj.handle);
      return {};
    }
  }
  if (cmyk) image = inverted_cmyk_to_bgr(image);
  return apply_exif_orientation(image, jpeg_exif_orientation(data, size));
}

cv::Mat decode_png_bgr(const uint8_t* data, size_t size, std::string* error) {
  PngSource src{data, size, 0, {}};
  int width = 0, height = 0;
  if (!png_read(&src, &width, &height, nullptr)) {
    *error = std::string("corrupt PNG: ") + src.message;
    return {};
  }
  if (static_cast<int64_t>(width) * height > kMaxImagePixels) {
    *error = pixel_limit_error(width, height);
    return {};
  }
  cv::Mat image(height, width, CV_8UC3);
  std::vector<png_bytep> rows(static_cast<size_t>(height));
  for (int y = 0; y < height; ++y) rows[static_cast<size_t>(y)] = image.ptr<uint8_t>(y);
  if (!png_read(&src, &width, &height, rows.data())) {
    *error = std::string("corrupt PNG: ") + src.message;
    return {};
  }
  return image;
}

std::vector<uint8_t> encode_jpeg(const cv::Mat& image, int quality, std::string* error) {
  if (image.depth() != CV_8U || (image.channels() != 3 && image.channels() != 1)) {
    *error = "JPEG encoding needs an 8-bit gray or BGR image";
    return {};
  }
  const cv::Mat src = image.isContinuous() ? image : image.clone();
  TjHandle tj(tjInitCompress());
  if (tj.handle == nullptr) {
    *error = "cannot start the TurboJPEG encoder";
    return {};
  }
  unsigned char* buffer = nullptr;
  unsigned long length = 0;
  const bool gray = src.channels() == 1;
  if (tjCompress2(tj.handle, src.data, src.cols, static_cast<int>(src.step[0]), src.rows,
                  gray ? TJPF_GRAY : TJPF_BGR, &buffer, &length, gray ? TJSAMP_GRAY : TJSAMP_420,
                  quality, 0) != 0) {
    *error = std::string("JPEG encoding failed: ") + tjGetErrorStr2(tj.handle);
    tjFree(buffer);
    return {};
  }
  std::vector<uint8_t> out(buffer, buffer + length);
  tjFree(buffer);
  return out;
}

std::vector<uint8_t> encode_png(const cv::Mat& image, std::string* error) {
  if (image.depth() != CV_8U || image.channels() == 2 || image.channels() > 4) {
    *error = "PNG encoding needs an 8-bit gray, BGR or BGRA image";
    return {};
  }
  std::vector<png_bytep> rows(static_cast<size_t>(image.rows));
  for (int y = 0; y < image.rows; ++y) {
    rows[static_cast<size_t>(y)] = const_cast<png_bytep>(image.ptr<uint8_t>(y));
  }
  std::vector<uint8_t> out;
  PngSink sink{&out, {}};
  if (!png_write(&sink, image.cols, image.rows, image.channels(), rows.data())) {
    *error = std::string("PNG encoding failed: ") + sink.message;
    return {};
  }
  return out;
}

}  // namespace trainer::data::codecs
