// The threaded loader; see loader.h.
#include "data/loader.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <opencv2/core/utility.hpp>
#include <opencv2/imgproc.hpp>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <numeric>
#include <stdexcept>

#include "core/error.h"
#include "data/augment/pipeline.h"
#include "data/augment/polygon.h"
#include "data/augment/sample_rng.h"
#include "data/buffer_pool.h"
#include "data/image_io.h"
#include "data/image_store.h"
#include "data/instance_masks.h"
#include "data/recent_images.h"
#include "data/rect_shapes.h"
#include "data/stage_profile.h"

namespace trainer::data {

using augment::Sample;
using augment::SampleRng;

Loader::Loader(const DatasetIndex& dataset, LoaderOptions options)
    : dataset_(dataset), options_(std::move(options)) {
  if (dataset_.items.empty()) throw std::invalid_argument("Loader: the dataset is empty");
  if (options_.batch < 1 || options_.imgsz < options_.stride || options_.world_size < 1 ||
      options_.rank < 0 || options_.rank >= options_.world_size) {
    throw std::invalid_argument("Loader: batch, imgsz, rank or world_size out of range");
  }
  const int cores = std::max(1u, std::thread::hardware_concurrency());
  workers_ = std::clamp(options_.workers, 0, cores);
  core::AugmentConfig& aug = options_.augment_settings;
  if (options_.augment && dataset_.keypoints_per_box > 0 && dataset_.flip_idx.empty() &&
      (aug.fliplr > 0.0 || aug.flipud > 0.0)) {
    // Without flip_idx a flip would turn left wrists into right wrists: the reference's rule.
    spdlog::warn("the dataset has keypoints but no 'flip_idx': fliplr and flipud set to 0");
    aug.fliplr = 0.0;
    aug.flipud = 0.0;
  }
  if (options_.augment && options_.rect) {
    spdlog::warn("rect training: batches in aspect-ratio order (shuffle is off), no mosaic");
    options_.shuffle = false;
  }
  images_ = ImageStore::open(dataset_, options_.imgsz, options_.cache, options_.cache_gb,
                             options_.cache_dir, std::max(workers_, 1), options_.show_progress);
  // Parallelism comes from our workers, not OpenCV (set after the store, whose build may change
  // it).
  if (workers_ > 0) cv::setNumThreads(0);
  // Only mosaic reads partners, so without it (rect training, mosaic: 0) there is nothing to keep.
  if (options_.augment && !options_.rect && options_.augment_settings.mosaic > 0.0 &&
      images_->kind() != StoreKind::kRamDecoded) {
    // The partner window plus the anchors the workers may be ahead by.
    const int64_t ahead = int64_t(workers_ + options_.prefetch + 1) * options_.batch;
    recent_ = std::make_unique<RecentImages>(static_cast<size_t>(
        std::min<int64_t>(int64_t(dataset_.items.size()), partner_window() + ahead)));
  }
  pool_ = std::make_unique<BufferPool>(options_.pin_memory && pinned_memory_available(),
                                       static_cast<size_t>(workers_ + options_.prefetch + 2));
  order_.resize(dataset_.items.size());
  std::iota(order_.begin(), order_.end(), 0);
  if (options_.rect) {
    std::vector<std::array<int, 2>> sizes;
    for (const auto& item : dataset_.items) sizes.push_back({item.height, item.width});
    order_ =
        rect_plan(sizes, options_.batch, options_.imgsz, options_.stride, options_.rect_pad).order;
  }
}

Loader::~Loader() {
  stop_workers();
}

int64_t Loader::partner_window() const {
  return std::min<int64_t>({static_cast<int64_t>(dataset_.items.size()),
                            int64_t(options_.batch) * options_.world_size * 8, 1000});
}

int64_t Loader::plan_batches() const {
  return (static_cast<int64_t>(dataset_.items.size()) + options_.batch - 1) / options_.batch;
}

int64_t Loader::batches_per_epoch() const {
  if (!batch_starts_.empty()) return static_cast<int64_t>(batch_starts_.size()) - 1;
  const int64_t world = options_.world_size;
  if (options_.shard_batches) {
    const int64_t plan = plan_batches();
    return plan > options_.rank ? (plan - options_.rank + world - 1) / world : 0;
  }
  const int64_t total = static_cast<int64_t>(dataset_.items.size());
  const int64_t per_rank = (total + world - 1) / world;
  return (per_rank + options_.batch - 1) / options_.batch;
}

int64_t Loader::samples_in_batch(int64_t b) const {
  return batch_starts_[b + 1] - batch_starts_[b];
}

void Loader::stop_workers() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  space_cv_.notify_all();
  for (auto& t : threads_) t.join();
  threads_.clear();
}

