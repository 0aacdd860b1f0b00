// cache: disk — each image resized once to the training size and stored in a file, reused by later
// runs.
//
// Why: the reference's `cache: disk` saves decoded images as .npy files beside the dataset so an
// epoch reads raw pixels instead of decoding JPEGs; ours stores them already resized (at imgsz,
// as the loader uses them) with a header that is checked before use: format version, imgsz, image
// shape and the source file's size and modification time. A file that is missing, from an older
// format, another imgsz, a changed source, a shape other than the source's resized shape, truncated
// or corrupt is rebuilt, never trusted. Writes go through core::write_file_atomically (a temporary
// file, flushed to disk, renamed into place), so neither a kill nor a power loss leaves a
// half-written file under a cache name; a kill may leave a `*.tmp.XXXXXX` beside it.
// Files: `<image file name>.<imgsz>.trimg` beside the image, or in `cache_dir` (flat, the name
// prefixed by a hash of the image's absolute path) when one is given.
#pragma once

#include <opencv2/core.hpp>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>

namespace trainer::data {

inline constexpr uint32_t kDiskCacheVersion = 1;

// What a cache file records about its source image.
struct SourceStamp {
  int64_t size = -1;
  int64_t mtime_ns = 0;
};
// The stamp of `image` now; size -1 when it cannot be read.
SourceStamp source_stamp(const std::filesystem::path& image);

std::filesystem::path disk_cache_file(const std::filesystem::path& image, int imgsz,
                                      const std::string& cache_dir);

// Writes `resized` (uint8, 3 channels) atomically and durably. False (with `error`) when it cannot
// be written.
bool write_disk_cache(const std::filesystem::path& file, const cv::Mat& resized, int imgsz,
                      const SourceStamp& stamp, std::string* error);

// The size of a cache file's header.
inline constexpr size_t kDiskCacheHeaderBytes = 48;

// The checks on a cache file before anything is allocated for its pixels: `header` holds its first
// bytes (`header_size` of them, kDiskCacheHeaderBytes when the file has that many) and `file_size`
// is its whole size. True when it is a cache file of this version for `imgsz` and `stamp`, of a
// possible shape (3 channels, each side 1..imgsz), whose size is exactly the header plus those
// pixels; the shape is then in `shape` (`why` says why not: truncated header, another version,
// truncated pixels, trailing bytes, ...).
bool check_disk_cache_header(const uint8_t* header, size_t header_size, uint64_t file_size,
                             int imgsz, const SourceStamp& stamp, cv::Size* shape,
                             std::string* why);

// A whole cache file's bytes to its image (read_disk_cache without the file); an empty Mat with
// `why` when check_disk_cache_header refuses them.
cv::Mat parse_disk_cache(const uint8_t* data, size_t size, int imgsz, const SourceStamp& stamp,
                         std::string* why);

// Whether the header of `file` fits and describes an image of `shape` (the source's size resized
// to imgsz; `why` says why not); the pixels are not read.
bool disk_cache_header_ok(const std::filesystem::path& file, int imgsz, const SourceStamp& stamp,
                          cv::Size shape, std::string* why);

// The cached image, or an empty Mat with `why` saying why it cannot be used (missing, version,
// imgsz, source changed, truncated). The file's size is checked against its header's shape before
// the pixels are allocated.
cv::Mat read_disk_cache(const std::filesystem::path& file, int imgsz, const SourceStamp& stamp,
                        std::string* why);

}  // namespace trainer::data
