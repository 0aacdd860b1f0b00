// PNG files written byte by byte for tests: the chunks the codecs would refuse to write (a huge
// size, a corrupt deflate stream, 16-bit samples).
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>

namespace trainer::test {

inline std::string be32(uint32_t v) {
  return {static_cast<char>(v >> 24), static_cast<char>(v >> 16), static_cast<char>(v >> 8),
          static_cast<char>(v)};
}

// CRC-32 (PNG's polynomial), bit by bit: enough for test-sized chunks.
inline uint32_t png_crc32(const std::string& bytes) {
  uint32_t crc = 0xFFFFFFFFu;
  for (unsigned char b : bytes) {
    crc ^= b;
    for (int k = 0; k < 8; ++k) crc = (crc >> 1) ^ (0xEDB88320u & (0u - (crc & 1u)));
  }
  return crc ^ 0xFFFFFFFFu;
}

// Length, type, data and CRC of one chunk.
inline std::string png_chunk(const std::string& type, const std::string& data) {
  return be32(static_cast<uint32_t>(data.size())) + type + data + be32(png_crc32(type + data));
}

inline std::string png_signature() {
  return std::string("\x89PNG\r\n\x1a\n", 8);
}

// IHDR data: width, height, bit depth, colour type (2 = RGB), no interlace.
inline std::string png_ihdr(uint32_t width, uint32_t height, int depth, int colour_type = 2) {
  return be32(width) + be32(height) +
         std::string{static_cast<char>(depth), static_cast<char>(colour_type), 0, 0, 0};
}

// A PNG whose header says width x height RGB pixels, followed by one row of zeros: the decoders
// allocate the whole image (width x height x 3 bytes) before they find the rest missing and refuse
// it as corrupt. A decompression bomb's first step, in a few kilobytes.
inline std::string huge_header_png(uint32_t width, uint32_t height) {
  const std::string row(1 + size_t(width) * 3, '\0');  // filter byte, then the samples
  // The zlib header, then non-final stored blocks: the stream wants more than it gets.
  std::string zlib("\x78\x01", 2);
  for (size_t at = 0; at < row.size(); at += 65535) {
    const size_t n = std::min<size_t>(row.size() - at, 65535);
    zlib += '\0';
    for (size_t v : {n, ~n}) {
      zlib += static_cast<char>(v & 0xFF);
      zlib += static_cast<char>((v >> 8) & 0xFF);
    }
    zlib += row.substr(at, n);
  }
  return png_signature() + png_chunk("IHDR", png_ihdr(width, height, 8)) + png_chunk("IDAT", zlib) +
         png_chunk("IEND", "");
}

}  // namespace trainer::test