void Loader::start_epoch(int epoch, bool mosaic) {
  stop_workers();
  epoch_ = epoch;
  mosaic_ = mosaic;
  const int64_t n = static_cast<int64_t>(dataset_.items.size());
  permutation_ = order_;
  if (options_.augment && options_.shuffle) {
    SampleRng rng(options_.seed, epoch, 0, augment::StreamPurpose::kPermutation);
    std::iota(permutation_.begin(), permutation_.end(), 0);
    for (int64_t i = n - 1; i > 0; --i) {
      std::swap(permutation_[i], permutation_[rng.below(static_cast<uint64_t>(i + 1))]);
    }
  }
  const int64_t world = options_.world_size;
  const int64_t batch = options_.batch;
  local_.clear();
  batch_starts_.assign(1, 0);
  batch_ids_.clear();
  if (options_.shard_batches) {
    for (int64_t g = options_.rank; g < plan_batches(); g += world) {
      const int64_t end =
          options_.fill_last_batch && n > 0 ? (g + 1) * batch : std::min(n, (g + 1) * batch);
      for (int64_t k = g * batch; k < end; ++k) local_.push_back(k % n);
      batch_starts_.push_back(static_cast<int64_t>(local_.size()));
      batch_ids_.push_back(g);
    }
  } else {
    int64_t per_rank = (n + world - 1) / world;
    // local_[k] wraps around the permutation, so a filled last batch repeats the first samples.
    if (options_.fill_last_batch && n > 0) per_rank = (per_rank + batch - 1) / batch * batch;
    local_.resize(per_rank);
    for (int64_t k = 0; k < per_rank; ++k) local_[k] = (options_.rank + k * world) % n;
    for (int64_t start = 0; start < per_rank; start += batch) {
      batch_starts_.push_back(std::min(per_rank, start + batch));
      batch_ids_.push_back(static_cast<int64_t>(batch_ids_.size()));
    }
  }
  ready_.clear();
  next_claim_ = 0;
  cursor_ = 0;
  error_ = nullptr;
  stopping_ = false;
  for (int w = 0; w < workers_; ++w) threads_.emplace_back([this] { worker_loop(); });
}

void Loader::worker_loop() {
  const int64_t nb = batches_per_epoch();
  for (;;) {
    int64_t b = 0;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      space_cv_.wait(lock, [&] {
        return stopping_ || next_claim_ >= nb ||
               next_claim_ < cursor_ + workers_ + options_.prefetch;
      });
      if (stopping_ || next_claim_ >= nb) return;
      b = next_claim_++;
    }
    try {
      Batch batch = build_batch(b);
      std::lock_guard<std::mutex> lock(mutex_);
      ready_.emplace(b, std::move(batch));
    } catch (...) {
      std::lock_guard<std::mutex> lock(mutex_);
      if (!error_) error_ = std::current_exception();
    }
    ready_cv_.notify_all();
  }
}

std::optional<Batch> Loader::next() {
  if (epoch_ < 0) throw std::logic_error("Loader::next() before start_epoch()");
  const int64_t nb = batches_per_epoch();
  const auto t0 = std::chrono::steady_clock::now();
  auto waited = [&] {
    wait_seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  };
  if (workers_ == 0) {
    if (cursor_ >= nb) return std::nullopt;
    Batch batch = build_batch(cursor_++);
    waited();
    return batch;
  }
  std::unique_lock<std::mutex> lock(mutex_);
  if (cursor_ >= nb) return std::nullopt;
  ready_cv_.wait(lock, [&] { return error_ != nullptr || ready_.count(cursor_) > 0; });
  waited();
  if (error_) {
    const std::exception_ptr error = error_;
    lock.unlock();
    stop_workers();
    cursor_ = nb;
    std::rethrow_exception(error);
  }
  auto it = ready_.find(cursor_);
  Batch batch = std::move(it->second);
  ready_.erase(it);
  ++cursor_;
  lock.unlock();
  space_cv_.notify_all();
  return batch;
}

