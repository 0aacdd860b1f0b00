// Where the loader's images come from: the files, a RAM cache that fits, or a disk cache.
//
// Why: decoding JPEGs dominates a loader on few cores, so caching pays; but at COCO scale the
// decoded images do not fit in RAM (train2017 resized to 640 needs ~107 GB) while the encoded files
// (~19 GB) often do. So `cache: ram` plans against a budget (`cache_gb`, by default half the
// available memory shared by the local ranks) instead of refusing: decoded resized images when all
// of them fit (an epoch only augments); else the encoded file bytes of as many images as fit,
// decoded per use (an epoch reads no files), the rest read from disk. The plan and its size are
// logged. `cache: disk` keeps resized images in files beside the dataset (data/disk_cache.h).
// Every store yields the same pixels: those of read_image_bgr + resize_long_side.
#pragma once

#include <opencv2/core.hpp>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/config.h"
#include "data/image_labels.h"

namespace trainer::data {

enum class StoreKind { kFiles, kRamDecoded, kRamEncoded, kDisk };
const char* store_kind_name(StoreKind kind);

// What `cache: ram` keeps, for a budget: decoded when every resized image fits, else encoded
// bytes for the longest prefix of images (dataset order, skipping any that do not fit) whose
// files fit, else nothing.
struct RamCachePlan {
  StoreKind kind = StoreKind::kFiles;
  int64_t budget_bytes = 0;
  int64_t decoded_bytes = 0;  // every image resized, uint8 BGR
  int64_t encoded_bytes = 0;  // every file
  int64_t planned_bytes = 0;  // what the chosen kind holds
  std::vector<bool> in_ram;   // kRamEncoded: which images' files are held
  int64_t images_in_ram = 0;
};
RamCachePlan plan_ram_cache(int64_t decoded_bytes, const std::vector<int64_t>& file_bytes,
                            int64_t budget_bytes);

// One rank's budget: half of `available` bytes, or `cache_gb` (> 0) GB, either being the
// machine's and divided among its `local_ranks` processes (each rank builds its own cache).
int64_t ram_cache_budget(double cache_gb, int64_t available, int local_ranks);

class ImageStore {
 public:
  // Plans and builds the store, logging the plan (and a progress line on a terminal when
  // `show_progress`). Never throws for a cache that does not fit; throws core::InputError for a
  // disk cache folder that cannot be created.
  static std::unique_ptr<ImageStore> open(const DatasetIndex& dataset, int imgsz,
                                          core::CacheMode mode, double cache_gb,
                                          const std::string& cache_dir, int threads,
                                          bool show_progress);
  // The store keeps a pointer to `dataset`: a temporary would dangle.
  static std::unique_ptr<ImageStore> open(DatasetIndex&&, int, core::CacheMode, double,
                                          const std::string&, int, bool) = delete;
  ~ImageStore();

  // Image `i` with its long side imgsz (uint8 BGR). A decoded cached image is shared with other
  // threads: never write into it. Throws core::InputError when it cannot be decoded.
  cv::Mat resized(size_t i) const;

  StoreKind kind() const { return kind_; }
  int imgsz() const { return imgsz_; }
  int64_t ram_bytes() const { return ram_bytes_; }
  int64_t images_in_ram() const { return images_in_ram_; }
  bool in_ram() const { return kind_ == StoreKind::kRamDecoded || kind_ == StoreKind::kRamEncoded; }
  // cache: disk at open: files found valid and reused, and files (re)written.
  int64_t disk_reused() const { return disk_reused_; }
  int64_t disk_written() const { return disk_written_; }
  // One line for logs and benchmarks, e.g. "ram (encoded): 118 of 128 images, 0.95 GB".
  std::string describe() const;

 private:
  ImageStore() = default;
  const DatasetIndex* dataset_ = nullptr;
  StoreKind kind_ = StoreKind::kFiles;
  int imgsz_ = 0;
  std::vector<cv::Mat> decoded_;
  std::vector<std::vector<uint8_t>> encoded_;  // empty for an image read from its file
  std::vector<std::string> disk_files_;        // kDisk: the cache file of each image
  int64_t ram_bytes_ = 0;
  int64_t images_in_ram_ = 0;
  int64_t disk_reused_ = 0;
  int64_t disk_written_ = 0;
};

// MemAvailable from /proc/meminfo in bytes (-1 when unknown).
int64_t available_memory_bytes();

}  // namespace trainer::data
