// Loader options from the config; see loader_options.h.
// Tested by tests/data/test_loader.cpp: pin_memory by device spelling, mosaic_enabled close_mosaic
//   rule.
#include "data/loader_options.h"

#include <algorithm>

#include "core/device_spelling.h"

namespace trainer::data {

LoaderOptions train_loader_options(const core::TrainConfig& config, int rank, int world_size) {
  LoaderOptions o;
  o.imgsz = static_cast<int>(config.data.imgsz);
  // `batch` is the global batch: each of `world_size` ranks loads its share (the reference's
  // batch // world_size; the trainer refuses a batch that does not divide).
  o.batch = static_cast<int>(config.data.batch) / std::max(world_size, 1);
  o.workers = static_cast<int>(config.data.workers);
  o.augment = true;
  // rect training (the reference's rect=True): batches sorted by aspect ratio in a fixed order,
  // each warped to its own shape (no padding), mosaic and mixup off.
  o.rect = config.data.rect;
  o.rect_pad = 0.0;
  o.shuffle = !config.data.rect;
  o.seed = static_cast<uint64_t>(config.run.seed);
  o.cache = config.data.cache;
  o.cache_gb = config.data.cache_gb;
  o.cache_dir = config.data.cache_dir;
  o.augment_settings = config.augment;
  o.mask_ratio = static_cast<int>(config.data.mask_ratio);
  o.overlap_mask = config.data.overlap_mask;
  o.rank = rank;
  o.world_size = world_size;
  o.fill_last_batch = config.run.static_shapes;
  // Pinned buffers need a CUDA context; a device=cpu run on a GPU machine must not create one.
  o.pin_memory = pins_memory(config);
  return o;
}

LoaderOptions val_loader_options(const core::TrainConfig& config, bool standalone) {
  LoaderOptions o = train_loader_options(config);
  o.batch = static_cast<int>(config.data.batch) * (standalone ? 1 : 2);
  o.augment = false;
  o.rect = true;
  o.rect_pad = 0.5;
  o.shuffle = false;
  o.fill_last_batch = false;
  return o;
}

bool pins_memory(const core::TrainConfig& config) {
  return core::parse_device(config.run.device).kind != core::DeviceSpelling::Kind::kCpu;
}

bool mosaic_enabled(const core::TrainConfig& config, int epoch, int64_t epochs) {
  if (config.data.rect) return false;  // rect batches and mosaic exclude each other
  const int64_t close = config.schedule.close_mosaic;
  const int64_t start = (epochs > 0 ? epochs : config.schedule.epochs) - close;
  return !(close > 0 && epoch >= start);  // 8.4.190: epochs < close_mosaic means no mosaic at all
}

}  // namespace trainer::data