double Loader::take_wait_seconds() {
  const double s = wait_seconds_;
  wait_seconds_ = 0.0;
  return s;
}

namespace {

// Segmentation masks of a batch as one tensor: (count, height, width), int32 index images or
// uint8 0/1 masks as rasterise_outlines made them; (0, height, width) uint8 when there are none.
torch::Tensor stack_masks(const std::vector<cv::Mat>& masks, int height, int width) {
  if (masks.empty()) return torch::zeros({0, height, width}, torch::kUInt8);
  const bool index = masks.front().type() == CV_32S;
  auto out = torch::empty({static_cast<int64_t>(masks.size()), height, width},
                          index ? torch::kInt32 : torch::kUInt8);
  const size_t bytes = static_cast<size_t>(height) * width * (index ? 4 : 1);
  for (size_t i = 0; i < masks.size(); ++i) {
    if (masks[i].rows != height || masks[i].cols != width || !masks[i].isContinuous()) {
      throw std::logic_error("Loader: a mask of the wrong size");
    }
    std::memcpy(static_cast<uint8_t*>(out.data_ptr()) + i * bytes, masks[i].data, bytes);
  }
  return out;
}

// The dataset image at training size with its boxes in pixels. Throws core::InputError naming
// the file when it cannot be decoded (or could not be when the RAM cache was built).
Sample fetch_sample(const DatasetIndex& dataset, const ImageStore& images, RecentImages* recent,
                    int64_t i) {
  const ImageLabels& item = dataset.items[i];
  Sample s;
  if (recent) s.image = recent->find(i);
  if (s.image.empty()) {
    s.image = images.resized(static_cast<size_t>(i));
    if (recent) recent->put(i, s.image);
  }
  const float w = static_cast<float>(s.width()), h = static_cast<float>(s.height());
  s.classes = item.classes;
  s.boxes.reserve(item.boxes.size());
  for (const NormBox& b : item.boxes) {
    s.boxes.push_back({(b[0] - b[2] / 2) * w, (b[1] - b[3] / 2) * h, (b[0] + b[2] / 2) * w,
                       (b[1] + b[3] / 2) * h});
  }
  s.keypoints_per_box = dataset.keypoints_per_box;
  s.keypoints = item.keypoints;
  for (size_t k = 0; k + 2 < s.keypoints.size(); k += 3) {
    s.keypoints[k] *= w;
    s.keypoints[k + 1] *= h;
  }
  s.oriented = dataset.polygons == PolygonKind::kOrientedBoxes;
  s.segments.reserve(item.segments.size());
  // Outlines are resampled in normalised coordinates, as the reference does when it loads them.
  const bool outlines = dataset.polygons == PolygonKind::kOutlines;
  const size_t points = outlines ? augment::outline_resample_count(item.segments) : 0;
  for (const auto& label : item.segments) {
    const std::vector<float> flat = outlines ? augment::resample_outline(label, points) : label;
    auto& polygon = s.segments.emplace_back();
    polygon.reserve(flat.size() / 2);
    for (size_t k = 0; k + 1 < flat.size(); k += 2)
      polygon.emplace_back(flat[k] * w, flat[k + 1] * h);
  }
  return s;
}

}  // namespace

Sample Loader::fetch_or_replace(int64_t i, int64_t* used) const {
  // An image that became unreadable after indexing (changed on disk, bad sector, a decoder limit)
  // must not end a run that may be days long: the next decodable image takes its place, and the
  // file is logged once.
  constexpr int64_t kMaxReplacements = 16;
  const int64_t n = static_cast<int64_t>(dataset_.items.size());
  std::string first_error;
  for (int64_t k = 0; k < std::min(kMaxReplacements, n); ++k) {
    const int64_t j = (i + k) % n;
    try {
      Sample s = fetch_sample(dataset_, *images_, recent_.get(), j);
      if (used) *used = j;
      return s;
    } catch (const core::InputError& e) {
      if (first_error.empty()) first_error = e.what();
      std::lock_guard<std::mutex> lock(unreadable_mutex_);
      if (unreadable_.insert(j).second) {
        spdlog::warn("{}; another image takes its place in the batch", e.what());
      }
    }
  }
  throw core::InputError(fmt::format("{} images in a row from {} cannot be decoded; the first: {}",
                                     std::min(kMaxReplacements, n),
                                     dataset_.items[i].image.string(), first_error));
}

