// Fuzz target: the disk cache file reader, header and pixels (check_disk_cache_header and
// parse_disk_cache on the bytes, read_disk_cache and disk_cache_header_ok on the same bytes in a
// file).
//
// Why: `cache: disk` trusts nothing in a .trimg file it did not check: a stale, truncated or
// foreign file must be refused with a reason before anything is allocated for its pixels, never
// crash or yield an image of another shape than its header's, within imgsz. The file reader and
// the bytes reader must agree. Input: a whole cache file; the imgsz and source stamp it is checked
// against are its own header's (imgsz within 1..8192, the config's largest, else 640), so
// mutations reach the shape and size checks.
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <system_error>

#include "data/disk_cache.h"
#include "fuzz/fuzz_support.h"

namespace {

template <typename T>
T read_at(const uint8_t* data, size_t size, size_t at, T fallback) {
  T v = fallback;
  if (at + sizeof(T) <= size) std::memcpy(&v, data + at, sizeof(T));
  return v;
}

// One file per process, removed at exit.
struct Scratch {
  std::filesystem::path file = std::filesystem::temp_directory_path() /
                               ("trainer-fuzz-disk-cache-" + std::to_string(::getpid()) + ".trimg");
  ~Scratch() {
    std::error_code ec;
    std::filesystem::remove(file, ec);
  }
};

const std::filesystem::path& scratch_file() {
  static const Scratch scratch;
  return scratch.file;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace trainer::data;
  const uint32_t header_imgsz = read_at<uint32_t>(data, size, 12, 640);
  const int imgsz = header_imgsz >= 1 && header_imgsz <= 8192 ? int(header_imgsz) : 640;
  const SourceStamp stamp{read_at<int64_t>(data, size, 32, 0), read_at<int64_t>(data, size, 40, 0)};

  std::string why;
  cv::Size shape;
  const bool ok = check_disk_cache_header(data, std::min(size, kDiskCacheHeaderBytes), size, imgsz,
                                          stamp, &shape, &why);
  const cv::Mat image = parse_disk_cache(data, size, imgsz, stamp, &why);
  FUZZ_CHECK(ok == !image.empty());
  FUZZ_CHECK(ok || !why.empty());
  if (ok) {
    FUZZ_CHECK(image.type() == CV_8UC3 && image.isContinuous());
    FUZZ_CHECK(image.size() == shape);
    FUZZ_CHECK(image.rows >= 1 && image.rows <= imgsz && image.cols >= 1 && image.cols <= imgsz);
    FUZZ_CHECK(size == kDiskCacheHeaderBytes + image.total() * 3);
    FUZZ_CHECK(std::memcmp(image.data, data + kDiskCacheHeaderBytes, image.total() * 3) == 0);
  }

  // The same bytes as a file.
  {
    std::ofstream out(scratch_file(), std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  }
  std::string file_why;
  const cv::Mat from_file = read_disk_cache(scratch_file(), imgsz, stamp, &file_why);
  FUZZ_CHECK(from_file.empty() == image.empty());
  FUZZ_CHECK(file_why == why || ok);
  if (ok) {
    FUZZ_CHECK(std::memcmp(from_file.data, image.data, image.total() * 3) == 0);
    FUZZ_CHECK(disk_cache_header_ok(scratch_file(), imgsz, stamp, shape, &file_why));
  } else {
    FUZZ_CHECK(!disk_cache_header_ok(scratch_file(), imgsz, stamp, shape, &file_why));
  }
  return 0;
}
