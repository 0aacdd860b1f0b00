// Tested by tests/data/test_image_codecs.cpp: EXIF orientation tag in both byte orders/defaults,
//   each orientation's transform by hand.
// See exif_orientation.h. Format: JPEG segments (FF xx, big-endian length) until the scan; the
// APP1 segment starting "Exif\0\0" holds a TIFF header (byte order "II"/"MM", 42, IFD0 offset);
// IFD0 entries are 12 bytes (tag, type, count, value), the orientation a SHORT in the value.
#include "data/codecs/exif_orientation.h"

namespace trainer::data::codecs {
namespace {

int read16(const uint8_t* p, bool little) {
  return little ? p[0] | (p[1] << 8) : (p[0] << 8) | p[1];
}

uint32_t read32(const uint8_t* p, bool little) {
  return little
             ? uint32_t{p[0]} | uint32_t{p[1]} << 8 | uint32_t{p[2]} << 16 | uint32_t{p[3]} << 24
             : uint32_t{p[0]} << 24 | uint32_t{p[1]} << 16 | uint32_t{p[2]} << 8 | uint32_t{p[3]};
}

// The orientation in a TIFF block (the APP1 payload after "Exif\0\0"), or 1.
int tiff_orientation(const uint8_t* tiff, size_t size) {
  if (size < 8) return 1;
  bool little = false;
  if (tiff[0] == 'I' && tiff[1] == 'I') {
    little = true;
  } else if (!(tiff[0] == 'M' && tiff[1] == 'M')) {
    return 1;
  }
  if (read16(tiff + 2, little) != 42) return 1;
  const uint32_t ifd = read32(tiff + 4, little);
  if (ifd > size - 2) return 1;
  const int entries = read16(tiff + ifd, little);
  for (int k = 0; k < entries; ++k) {
    const size_t at = ifd + 2 + static_cast<size_t>(k) * 12;
    if (at + 12 > size) return 1;
    if (read16(tiff + at, little) != 0x0112) continue;
    const int type = read16(tiff + at + 2, little);
    if (type != 3) return 1;  // SHORT
    const int value = read16(tiff + at + 8, little);
    return value >= 1 && value <= 8 ? value : 1;
  }
  return 1;
}

}  // namespace

int jpeg_exif_orientation(const uint8_t* data, size_t size) {
  if (size < 4 || data[0] != 0xFF || data[1] != 0xD8) return 1;
  size_t at = 2;
  while (at + 4 <= size) {
    if (data[at] != 0xFF) return 1;
    const int marker = data[at + 1];
    if (marker == 0xFF) {  // fill byte
      ++at;
      continue;
    }
    if (marker == 0xDA || marker == 0xD9) return 1;  // scan or end: no Exif before the image
    const size_t length = (size_t{data[at + 2]} << 8) | data[at + 3];
    if (length < 2 || at + 2 + length > size) return 1;
    if (marker == 0xE1) {
      const int orientation = exif_app1_orientation(data + at + 4, length - 2);
      if (orientation != 1) return orientation;
    }
    at += 2 + length;
  }
  return 1;
}

int exif_app1_orientation(const uint8_t* payload, size_t size) {
  const bool exif = size >= 6 && payload[0] == 'E' && payload[1] == 'x' && payload[2] == 'i' &&
                    payload[3] == 'f' && payload[4] == 0 && payload[5] == 0;
  return exif ? tiff_orientation(payload + 6, size - 6) : 1;
}

cv::Mat apply_exif_orientation(const cv::Mat& image, int orientation) {
  cv::Mat out;
  switch (orientation) {
    case 2:
      cv::flip(image, out, 1);
      return out;
    case 3:
      cv::flip(image, out, -1);
      return out;
    case 4:
      cv::flip(image, out, 0);
      return out;
    case 5:
      cv::transpose(image, out);
      return out;
    case 6:
      cv::transpose(image, out);
      cv::flip(out, out, 1);
      return out;
    case 7:
      cv::transpose(image, out);
      cv::flip(out, out, -1);
      return out;
    case 8:
      cv::transpose(image, out);
      cv::flip(out, out, 0);
      return out;
    default:
      return image;
  }
}

}  // namespace trainer::data::codecs