int64_t Loader::unreadable_images() const {
  std::lock_guard<std::mutex> lock(unreadable_mutex_);
  return static_cast<int64_t>(unreadable_.size());
}

Batch Loader::build_batch(int64_t b) const {
  const int64_t count = samples_in_batch(b);
  const int64_t n = static_cast<int64_t>(dataset_.items.size());
  const int imgsz = options_.imgsz;
  std::vector<int64_t> positions(count), indices(count);
  for (int64_t k = 0; k < count; ++k) {
    positions[k] = local_[batch_starts_[b] + k];
    indices[k] = permutation_[positions[k]];
  }
  int out_h = imgsz, out_w = imgsz;
  if (options_.rect) {
    double lo = 1e300, hi = 0;
    for (int64_t i : indices) {
      const double ar = double(dataset_.items[i].height) / dataset_.items[i].width;
      lo = std::min(lo, ar), hi = std::max(hi, ar);
    }
    const auto shape = rect_shape(lo, hi, imgsz, options_.stride, options_.rect_pad);
    out_h = shape[0], out_w = shape[1];
  }

  Batch batch;
  batch.index = batch_ids_[b];
  torch::Tensor buffer = pool_->acquire(count, out_h, out_w);
  std::vector<float> rows;
  std::vector<float> points;   // pose: (x, y, v) per keypoint, normalised, in the rows' order
  std::vector<float> rotated;  // OBB: [cx, cy, w, h, angle] per row, normalised
  const bool oriented = dataset_.polygons == PolygonKind::kOrientedBoxes;
  const bool outlines = dataset_.polygons == PolygonKind::kOutlines;
  const int ratio = options_.mask_ratio;
  std::vector<cv::Mat> masks;  // segmentation: per image (overlap) or per row
  const augment::FetchSample fetch = [&](int64_t i) { return fetch_or_replace(i, nullptr); };
  const int64_t window = partner_window();
  augment::TrainRecipe recipe{imgsz, options_.augment_settings, mosaic_ && !options_.rect, mosaic_,
                              dataset_.flip_idx};
  recipe.out_height = out_h;  // rect training: the batch's own shape
  recipe.out_width = out_w;
  for (int64_t k = 0; k < count; ++k) {
    int64_t index = indices[k];
    Sample sample;
    Sample resized;
    if (!options_.augment) resized = fetch_or_replace(index, &index);  // the image actually used
    const ImageLabels& item = dataset_.items[index];
    ImageGeometry geometry{item.height, item.width, 1.0, 1.0, 0.0, 0.0};
    cv::Mat slot(out_h, out_w, CV_8UC3, buffer[k].data_ptr<uint8_t>());
    if (options_.augment) {
      const int64_t position = positions[k];
      const augment::PickPartner pick = [&](SampleRng& rng) {
        const int64_t offset = static_cast<int64_t>(rng.below(static_cast<uint64_t>(window)));
        return permutation_[((position - offset) % n + n) % n];
      };
      SampleRng rng(options_.seed, epoch_, index);
      // RGB pixels straight into the batch (augment/pipeline.h).
      sample = augment::train_sample_rgb(index, fetch, pick, recipe, rng, slot);
    } else {
      augment::LetterboxGeometry g;
      sample = augment::val_sample(resized, out_h, out_w, &g);
      geometry.gain_x = static_cast<double>(resized.width()) / item.width * g.ratio;
      geometry.gain_y = static_cast<double>(resized.height()) / item.height * g.ratio;
      geometry.pad_x = g.left;
      geometry.pad_y = g.top;
    }
    if (sample.height() != out_h || sample.width() != out_w) {
      throw std::logic_error("Loader: a sample came out at the wrong size");
    }
    StageScope collate(Stage::kCollate);
    if (options_.augment) {
      if (sample.image.data != slot.data)
        throw std::logic_error("Loader: a sample missed its slot");
    } else {
      cv::cvtColor(sample.image, slot, cv::COLOR_BGR2RGB);
    }
    if (outlines) {
      if (sample.segments.size() != sample.boxes.size()) {
        throw std::logic_error("Loader: outlines and boxes out of step");
      }
      InstanceMasks m =
          rasterise_outlines(sample.segments, out_h, out_w, ratio, options_.overlap_mask);
      if (options_.overlap_mask) {
        reorder_instances(sample, m.order);  // row j <-> pixel value j + 1
        masks.push_back(m.index);
      } else {
        for (auto& mask : m.masks) masks.push_back(std::move(mask));
      }
    }
    for (size_t j = 0; j < sample.boxes.size(); ++j) {
      const auto& bx = sample.boxes[j];
      rows.insert(rows.end(), {static_cast<float>(k), static_cast<float>(sample.classes[j]),
                               (bx[0] + bx[2]) / 2 / out_w, (bx[1] + bx[3]) / 2 / out_h,
                               (bx[2] - bx[0]) / out_w, (bx[3] - bx[1]) / out_h});
    }
    for (size_t j = 0; j + 2 < sample.keypoints.size(); j += 3) {
      points.insert(points.end(), {sample.keypoints[j] / out_w, sample.keypoints[j + 1] / out_h,
                                   sample.keypoints[j + 2]});
    }
    if (oriented) {
      if (sample.segments.size() != sample.boxes.size()) {
        throw std::logic_error("Loader: polygons and boxes out of step");
      }
      // The reference's Format(return_obb): minAreaRect of the final polygon, normalised.
      for (const auto& polygon : sample.segments) {
        const geometry::RotatedBox r = augment::polygon_rotated_box(polygon);
        rotated.insert(rotated.end(),
                       {static_cast<float>(r.cx / out_w), static_cast<float>(r.cy / out_h),
                        static_cast<float>(r.w / out_w), static_cast<float>(r.h / out_h),
                        static_cast<float>(r.angle)});
      }
    }
    batch.files.push_back(item.image.string());
    batch.dataset_indices.push_back(index);
    batch.geometry.push_back(geometry);
  }
  batch.images = buffer.permute({0, 3, 1, 2});
  const int64_t boxes = static_cast<int64_t>(rows.size() / 6);
  batch.labels = boxes == 0 ? torch::zeros({0, 6}, torch::kFloat32)
                            : torch::from_blob(rows.data(), {boxes, 6}, torch::kFloat32).clone();
  const int64_t per_box = dataset_.keypoints_per_box;
  if (static_cast<int64_t>(points.size()) != boxes * per_box * 3) {
    throw std::logic_error("Loader: keypoints and boxes out of step");
  }
  batch.keypoints =
      points.empty()
          ? torch::zeros({boxes, per_box, 3}, torch::kFloat32)
          : torch::from_blob(points.data(), {boxes, per_box, 3}, torch::kFloat32).clone();
  const int64_t rows_rotated = static_cast<int64_t>(rotated.size() / 5);
  if (outlines) batch.masks = stack_masks(masks, out_h / ratio, out_w / ratio);
  batch.overlap_masks = options_.overlap_mask;
  batch.rboxes = rows_rotated == 0
                     ? torch::zeros({0, 5}, torch::kFloat32)
                     : torch::from_blob(rotated.data(), {rows_rotated, 5}, torch::kFloat32).clone();
  return batch;
}

torch::Tensor images_to_device(const torch::Tensor& images, const torch::Device& device,
                               torch::ScalarType dtype, at::MemoryFormat format) {
  return images_to_unit_float(images.to(device, /*non_blocking=*/true), dtype, format);
}

torch::Tensor images_to_unit_float(const torch::Tensor& images, torch::ScalarType dtype,
                                   at::MemoryFormat format) {
  torch::Tensor out = torch::empty(
      images.sizes(), torch::TensorOptions().dtype(dtype).device(images.device()), format);
  out.copy_(images);
  return out.div_(255);
}

}  // namespace trainer::data
