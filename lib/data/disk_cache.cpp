// The disk cache's file format and its checks; see disk_cache.h.
// Tested by tests/data/test_image_store.cpp: disk cache file naming, write/read round trip, stale
//   stamp/shape/imgsz and truncated file rejected.
#include "data/disk_cache.h"

#include <fmt/format.h>

#include <array>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <system_error>

#include "core/atomic_file.h"

namespace trainer::data {
namespace {

namespace fs = std::filesystem;

constexpr std::array<char, 8> kDiskCacheMagic = {'T', 'R', 'N', 'I', 'M', 'G', 'C', '\n'};

// 48 bytes, little-endian as the machines that write and read it (x86-64, aarch64).
struct Header {
  std::array<char, 8> magic;
  uint32_t version;
  uint32_t imgsz;
  uint32_t rows;
  uint32_t cols;
  uint32_t channels;
  uint32_t reserved;
  int64_t source_size;
  int64_t source_mtime_ns;
};
static_assert(sizeof(Header) == kDiskCacheHeaderBytes);

uint64_t fnv1a(const std::string& text) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : text) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

}  // namespace

SourceStamp source_stamp(const fs::path& image) {
  std::error_code ec;
  SourceStamp s;
  const auto size = fs::file_size(image, ec);
  if (ec) return s;
  const auto time = fs::last_write_time(image, ec);
  if (ec) return s;
  s.size = static_cast<int64_t>(size);
  s.mtime_ns =
      std::chrono::duration_cast<std::chrono::nanoseconds>(time.time_since_epoch()).count();
  return s;
}

fs::path disk_cache_file(const fs::path& image, int imgsz, const std::string& cache_dir) {
  const std::string name = fmt::format("{}.{}.trimg", image.filename().string(), imgsz);
  if (cache_dir.empty()) return image.parent_path() / name;
  std::error_code ec;
  const fs::path absolute = fs::absolute(image, ec);
  const uint64_t key = fnv1a((ec ? image : absolute).lexically_normal().string());
  return fs::path(cache_dir) / fmt::format("{:016x}-{}", key, name);
}

bool write_disk_cache(const fs::path& file, const cv::Mat& resized, int imgsz,
                      const SourceStamp& stamp, std::string* error) {
  if (resized.depth() != CV_8U || resized.channels() != 3 || resized.empty()) {
    if (error) *error = "only non-empty uint8 3-channel images are cached";
    return false;
  }
  const cv::Mat image = resized.isContinuous() ? resized : resized.clone();
  Header h{};
  h.magic = kDiskCacheMagic;
  h.version = kDiskCacheVersion;
  h.imgsz = static_cast<uint32_t>(imgsz);
  h.rows = static_cast<uint32_t>(image.rows);
  h.cols = static_cast<uint32_t>(image.cols);
  h.channels = 3;
  h.source_size = stamp.size;
  h.source_mtime_ns = stamp.mtime_ns;
  std::string content(sizeof(h) + image.total() * image.elemSize(), '\0');
  std::memcpy(content.data(), &h, sizeof(h));
  std::memcpy(content.data() + sizeof(h), image.data, image.total() * image.elemSize());
  try {
    // A unique temporary (mkstemp), fsynced, renamed, the folder fsynced.
    core::write_file_atomically(file, content);
  } catch (const std::exception& e) {
    if (error) *error = e.what();
    return false;
  }
  return true;
}

bool check_disk_cache_header(const uint8_t* header, size_t header_size, uint64_t file_size,
                             int imgsz, const SourceStamp& stamp, cv::Size* shape,
                             std::string* why) {
  auto fail = [&](const char* reason) {
    if (why) *why = reason;
    return false;
  };
  Header h{};
  if (header_size < sizeof(h) || file_size < sizeof(h)) return fail("truncated header");
  std::memcpy(&h, header, sizeof(h));
  if (h.magic != kDiskCacheMagic) return fail("not a trainer cache file");
  if (h.version != kDiskCacheVersion) return fail("written by another cache format version");
  if (h.imgsz != static_cast<uint32_t>(imgsz)) return fail("made for another imgsz");
  if (h.source_size != stamp.size || h.source_mtime_ns != stamp.mtime_ns) {
    return fail("the source image changed");
  }
  if (h.channels != 3 || h.rows == 0 || h.cols == 0 || h.rows > uint32_t(imgsz) ||
      h.cols > uint32_t(imgsz)) {
    return fail("impossible image shape");
  }
  const uint64_t expected = sizeof(Header) + uint64_t(h.rows) * h.cols * h.channels;
  if (file_size < expected) return fail("truncated pixels");
  if (file_size > expected) return fail("trailing bytes");
  if (shape) *shape = cv::Size(static_cast<int>(h.cols), static_cast<int>(h.rows));
  return true;
}

cv::Mat parse_disk_cache(const uint8_t* data, size_t size, int imgsz, const SourceStamp& stamp,
                         std::string* why) {
  cv::Size shape;
  if (!check_disk_cache_header(data, size, size, imgsz, stamp, &shape, why)) return cv::Mat();
  cv::Mat image(shape, CV_8UC3);
  std::memcpy(image.data, data + sizeof(Header), image.total() * image.elemSize());
  return image;
}

namespace {

// Opens `file` and checks it (check_disk_cache_header); on success `in` is positioned at the
// pixels.
bool open_checked(const fs::path& file, int imgsz, const SourceStamp& stamp, std::ifstream* in,
                  cv::Size* shape, std::string* why) {
  in->open(file, std::ios::binary);
  if (!*in) {
    if (why) *why = "missing";
    return false;
  }
  std::array<uint8_t, sizeof(Header)> header{};
  in->read(reinterpret_cast<char*>(header.data()), sizeof(Header));
  const auto got = static_cast<size_t>(in->gcount());
  std::error_code ec;
  const uint64_t size = fs::file_size(file, ec);
  if (ec) {
    if (why) *why = "missing";
    return false;
  }
  return check_disk_cache_header(header.data(), got, size, imgsz, stamp, shape, why);
}

}  // namespace

bool disk_cache_header_ok(const fs::path& file, int imgsz, const SourceStamp& stamp, cv::Size shape,
                          std::string* why) {
  std::ifstream in;
  cv::Size found;
  if (!open_checked(file, imgsz, stamp, &in, &found, why)) return false;
  if (found != shape) {
    // A replaced source that kept its size and time (cp -p, rsync -t) shows here most often.
    if (why) *why = "not the source's resized shape";
    return false;
  }
  return true;
}

cv::Mat read_disk_cache(const fs::path& file, int imgsz, const SourceStamp& stamp,
                        std::string* why) {
  std::ifstream in;
  cv::Size shape;
  if (!open_checked(file, imgsz, stamp, &in, &shape, why)) return cv::Mat();
  cv::Mat image(shape, CV_8UC3);
  const auto bytes = static_cast<std::streamsize>(image.total() * image.elemSize());
  // The size was checked; a file cut short since (another process rewriting it) is still caught.
  if (!in.read(reinterpret_cast<char*>(image.data), bytes)) {
    if (why) *why = "truncated pixels";
    return cv::Mat();
  }
  if (in.peek() != std::char_traits<char>::eof()) {
    if (why) *why = "trailing bytes";
    return cv::Mat();
  }
  return image;
}

}  // namespace trainer::data
