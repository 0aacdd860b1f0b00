// The threaded batch loader: one epoch at a time, deterministic for any worker count.
//
// Why: the trainer should never wait for data. Worker threads claim whole batches in order (at
// most `workers + prefetch` batches ahead of the consumer), decode or take cached images, augment,
// and write RGB pixels straight into a uint8 (B, H, W, 3) buffer (pooled, or pinned when CUDA is
// available); next() hands batches out in order. Every random draw comes from (seed, epoch,
// dataset index), and mosaic partners from a window of the epoch permutation, so the batches of a
// run are the same with 0, 1 or 8 workers and after a resume.
// Train (augment=true): shuffled each epoch, the train recipe (augment/pipeline.h); with rect=true
// (the reference's rect training) in aspect-ratio order, unshuffled, each batch warped to its rect
// shape (rect_pad 0), without mosaic. Validation (augment=false): dataset order, or with rect=true
// sorted by aspect ratio and letterboxed to each batch's rect shape (rect_pad 0.5, stride 32);
// Batch::geometry maps outputs back to original pixels.
// Sharding: rank r of world_size takes every world_size-th sample of the permutation (padded by
// wrapping so every rank has the same count); with shard_batches (sharded validation) it takes
// the whole batches r, r + world_size, ... of the single-process plan instead, unpadded, so the
// ranks' batches together are exactly one process's batches (Batch::index says which). Threads:
// workers are capped at the cores available, and OpenCV runs single-threaded inside them, so a
// 2-core machine is not oversubscribed.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "core/config.h"
#include "data/augment/sample.h"
#include "data/batch.h"
#include "data/image_labels.h"

namespace trainer::data {

class ImageStore;
class RecentImages;
class BufferPool;

struct LoaderOptions {
  int imgsz = 640;
  int batch = 16;
  int workers = 2;  // 0 = build batches in next() on the calling thread
  bool augment = true;
  bool rect = false;
  bool shuffle = true;  // train only (augment=true)
  uint64_t seed = 0;
  bool pin_memory = true;  // pinned batches when CUDA is available (loader_options: CUDA runs only)
  core::CacheMode cache = core::CacheMode::kNone;  // see data/image_store.h
  double cache_gb = 0.0;                           // RAM budget; 0 = auto
  std::string cache_dir;                           // cache: disk; "" = beside the images
  bool show_progress = true;
  core::AugmentConfig augment_settings;
  int stride = 32;
  double rect_pad = 0.5;  // rect shapes: ceil(side * imgsz / stride + pad) * stride
  int prefetch = 2;       // batches queued beyond one per worker
  int rank = 0;
  int world_size = 1;
  bool shard_batches = false;  // whole batches of the one-process plan per rank (see above)
  // Every batch holds `batch` samples: the last one is completed with the epoch's first samples
  // (wrapping around, as torch's DistributedSampler pads), so the batch dimension never changes
  // (static shapes). The number of batches is unchanged.
  bool fill_last_batch = false;
  // Segmentation datasets (outlines): masks at imgsz / mask_ratio, overlapping or one per object
  // (data/instance_masks.h).
  int mask_ratio = 4;
  bool overlap_mask = true;
};

class Loader {
 public:
  Loader(const DatasetIndex& dataset, LoaderOptions options);
  ~Loader();
  Loader(const Loader&) = delete;
  Loader& operator=(const Loader&) = delete;

  // Starts (or restarts) an epoch; `mosaic` false after close_mosaic (mosaic and mixup off).
  void start_epoch(int epoch, bool mosaic = true);
  // The next batch of the epoch, or nullopt at its end. Rethrows a worker's error.
  std::optional<Batch> next();

  int64_t batches_per_epoch() const;
  int64_t samples_per_epoch() const { return static_cast<int64_t>(local_.size()); }
  // Seconds the caller spent blocked in next() since the last call.
  double take_wait_seconds();

  const LoaderOptions& options() const { return options_; }
  const DatasetIndex& dataset() const { return dataset_; }
  // Where images come from (files, RAM decoded or encoded, disk cache) and what that holds.
  const ImageStore& images() const { return *images_; }
  // Training without a decoded RAM cache: the recently decoded images mosaic partners come from
  // (data/recent_images.h); null otherwise.
  const RecentImages* recent_images() const { return recent_.get(); }
  int workers() const { return workers_; }

  // How many images could not be decoded so far (each was replaced in its batch, logged once).
  int64_t unreadable_images() const;

  // The recent-index window size for mosaic partners: min(n, batch * 8, 1000).
  int64_t partner_window() const;

 private:
  Batch build_batch(int64_t b) const;
  // Image i at training size, or the next decodable one (logged once per file); `used` gets the
  // index actually read. Throws core::InputError when 16 images in a row cannot be decoded.
  augment::Sample fetch_or_replace(int64_t i, int64_t* used) const;
  void worker_loop();
  void stop_workers();
  int64_t samples_in_batch(int64_t b) const;
  int64_t plan_batches() const;  // batches of the whole (unsharded) epoch, shard_batches mode

  DatasetIndex dataset_;
  LoaderOptions options_;
  int workers_ = 0;
  std::unique_ptr<ImageStore> images_;
  std::unique_ptr<RecentImages> recent_;
  std::unique_ptr<BufferPool> pool_;
  std::vector<std::array<int, 2>> rect_shapes_;  // per batch (h, w), rect mode

  // Epoch state (read-only while workers run).
  int epoch_ = -1;
  bool mosaic_ = true;
  std::vector<int64_t> permutation_;   // all dataset indices in epoch order
  std::vector<int64_t> local_;         // positions in permutation_ for this rank
  std::vector<int64_t> batch_starts_;  // this rank's batch b: local_[starts[b], starts[b + 1])
  std::vector<int64_t> batch_ids_;     // this rank's batch b in the epoch's plan (Batch::index)
  std::vector<int64_t> order_;         // dataset order for val (rect-sorted when rect)

  std::vector<std::thread> threads_;
  std::mutex mutex_;
  std::condition_variable ready_cv_, space_cv_;
  std::map<int64_t, Batch> ready_;
  int64_t next_claim_ = 0;
  int64_t cursor_ = 0;
  bool stopping_ = false;
  std::exception_ptr error_;
  double wait_seconds_ = 0.0;

  mutable std::mutex unreadable_mutex_;
  mutable std::set<int64_t> unreadable_;  // images replaced because they could not be decoded
};

// Copies a Batch's uint8 images to `device` (non_blocking) and converts them to `dtype` in [0, 1]
// there, as a (B, 3, H, W) tensor in `format` (Contiguous: NCHW; ChannelsLast: NHWC strides, which
// the uint8 batch already has, so the conversion is a plain copy and the model gets it as is).
torch::Tensor images_to_device(const torch::Tensor& images, const torch::Device& device,
                               torch::ScalarType dtype,
                               at::MemoryFormat format = at::MemoryFormat::Contiguous);
// The conversion half of images_to_device, for uint8 images already on their device (a CUDA
// graph's static input buffer): a new `dtype` tensor in [0, 1] in `format`.
torch::Tensor images_to_unit_float(const torch::Tensor& images, torch::ScalarType dtype,
                                   at::MemoryFormat format = at::MemoryFormat::Contiguous);

}  // namespace trainer::data
