// Image codecs: the EXIF orientation reader and transform on hand-made inputs, and the TurboJPEG
// + libpng decoder pixel for pixel against OpenCV's imgcodecs (the oracle) on real COCO JPEGs and
// on every PNG flavour OpenCV can write.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <vector>

#include "core/error.h"
#include "data/codecs/exif_orientation.h"
#include "data/image_codec.h"
#include "data/image_files.h"
#include "data/image_io.h"
#include "png_bytes.h"
#include "test_support.h"

#if defined(TRAINER_HAS_TURBOJPEG_CODEC)
#include "data/codecs/turbojpeg_codec.h"
#endif
#if defined(TRAINER_HAS_LIBJPEG)
#include "cmyk_jpeg.h"
#endif
#if defined(TRAINER_IMAGE_CODECS_OPENCV)
#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>
#endif

namespace fs = std::filesystem;
using namespace trainer::data;

namespace {

std::vector<uint8_t> read_bytes(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// SOI, an APP0 segment, then an APP1 Exif segment whose IFD0 holds one entry (tag, type, value).
std::vector<uint8_t> jpeg_with_exif(bool little, int tag, int type, int value) {
  auto put16 = [&](std::vector<uint8_t>& v, int x) {
    if (little) {
      v.push_back(static_cast<uint8_t>(x & 0xFF));
      v.push_back(static_cast<uint8_t>(x >> 8));
    } else {
      v.push_back(static_cast<uint8_t>(x >> 8));
      v.push_back(static_cast<uint8_t>(x & 0xFF));
    }
  };
  auto put32 = [&](std::vector<uint8_t>& v, uint32_t x) {
    if (little) {
      put16(v, static_cast<int>(x & 0xFFFF));
      put16(v, static_cast<int>(x >> 16));
    } else {
      put16(v, static_cast<int>(x >> 16));
      put16(v, static_cast<int>(x & 0xFFFF));
    }
  };
  std::vector<uint8_t> tiff = {static_cast<uint8_t>(little ? 'I' : 'M'),
                               static_cast<uint8_t>(little ? 'I' : 'M')};
  put16(tiff, 42);
  put32(tiff, 8);
  put16(tiff, 1);  // one entry
  put16(tiff, tag);
  put16(tiff, type);
  put32(tiff, 1);
  put16(tiff, value);
  put16(tiff, 0);
  put32(tiff, 0);  // no next IFD
  std::vector<uint8_t> app1 = {'E', 'x', 'i', 'f', 0, 0};
  app1.insert(app1.end(), tiff.begin(), tiff.end());
  std::vector<uint8_t> out = {0xFF, 0xD8, 0xFF, 0xE0, 0x00, 0x04, 'J', 'F'};  // SOI, APP0 (2 bytes)
  out.push_back(0xFF);
  out.push_back(0xE1);
  const size_t length = app1.size() + 2;
  out.push_back(static_cast<uint8_t>(length >> 8));
  out.push_back(static_cast<uint8_t>(length & 0xFF));
  out.insert(out.end(), app1.begin(), app1.end());
  out.insert(out.end(), {0xFF, 0xD9});
  return out;
}

// 2 x 3 single-channel image with values 1..6 row by row:  1 2 3 / 4 5 6.
cv::Mat small() {
  return (cv::Mat_<uint8_t>(2, 3) << 1, 2, 3, 4, 5, 6);
}

std::vector<uint8_t> values(const cv::Mat& m) {
  std::vector<uint8_t> out;
  for (int y = 0; y < m.rows; ++y)
    for (int x = 0; x < m.cols; ++x) out.push_back(m.at<uint8_t>(y, x));
  return out;
}

bool same_pixels(const cv::Mat& a, const cv::Mat& b) {
  return a.size() == b.size() && a.type() == b.type() && cv::norm(a, b, cv::NORM_INF) == 0;
}

}  // namespace

TEST_CASE("exif: the orientation tag is read in both byte orders, defaults to 1 otherwise") {
  using codecs::jpeg_exif_orientation;
  const auto big6 = jpeg_with_exif(false, 0x0112, 3, 6);
  const auto little8 = jpeg_with_exif(true, 0x0112, 3, 8);
  CHECK(jpeg_exif_orientation(big6.data(), big6.size()) == 6);
  CHECK(jpeg_exif_orientation(little8.data(), little8.size()) == 8);
  const auto other_tag = jpeg_with_exif(false, 0x0110, 3, 6);
  CHECK(jpeg_exif_orientation(other_tag.data(), other_tag.size()) == 1);
  const auto bad_type = jpeg_with_exif(false, 0x0112, 4, 6);  // LONG, not SHORT
  CHECK(jpeg_exif_orientation(bad_type.data(), bad_type.size()) == 1);
  const auto out_of_range = jpeg_with_exif(true, 0x0112, 3, 9);
  CHECK(jpeg_exif_orientation(out_of_range.data(), out_of_range.size()) == 1);
  // Every truncation is safe: 1 until the APP1 segment is complete (the file's last 2 bytes are
  // the end-of-image marker), 6 from there on.
  for (size_t cut = 0; cut < big6.size(); ++cut) {
    INFO("cut at " << cut);
    CHECK(jpeg_exif_orientation(big6.data(), cut) == (cut < big6.size() - 2 ? 1 : 6));
  }
  const std::vector<uint8_t> no_exif = {0xFF, 0xD8, 0xFF, 0xDA, 0x00, 0x02, 0xFF, 0xD9};
  CHECK(jpeg_exif_orientation(no_exif.data(), no_exif.size()) == 1);
}

TEST_CASE("exif: each orientation's transform, hand-computed on a 2x3 image") {
  using codecs::apply_exif_orientation;
  // 1 2 3
  // 4 5 6
  CHECK(values(apply_exif_orientation(small(), 1)) == std::vector<uint8_t>{1, 2, 3, 4, 5, 6});
  CHECK(values(apply_exif_orientation(small(), 2)) == std::vector<uint8_t>{3, 2, 1, 6, 5, 4});
  CHECK(values(apply_exif_orientation(small(), 3)) == std::vector<uint8_t>{6, 5, 4, 3, 2, 1});
  CHECK(values(apply_exif_orientation(small(), 4)) == std::vector<uint8_t>{4, 5, 6, 1, 2, 3});
  // Orientations 5..8 give 3 x 2 images.
  CHECK(values(apply_exif_orientation(small(), 5)) == std::vector<uint8_t>{1, 4, 2, 5, 3, 6});
  CHECK(values(apply_exif_orientation(small(), 6)) == std::vector<uint8_t>{4, 1, 5, 2, 6, 3});
  CHECK(values(apply_exif_orientation(small(), 7)) == std::vector<uint8_t>{6, 3, 5, 2, 4, 1});
  CHECK(values(apply_exif_orientation(small(), 8)) == std::vector<uint8_t>{3, 6, 2, 5, 1, 4});
  CHECK(apply_exif_orientation(small(), 6).rows == 3);
}

TEST_CASE("codec: the build's codec writes and reads JPEG and PNG, and names what it cannot do") {
  trainer::test::TempDir dir;
  cv::Mat image(37, 53, CV_8UC3);
  cv::randu(image, 0, 256);
  write_image(dir.path() / "a.png", image);
  CHECK(same_pixels(read_image_bgr(dir.path() / "a.png"), image));  // PNG is lossless
  cv::Mat smooth(64, 64, CV_8UC3, cv::Scalar(40, 120, 200));
  write_image(dir.path() / "b.jpg", smooth, 95);
  const cv::Mat back = read_image_bgr(dir.path() / "b.jpg");
  REQUIRE(back.size() == smooth.size());
  CHECK(cv::norm(back, smooth, cv::NORM_INF) <= 3);
  cv::Mat gray(20, 30, CV_8UC1, cv::Scalar(77));
  write_image(dir.path() / "g.png", gray);
  const cv::Mat gray_back = read_image_bgr(dir.path() / "g.png");
  CHECK(gray_back.channels() == 3);
  CHECK(cv::norm(gray_back, cv::Mat(20, 30, CV_8UC3, cv::Scalar(77, 77, 77)), cv::NORM_INF) == 0);
  CHECK_THROWS_WITH_AS(write_image(dir.path() / "c.gif", image), doctest::Contains("c.gif"),
                       trainer::core::InputError);
  std::string why;
  CHECK(decode_image_bgr({}, &why).empty());
  CHECK(!why.empty());
  CHECK_THROWS_WITH_AS(read_image_bgr(dir.path() / "missing.jpg"), doctest::Contains("missing.jpg"),
                       trainer::core::InputError);
}

#if defined(TRAINER_HAS_TURBOJPEG_CODEC) && defined(TRAINER_IMAGE_CODECS_OPENCV)

namespace {

cv::Mat turbo_decode(const std::vector<uint8_t>& bytes) {
  std::string error;
  cv::Mat out = bytes.size() >= 2 && bytes[0] == 0xFF
                    ? codecs::decode_jpeg_bgr(bytes.data(), bytes.size(), &error)
                    : codecs::decode_png_bgr(bytes.data(), bytes.size(), &error);
  INFO(error);
  return out;
}

}  // namespace

TEST_CASE("turbojpeg: COCO JPEGs decode to exactly cv::imdecode's pixels") {
  TRAINER_SKIP_IF_NO_SHARED_DATA(coco128, "coco128");
  int compared = 0;
  for (const auto& root : {*coco128, coco128->parent_path() / "coco8"}) {
    for (const auto& entry : fs::recursive_directory_iterator(root / "images")) {
      if (entry.path().extension() != ".jpg") continue;
      const auto bytes = read_bytes(entry.path());
      const cv::Mat oracle = cv::imdecode(bytes, cv::IMREAD_COLOR);
      const cv::Mat ours = turbo_decode(bytes);
      INFO(entry.path().string());
      REQUIRE(same_pixels(ours, oracle));
      ++compared;
    }
  }
  MESSAGE(compared << " JPEGs identical to cv::imdecode");
  CHECK(compared >= 136);
}

TEST_CASE("turbojpeg: gray, truncated and EXIF-rotated JPEGs match cv::imread") {
  trainer::test::TempDir dir;
  cv::Mat color(48, 80, CV_8UC3);
  cv::randu(color, 0, 256);
  cv::GaussianBlur(color, color, cv::Size(5, 5), 0);
  cv::Mat gray;
  cv::cvtColor(color, gray, cv::COLOR_BGR2GRAY);
  std::vector<uint8_t> jpeg, gray_jpeg;
  REQUIRE(cv::imencode(".jpg", color, jpeg));
  REQUIRE(cv::imencode(".jpg", gray, gray_jpeg));
  CHECK(same_pixels(turbo_decode(gray_jpeg), cv::imdecode(gray_jpeg, cv::IMREAD_COLOR)));

  // Truncated to 60%: libjpeg warns and both decoders still return a full-size image whose
  // decoded top agrees; the rows after the data ends are filler, and the fillers differ
  // (TurboJPEG's end-of-data marker vs OpenCV's suspending source), so only the top is compared.
  std::vector<uint8_t> truncated(jpeg.begin(), jpeg.begin() + jpeg.size() * 6 / 10);
  const cv::Mat ours = turbo_decode(truncated);
  const cv::Mat theirs = cv::imdecode(truncated, cv::IMREAD_COLOR);
  REQUIRE(ours.size() == theirs.size());
  int equal_rows = 0;
  while (equal_rows < ours.rows && same_pixels(ours.row(equal_rows), theirs.row(equal_rows))) {
    ++equal_rows;
  }
  MESSAGE("truncated JPEG: the first " << equal_rows << " of " << ours.rows << " rows agree");
  // Measured: 14 of 48 rows. The kept 60% holds at least one 16-row MCU row, whose last rows
  // already mix in the filler through fancy (interpolating) chroma upsampling.
  CHECK(equal_rows >= 8);

  // The same pixels with an Exif orientation inserted after SOI, read back by cv::imread.
  for (int orientation = 1; orientation <= 8; ++orientation) {
    const auto exif = jpeg_with_exif(orientation % 2 == 0, 0x0112, 3, orientation);
    std::vector<uint8_t> rotated(jpeg.begin(), jpeg.begin() + 2);     // SOI
    rotated.insert(rotated.end(), exif.begin() + 8, exif.end() - 2);  // APP1 only
    rotated.insert(rotated.end(), jpeg.begin() + 2, jpeg.end());      // the rest
    const fs::path file = dir.path() / ("o" + std::to_string(orientation) + ".jpg");
    std::ofstream(file, std::ios::binary)
        .write(reinterpret_cast<const char*>(rotated.data()),
               static_cast<std::streamsize>(rotated.size()));
    const cv::Mat read = cv::imread(file.string(), cv::IMREAD_COLOR);
    INFO("orientation " << orientation);
    CHECK(read.cols == (orientation >= 5 ? 48 : 80));
    CHECK(same_pixels(turbo_decode(rotated), read));
  }
}

TEST_CASE("libpng: every PNG flavour OpenCV writes decodes to cv::imdecode's pixels") {
  cv::Mat bgr(31, 45, CV_8UC3), bgra(31, 45, CV_8UC4), gray(31, 45, CV_8UC1);
  cv::randu(bgr, 0, 256);
  cv::randu(bgra, 0, 256);
  cv::randu(gray, 0, 256);
  cv::Mat bgr16, gray16, bgra16;
  bgr.convertTo(bgr16, CV_16U, 257.0, 3);
  gray.convertTo(gray16, CV_16U, 251.0);
  bgra.convertTo(bgra16, CV_16U, 256.0);
  cv::Mat bilevel;
  cv::threshold(gray, bilevel, 127, 255, cv::THRESH_BINARY);
  struct Case {
    const char* name;
    cv::Mat image;
    std::vector<int> params;
  };
  const std::vector<Case> cases = {
      {"bgr8", bgr, {}},
      {"bgra8", bgra, {}},
      {"gray8", gray, {}},
      {"bgr16", bgr16, {}},
      {"gray16", gray16, {}},
      {"bgra16", bgra16, {}},
      {"bilevel", bilevel, {cv::IMWRITE_PNG_BILEVEL, 1}},
      {"bgr8 max compression", bgr, {cv::IMWRITE_PNG_COMPRESSION, 9}},
  };
  for (const auto& c : cases) {
    std::vector<uint8_t> png;
    REQUIRE(cv::imencode(".png", c.image, png, c.params));
    INFO(c.name);
    CHECK(same_pixels(turbo_decode(png), cv::imdecode(png, cv::IMREAD_COLOR)));
  }
  std::vector<uint8_t> png;
  REQUIRE(cv::imencode(".png", bgr, png));
  png.resize(png.size() / 2);
  std::string error;
  CHECK(codecs::decode_png_bgr(png.data(), png.size(), &error).empty());
  CHECK(error.find("corrupt PNG") == 0);
}

TEST_CASE("turbojpeg: encoders round-trip through OpenCV's decoder") {
  cv::Mat bgr(40, 56, CV_8UC3);
  cv::randu(bgr, 0, 256);
  std::string error;
  const auto png = codecs::encode_png(bgr, &error);
  REQUIRE(!png.empty());
  CHECK(same_pixels(cv::imdecode(png, cv::IMREAD_COLOR), bgr));
  cv::Mat smooth(64, 64, CV_8UC3, cv::Scalar(10, 100, 250));
  const auto jpeg = codecs::encode_jpeg(smooth, 95, &error);
  REQUIRE(!jpeg.empty());
  const cv::Mat back = cv::imdecode(jpeg, cv::IMREAD_COLOR);
  REQUIRE(back.size() == smooth.size());
  CHECK(cv::norm(back, smooth, cv::NORM_INF) <= 3);
  cv::Mat bgra(9, 7, CV_8UC4);
  cv::randu(bgra, 0, 256);
  const auto png4 = codecs::encode_png(bgra, &error);
  REQUIRE(!png4.empty());
  CHECK(same_pixels(cv::imdecode(png4, cv::IMREAD_UNCHANGED), bgra));  // alpha kept in the file
  CHECK(codecs::encode_png(cv::Mat(4, 4, CV_32FC1), &error).empty());
}

#if defined(TRAINER_HAS_LIBJPEG)

using trainer::test::encode_cmyk_jpeg;

TEST_CASE("turbojpeg: CMYK and YCCK JPEGs decode to exactly cv::imdecode's pixels") {
  cv::Mat cmyk(37, 53, CV_8UC4);
  cv::randu(cmyk, 0, 256);
  cv::GaussianBlur(cmyk, cmyk, cv::Size(5, 5), 0);
  for (const J_COLOR_SPACE stored : {JCS_CMYK, JCS_YCCK}) {
    INFO("stored as " << (stored == JCS_CMYK ? "CMYK" : "YCCK"));
    const auto bytes = encode_cmyk_jpeg(cmyk, stored);
    const cv::Mat oracle = cv::imdecode(bytes, cv::IMREAD_COLOR);
    REQUIRE(oracle.size() == cv::Size(53, 37));
    CHECK(cv::countNonZero(oracle.reshape(1)) > 0);
    CHECK(same_pixels(turbo_decode(bytes), oracle));
  }
}
#endif

#else

TEST_CASE("turbojpeg: the comparison with OpenCV needs both decoders") {
#if defined(TRAINER_HAS_TURBOJPEG_CODEC)
  const char* why = "no OpenCV imgcodecs (TRAINER_IMAGE_CODECS=turbojpeg)";
#else
  const char* why =
      "no TurboJPEG/libpng (install libturbojpeg0-dev libpng-dev: scripts/setup.sh does)";
#endif
  MESSAGE("skipped: this build has " << why);
}

#endif

TEST_CASE("image header: an EXIF-rotated JPEG reports the size it decodes to") {
  trainer::test::TempDir dir;
  cv::Mat image(48, 80, CV_8UC3, cv::Scalar(30, 60, 90));
  write_image(dir.path() / "plain.jpg", image);
  auto jpeg = read_bytes(dir.path() / "plain.jpg");
  const auto exif = jpeg_with_exif(false, 0x0112, 3, 6);
  std::vector<uint8_t> rotated(jpeg.begin(), jpeg.begin() + 2);
  rotated.insert(rotated.end(), exif.begin() + 8, exif.end() - 2);
  rotated.insert(rotated.end(), jpeg.begin() + 2, jpeg.end());
  const fs::path file = dir.path() / "rotated.jpg";
  std::ofstream(file, std::ios::binary)
      .write(reinterpret_cast<const char*>(rotated.data()),
             static_cast<std::streamsize>(rotated.size()));
  std::string error;
  const auto plain = read_image_header(dir.path() / "plain.jpg", &error);
  const auto turned = read_image_header(file, &error);
  REQUIRE(plain);
  REQUIRE(turned);
  CHECK(plain->width == 80);
  CHECK(plain->height == 48);
  CHECK(turned->width == 48);
  CHECK(turned->height == 80);
  const cv::Mat decoded = read_image_bgr(file);
  CHECK(decoded.cols == 48);
  CHECK(decoded.rows == 80);
}

TEST_CASE("image read: a header claiming 100000 x 100000 pixels is an error naming the file") {
  // A well-formed PNG signature and IHDR (8-bit RGB) whose size is past every decoder's limit;
  // the decoder must say no without taking the file name (or the process) with it.
  using namespace trainer::test;
  const std::string png =
      png_signature() + png_chunk("IHDR", png_ihdr(100000, 100000, 8)) + png_chunk("IEND", "");
  trainer::test::TempDir dir;
  trainer::test::write_text(dir / "huge.png", png);
  try {
    trainer::data::read_image_bgr(dir / "huge.png");
    FAIL("expected an InputError");
  } catch (const trainer::core::InputError& e) {
    CHECK(std::string(e.what()).find((dir / "huge.png").string()) != std::string::npos);
  }
}

namespace {
// A real 8-bit JPEG whose frame header is rewritten to SOF1 with 12-bit samples: what every
// decoder here sees of a 12-bit file before it gives up (no encoder here writes real ones).
std::vector<uint8_t> twelve_bit_jpeg() {
  cv::Mat image(24, 32, CV_8UC3, cv::Scalar(40, 90, 200));
  trainer::test::TempDir dir;
  trainer::data::write_image(dir / "eight.jpg", image);
  std::vector<uint8_t> bytes;
  REQUIRE(read_file_bytes(dir / "eight.jpg", &bytes));
  for (size_t i = 2; i + 4 < bytes.size(); ++i) {
    if (bytes[i] == 0xFF && bytes[i + 1] == 0xC0) {
      bytes[i + 1] = 0xC1;
      bytes[i + 4] = 12;  // after the 2-byte segment length
      return bytes;
    }
  }
  FAIL("no SOF0 in the encoded JPEG");
  return bytes;
}
}  // namespace

TEST_CASE("image header: a 12-bit JPEG is refused by name, like the reference's PIL and OpenCV") {
  trainer::test::TempDir dir;
  const auto bytes = twelve_bit_jpeg();
  std::ofstream(dir / "twelve.jpg", std::ios::binary)
      .write(reinterpret_cast<const char*>(bytes.data()),
             static_cast<std::streamsize>(bytes.size()));
  std::string error;
  CHECK_FALSE(read_image_header(dir / "twelve.jpg", &error));
  CHECK(error.rfind("12-bit JPEG:", 0) == 0);
  // The build's decoder refuses it too (a clear error, never a crash or garbage pixels).
  CHECK(decode_image_bgr(bytes, &error).empty());
  CHECK_FALSE(error.empty());
}

#if defined(TRAINER_HAS_TURBOJPEG_CODEC)
TEST_CASE("turbojpeg: headers over the pixel limit are refused before any allocation") {
  // 65000 x 65000 (4.2e9 pixels > 2^30) written into a small JPEG's frame header.
  cv::Mat image(16, 16, CV_8UC3, cv::Scalar(1, 2, 3));
  std::string error;
  auto jpeg = codecs::encode_jpeg(image, 90, &error);
  REQUIRE_FALSE(jpeg.empty());
  bool patched = false;
  for (size_t i = 2; i + 8 < jpeg.size() && !patched; ++i) {
    if (jpeg[i] == 0xFF && jpeg[i + 1] == 0xC0) {
      for (size_t k : {i + 5, i + 7}) {  // height, width (big-endian)
        jpeg[k] = 0xFD;
        jpeg[k + 1] = 0xE8;
      }
      patched = true;
    }
  }
  REQUIRE(patched);
  CHECK(codecs::decode_jpeg_bgr(jpeg.data(), jpeg.size(), &error).empty());
  CHECK(error == "image of 65000 x 65000 pixels is over the decoder's limit of 1073741824 pixels");
}
#endif

TEST_CASE("image header: the parser reads bytes in memory and tells other formats apart") {
  // A PNG signature and IHDR: width 300, height 200 (big-endian at bytes 16 and 20).
  std::string png = "\x89PNG\r\n\x1a\n";
  png += std::string("\0\0\0\x0dIHDR", 8);
  png += std::string("\0\0\x01\x2c\0\0\0\xc8", 8);
  std::istringstream png_in(png);
  std::string error;
  bool other = true;
  const auto header = parse_image_header(png_in, &error, &other);
  REQUIRE(header);
  CHECK(header->width == 300);
  CHECK(header->height == 200);
  CHECK_FALSE(other);

  std::istringstream bmp_in("BM\x36\0\0\0");
  CHECK_FALSE(parse_image_header(bmp_in, &error, &other));
  CHECK(other);  // read_image_header decodes these instead
  std::istringstream empty_in("");
  CHECK_FALSE(parse_image_header(empty_in, &error, &other));
  CHECK_FALSE(other);
  CHECK(error == "empty image file");
  std::istringstream cut_jpeg(std::string("\xff\xd8\xff\xe0\x00\x10JFIF", 10));
  CHECK_FALSE(parse_image_header(cut_jpeg, &error, &other));
  CHECK(error == "corrupt JPEG: no frame header");
}
