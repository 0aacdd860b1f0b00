// See image_verify.h.
// Tested by tests/data/test_dataset.cpp: dataset verdicts: header-only JPEG skipped (cannot
//   decode), truncated JPEG kept with warning, cached.
#include "data/image_verify.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <sstream>
#include <thread>

#include "data/decode_budget.h"
#include "data/image_codec.h"

namespace trainer::data {

ImageVerdict verify_image(const std::filesystem::path& file) {
  // One read and one decode per file: the header is parsed from the same bytes (its size is
  // checked against the pixel limit before the decoder allocates anything).
  ImageVerdict verdict;
  std::vector<uint8_t> bytes;
  if (!read_file_bytes(file, &bytes)) {
    verdict.error = "image not found or unreadable";
    return verdict;
  }
  std::string error;
  bool other_format = false;  // BMP, TIFF, WebP, ...: the decode gives the size
  std::istringstream stream(std::string(bytes.begin(), bytes.end()));
  std::optional<ImageHeader> header = parse_image_header(stream, &error, &other_format);
  if (!header && !other_format) {
    verdict.error = error;
    return verdict;
  }
  if (header && static_cast<int64_t>(header->width) * header->height > kMaxImagePixels) {
    verdict.error = fmt::format("image of {} x {} pixels is over the decoder's limit of {} pixels",
                                header->width, header->height, kMaxImagePixels);
    return verdict;
  }
  // Held until the pixels are checked and freed (declared before them).
  const DecodeBudget::Grant grant = process_decode_budget().acquire(
      header ? decode_reservation_bytes(header->width, header->height)
             : decode_reservation_bytes(bytes));
  const cv::Mat pixels = decode_image_bgr(bytes, &error);
  if (pixels.empty()) {
    verdict.error = "cannot decode image: " + error;
    return verdict;
  }
  if (!header) header = ImageHeader{pixels.cols, pixels.rows, ""};
  if (pixels.cols != header->width || pixels.rows != header->height) {
    verdict.error = fmt::format("the header says {}x{} but the image decodes to {}x{}",
                                header->width, header->height, pixels.cols, pixels.rows);
    return verdict;
  }
  if (!large_enough(*header, &verdict.error)) return verdict;
  if (!header->warning.empty()) {
    verdict.warning =
        header->warning + "; it decodes (the decoder fills the missing part), kept, file unchanged";
    header->warning.clear();
  }
  verdict.header = header;
  return verdict;
}

std::vector<ImageVerdict> verify_images(const std::vector<std::filesystem::path>& files,
                                        int threads) {
  std::vector<ImageVerdict> verdicts(files.size());
  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  const int workers = static_cast<int>(
      std::min<size_t>(files.size(), static_cast<size_t>(threads > 0 ? threads : cores)));
  std::atomic<size_t> next{0};
  const auto work = [&] {
    for (size_t i = next++; i < files.size(); i = next++) {
      try {  // an exception must not leave a worker thread (std::terminate)
        verdicts[i] = verify_image(files[i]);
      } catch (const std::exception& e) {
        verdicts[i].error = std::string("cannot decode image: ") + e.what();
      }
    }
  };
  if (workers <= 1) {
    work();
    return verdicts;
  }
  std::vector<std::thread> pool;
  pool.reserve(static_cast<size_t>(workers));
  for (int w = 0; w < workers; ++w) pool.emplace_back(work);
  for (auto& t : pool) t.join();
  return verdicts;
}

}  // namespace trainer::data
