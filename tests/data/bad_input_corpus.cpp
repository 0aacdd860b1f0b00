// See bad_input_corpus.h. Images are encoded here byte by byte where the codecs would refuse to
// write them (16-bit PNG, a corrupt deflate stream, a 12-bit frame header, a huge size).
#include "bad_input_corpus.h"

#include <fstream>

#include "data/image_codec.h"
#include "data_test_util.h"
#include "png_bytes.h"

#if defined(TRAINER_HAS_LIBJPEG)
#include "cmyk_jpeg.h"
#endif

namespace fs = std::filesystem;

namespace trainer::test {
namespace {

// zlib with stored (uncompressed) deflate blocks.
std::string zlib_stored(const std::string& raw) {
  std::string out("\x78\x01", 2);
  size_t at = 0;
  do {
    const size_t n = std::min<size_t>(raw.size() - at, 65535);
    const bool last = at + n == raw.size();
    out += static_cast<char>(last ? 1 : 0);
    out += static_cast<char>(n & 0xFF);
    out += static_cast<char>(n >> 8);
    out += static_cast<char>(~n & 0xFF);
    out += static_cast<char>((~n >> 8) & 0xFF);
    out += raw.substr(at, n);
    at += n;
  } while (at < raw.size());
  uint32_t a = 1, b = 0;
  for (unsigned char c : raw) a = (a + c) % 65521, b = (b + a) % 65521;
  return out + be32((b << 16) | a);
}

// A PNG of `width` x `height` RGB samples of `depth` bits (8 or 16), a smooth pattern.
std::string rgb_png(uint32_t width, uint32_t height, int depth) {
  std::string raw;
  for (uint32_t y = 0; y < height; ++y) {
    raw += '\0';  // filter: none
    for (uint32_t x = 0; x < width; ++x) {
      for (uint32_t c = 0; c < 3; ++c) {
        const uint32_t v = (x * 900 + y * 500 + c * 20000) & 0xFFFF;
        raw += static_cast<char>(v >> 8);
        if (depth == 16) raw += static_cast<char>(v & 0xFF);
      }
    }
  }
  return png_signature() + png_chunk("IHDR", png_ihdr(width, height, depth)) +
         png_chunk("IDAT", zlib_stored(raw)) + png_chunk("IEND", "");
}

std::string read_all(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void write_bytes(const fs::path& file, const std::string& bytes) {
  fs::create_directories(file.parent_path());
  std::ofstream(file, std::ios::binary)
      .write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

// Offset of the first SOF0 marker of a baseline JPEG.
size_t sof0_at(const std::string& jpeg) {
  for (size_t i = 2; i + 1 < jpeg.size(); ++i) {
    if (static_cast<unsigned char>(jpeg[i]) == 0xFF &&
        static_cast<unsigned char>(jpeg[i + 1]) == 0xC0) {
      return i;
    }
  }
  return std::string::npos;
}

}  // namespace

BadInputCorpus make_bad_input_corpus(const fs::path& root) {
  BadInputCorpus corpus;
  const fs::path images = root / "images/train";
  const fs::path labels = root / "labels/train";
  const std::string box = "0 0.5 0.5 0.4 0.4\n";
  const auto label = [&](const std::string& stem, const std::string& text) {
    write_text(labels / (stem + ".txt"), text);
    return labels / (stem + ".txt");
  };
  const auto usable = [&](const std::string& name, const std::string& text) {
    label(fs::path(name).stem().string(), text);
    ++corpus.usable_train_images;
  };
  const auto corrupt_image = [&](const std::string& name, const std::string& bytes,
                                 const std::string& reason) {
    write_bytes(images / name, bytes);
    label(fs::path(name).stem().string(), box);
    ++corpus.corrupt_train_images;
    corpus.train_problems.push_back({images / name, reason});
  };
  const auto bad_label = [&](const std::string& stem, const std::string& text, int line,
                             const std::string& why) {
    write_image(images / (stem + ".jpg"), pattern_image(48, 64, 7));
    const fs::path file = label(stem, text);
    ++corpus.corrupt_train_images;
    corpus.train_problems.push_back({file, std::to_string(line) + ": " + why});
  };

  // Good images, one encoded JPEG kept for the broken variants.
  for (int i = 0; i < 4; ++i) {
    write_image(images / ("good" + std::to_string(i) + ".jpg"), pattern_image(64, 80, i));
    usable("good" + std::to_string(i) + ".jpg", box);
  }
  const std::string jpeg = read_all(images / "good0.jpg");
  const size_t sof = sof0_at(jpeg);

  // Odd but readable images.
  write_bytes(images / "trunc60.jpg", jpeg.substr(0, jpeg.size() * 6 / 10));
  usable("trunc60.jpg", box);
  corpus.train_problems.push_back({images / "trunc60.jpg", "JPEG has no end marker"});
  write_bytes(images / "png_named.jpg", rgb_png(40, 30, 8));
  usable("png_named.jpg", box);
  write_bytes(images / "sixteen.png", rgb_png(40, 30, 16));
  usable("sixteen.png", box);
#if defined(TRAINER_HAS_LIBJPEG)
  cv::Mat inks(30, 40, CV_8UC4);
  for (int y = 0; y < inks.rows; ++y) {
    for (int x = 0; x < inks.cols * 4; ++x)
      inks.ptr<uint8_t>(y)[x] = static_cast<uint8_t>(x * 3 + y * 5);
  }
  const auto cmyk = encode_cmyk_jpeg(inks, JCS_CMYK);
  write_bytes(images / "cmyk.jpg", std::string(cmyk.begin(), cmyk.end()));
  usable("cmyk.jpg", box);
#endif
  const std::string non_utf8 = std::string("name\xff\xfe") + ".jpg";  // not valid UTF-8
  write_image(images / non_utf8, pattern_image(32, 32, 3));
  usable(non_utf8, box);
  write_image(images / "blank.jpg", pattern_image(32, 32, 4));
  usable("blank.jpg", "\n  \n\t\n");  // a background
  write_image(images / "crlf.jpg", pattern_image(32, 32, 5));
  usable("crlf.jpg", "0 0.5 0.5 0.4 0.4\r\n1 0.3 0.3 0.2 0.2\r\n");
  write_image(images / "dup.jpg", pattern_image(32, 32, 6));
  usable("dup.jpg", box + box);
  corpus.train_problems.push_back({labels / "dup.txt", "1 duplicate labels removed"});

  // Images that cannot be used.
  corrupt_image("zero.jpg", "", "empty image file");
  corrupt_image("text.png", "this is not an image\n", "cannot decode image");
  corrupt_image("headonly.jpg", jpeg.substr(0, sof + 19), "cannot decode image");
  const std::string png = rgb_png(40, 30, 8);
  corrupt_image("trunc.png", png.substr(0, png.size() / 2), "cannot decode image");
  std::string bad_idat = png;
  bad_idat[png.find("IDAT") + 4] = 'X';  // the zlib header: not a deflate stream any more
  corrupt_image("badidat.png", bad_idat, "cannot decode image");
  corrupt_image(
      "huge.png",
      png_signature() + png_chunk("IHDR", png_ihdr(100000, 100000, 8)) + png_chunk("IEND", ""),
      "skipped: image of 100000 x 100000 pixels is over the decoder's limit");
  std::string twelve = jpeg;
  twelve[sof + 1] = static_cast<char>(0xC1);
  twelve[sof + 4] = 12;
  corrupt_image("twelve.jpg", twelve, "12-bit JPEG");

  // Every kind of bad label line.
  bad_label("arity", "0 0.5 0.5 0.4\n", 1, "expected 5 values");
  bad_label("word", box + "1 x 0.5 0.2 0.2\n", 2, "value 2 is not a number: 'x'");
  bad_label("nan", "0 nan 0.5 0.2 0.2\n", 1, "value 2 is not a number: 'nan'");
  bad_label("inf", "0 0.5 inf 0.2 0.2\n", 1, "value 3 is not a number: 'inf'");
  bad_label("overflow", "0 0.5 0.5 1e999 0.2\n", 1, "value 4 is not a number");
  bad_label("cls_range", "9 0.5 0.5 0.2 0.2\n", 1, "class 9 exceeds");
  bad_label("cls_neg", "-1 0.5 0.5 0.2 0.2\n", 1, "class '-1' is not a non-negative");
  bad_label("cls_frac", "1.5 0.5 0.5 0.2 0.2\n", 1, "class '1.5' is not");
  bad_label("cls_huge", "1e30 0.5 0.5 0.2 0.2\n", 1, "class 1e30 exceeds");
  bad_label("coord", "0 0.5 1.5 0.2 0.2\n", 1, "coordinate 1.5 is outside [-0.01, 1.01]");
  bad_label("binary", std::string("\xff\xfe\x00\x01 garbage", 12), 1, "expected 5 values");
  bad_label("polygon_odd", "0 0.1 0.1 0.5 0.1 0.5\n", 1, "expected 5 values");

  // The other splits and the datasets that cannot be loaded at all.
  for (int i = 0; i < 2; ++i) {
    write_image(root / "images/val" / ("v" + std::to_string(i) + ".jpg"), pattern_image(64, 80, i));
    write_text(root / "labels/val" / ("v" + std::to_string(i) + ".txt"), box);
  }
  fs::create_directories(root / "images/empty");
  corpus.data_yaml = root / "data.yaml";
  write_text(
      corpus.data_yaml,
      "path: .\ntrain: images/train\nval: images/val\ntest: images/empty\nnames: [a, b, c]\n");
  write_bytes(root / "images/corrupt_only/zero.jpg", "");
  write_bytes(root / "images/corrupt_only/text.png", "not an image");
  corpus.all_corrupt_yaml = root / "all_corrupt.yaml";
  write_text(corpus.all_corrupt_yaml,
             "path: .\ntrain: images/corrupt_only\nval: images/val\nnames: [a, b, c]\n");

  const auto broken = [&](const std::string& name, const std::string& yaml, const fs::path& culprit,
                          const std::string& reason) {
    write_text(root / name, yaml);
    corpus.broken_datasets.push_back({root / name, culprit, reason});
  };
  broken("malformed.yaml", "path: .\ntrain: images/train\nnames: [a, b\n", root / "malformed.yaml",
         "malformed YAML");
  const auto coco_yaml = [](const std::string& json) {
    return "path: .\ntrain: images/val\ntrain_json: " + json + "\nval: images/val\nnames: [a]\n";
  };
  write_text(root / "annotations/malformed.json", "{\"images\": [{\"id\": 1,");
  broken("coco_malformed.yaml", coco_yaml("annotations/malformed.json"),
         root / "annotations/malformed.json", "malformed json");
  write_text(root / "annotations/empty.json", "");
  broken("coco_empty.yaml", coco_yaml("annotations/empty.json"), root / "annotations/empty.json",
         "the file is empty (a json document was expected)");
  write_text(root / "annotations/huge_id.json",
             "{\"images\": [{\"id\": 1e30, \"file_name\": \"v0.jpg\", \"width\": 80, \"height\": "
             "64}], \"annotations\": [], \"categories\": [{\"id\": 1, \"name\": \"a\"}]}");
  broken("coco_huge_id.yaml", coco_yaml("annotations/huge_id.json"),
         root / "annotations/huge_id.json", "\"id\" must be an integer, got 1e+30");
  return corpus;
}

}  // namespace trainer::test
