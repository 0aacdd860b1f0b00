// See validator.h.
#include "engine/validator.h"

#include <torch/torch.h>

#include <chrono>
#include <set>

#include "core/autocast_guard.h"
#include "data/loader_options.h"
#include "distributed/group.h"
#include "engine/batch_targets.h"
#include "engine/device/device.h"
#include "engine/device/memory_format.h"
#include "engine/task/task_definition.h"
#include "engine/validation_shards.h"
#include "model/detection_rows.h"

namespace trainer::engine {
namespace {

using Clock = std::chrono::steady_clock;

double elapsed_ms(Clock::time_point since) {
  return std::chrono::duration<double, std::milli>(Clock::now() - since).count();
}

// Restores a module's train/eval mode on scope exit.
class ModeGuard {
 public:
  explicit ModeGuard(torch::nn::Module& m) : module_(m), was_training_(m.is_training()) {
    module_.eval();
  }
  ~ModeGuard() { module_.train(was_training_); }

 private:
  torch::nn::Module& module_;
  bool was_training_;
};

// Images per forward on the CPU (measured on coco128 at 640, batch 16, 2 cores: 1 -> 49 ms an
// image and 843 MB peak RSS, 2 -> 48 ms / 879 MB, 4 -> 57 ms / 1.17 GB, 16 -> 86 ms / 1.54 GB).
constexpr int64_t kCpuForwardChunk = 2;

// The forward of `images` in slices of `chunk` images (0: all at once), the outputs joined back
// into one batch. On the CPU a batch of 16 at 640 px moves ~1 GB of activations through memory
// the caches cannot hold; slices of a few images give the same outputs (every layer is per image
// in eval mode) faster and with a fraction of the peak memory.
model::DetectOutput forward_in_chunks(model::YoloModelImpl& model, const at::Tensor& images,
                                      int64_t chunk) {
  if (chunk <= 0 || images.size(0) <= chunk) return model.forward_for_loss(images);
  std::vector<model::DetectOutput> parts;
  for (int64_t start = 0; start < images.size(0); start += chunk) {
    parts.push_back(model.forward_for_loss(images.slice(0, start, start + chunk)));
  }
  model::DetectOutput out;
  for (const auto field : model::DetectOutput::fields()) {
    const size_t levels = (parts[0].*field).size();
    for (size_t level = 0; level < levels; ++level) {
      std::vector<at::Tensor> slices;
      for (const auto& part : parts) slices.push_back((part.*field)[level]);
      (out.*field).push_back(torch::cat(slices, 0));
    }
  }
  return out;
}

}  // namespace

Validator::Validator(std::shared_ptr<const data::DatasetIndex> val_set,
                     const data::DatasetSpec& spec, const core::TrainConfig& config,
                     c10::Device device, bool standalone, std::shared_ptr<distributed::Group> group)
    : val_set_(std::move(val_set)),
      spec_(spec),
      config_(config),
      device_(device),
      truth_(build_validation_truth(*val_set_, spec, config)),
      group_(group && group->size() > 1 ? std::move(group) : nullptr) {
  auto options = data::val_loader_options(config, standalone);
  options.show_progress = false;
  if (group_) {
    options.rank = group_->rank();
    options.world_size = group_->size();
    options.shard_batches = true;
  }
  loader_ = std::make_unique<data::Loader>(*val_set_, options);
}

Validator::~Validator() = default;

ValidationOptions ValidationOptions::from_config(const core::TrainConfig& config) {
  ValidationOptions o;
  o.max_batches = config.run.val_batches;
  o.predict.conf = config.run.conf;
  // A task may validate at its own threshold (the reference's OBB: 0.01) when conf is left at
  // its default; any other value is the user's.
  if (config.run.conf == core::TrainConfig{}.run.conf) {
    if (const auto conf = make_task_definition(config)->validation_conf()) o.predict.conf = *conf;
  }
  o.predict.iou = config.run.iou;
  o.predict.max_det = config.run.max_det;
  // 8.4.190: `nms` null (default) or true validates YOLO26 on the one-to-many head with NMS.
  o.predict.use_one2many = config.run.nms != core::NmsMode::kOff;
  o.bf16 = config.run.precision == core::Precision::kBF16;
  return o;
}

ValidationResult Validator::run(model::YoloModelImpl& model, loss::YoloLoss* criterion,
                                const ValidationOptions& options) {
  ModeGuard mode(model);
  torch::NoGradGuard no_grad;
  const bool bf16 = options.bf16;
  const auto task = make_task_definition(model.name().task);
  const model::RowLayout layout = model.row_layout();
  const std::unique_ptr<TaskScorer> scorer =
      task->make_scorer({spec_, truth_.category_ids, layout, val_set_->nc(),
                         static_cast<int>(options.predict.max_det), options.keep_detections});
  ValidationResult result;
  std::vector<eval::Detection> detections;
  std::set<int64_t> seen_images;
  at::Tensor loss_sum;  // sized by the criterion's first items
  int64_t loss_batches = 0;
  // Summed batch by batch in plan order (on the device; sharded: on rank 0 after the gather).
  const auto add_loss = [&](const at::Tensor& items) {
    if (!loss_sum.defined()) loss_sum = torch::zeros_like(items);
    loss_sum += items;
    ++loss_batches;
  };
  ValidationShards shards;  // sharded: what each batch added, for rank 0
  loader_->start_epoch(0, /*mosaic=*/false);
  while (auto batch = loader_->next()) {
    if (options.max_batches > 0 && batch->index >= options.max_batches) break;
    const size_t first_detection = detections.size();
    std::vector<int64_t> batch_images;
    at::Tensor batch_items;
    auto t0 = Clock::now();
    auto images = data::images_to_device(batch->images, device_, torch::kFloat,
                                         model_memory_format(config_, device_));
    synchronize(device_);
    result.preprocess_ms += elapsed_ms(t0);

    t0 = Clock::now();
    model::DetectOutput raw;
    {
      core::AutocastGuard autocast(device_.type(), at::kBFloat16, bf16);
      raw = forward_in_chunks(model, images, device_.is_cuda() ? 0 : kCpuForwardChunk);
    }
    synchronize(device_);
    result.inference_ms += elapsed_ms(t0);

    t0 = Clock::now();
    if (criterion) {  // summed on the device: read once after the last batch
      const at::Tensor items = (*criterion)(raw, loss_targets_of(*batch), images.size(0))
                                   .items.detach()
                                   .to(torch::kFloat);
      if (group_) {
        batch_items = items;
      } else {
        add_loss(items);
      }
    }
    const std::vector<at::Tensor> per_image = model.postprocess(raw, options.predict);
    scorer->begin_batch({*batch, raw, images.size(2), images.size(3), device_});
    // The whole batch's detections reach the host in one copy (one sync per batch, not per image).
    const at::Tensor all_rows =
        per_image.empty() ? torch::zeros({0, layout.width()})
                          : torch::cat(per_image).to(torch::kCPU, torch::kFloat).contiguous();
    const float* r = all_rows.data_ptr<float>();
    for (size_t b = 0; b < per_image.size(); ++b) {
      const int64_t n = per_image[b].size(0);
      const model::HostRows rows{r, n, layout};
      r += layout.width() * n;
      const int64_t index = batch->dataset_indices[b];
      if (!seen_images.insert(index).second) continue;  // an image twice in a batch: once
      batch_images.push_back(index);
      eval::Detection entry;
      entry.image_id = truth_.image_ids.at(static_cast<size_t>(index));
      entry.file_name = val_set_->items[static_cast<size_t>(index)].image.filename().string();
      scorer->add_image({static_cast<int64_t>(b), batch->geometry[b], rows, per_image[b], entry},
                        detections);
    }
    result.postprocess_ms += elapsed_ms(t0);
    if (group_) {
      shards.add_batch(batch->index, *scorer, detections, first_detection, std::move(batch_images),
                       batch_items);
    }
    if (options.after_batch) options.after_batch(batch->index);
  }
  if (group_) {
    // Every rank's batches onto rank 0's scorer in the one-process order; the loss summed as one
    // process sums it (float, batch by batch). The other ranks keep their share's images and
    // times, and no metrics.
    shards.set_times(result.preprocess_ms, result.inference_ms, result.postprocess_ms);
    const MergedShards merged = shards.merge(*group_, *scorer, detections, seen_images);
    if (group_->rank() == 0) {
      result.preprocess_ms = merged.preprocess_ms;
      result.inference_ms = merged.inference_ms;
      result.postprocess_ms = merged.postprocess_ms;
      for (const at::Tensor& items : merged.loss_items) add_loss(items);
    }
    result.scored = group_->rank() == 0;
  }
  result.images = static_cast<int64_t>(seen_images.size());
  if (result.images > 0) {
    result.preprocess_ms /= result.images;
    result.inference_ms /= result.images;
    result.postprocess_ms /= result.images;
  }
  if (!result.scored) return result;
  if (loss_batches > 0) {
    const at::Tensor mean =
        (loss_sum / static_cast<double>(loss_batches)).to(torch::kCPU).to(torch::kDouble);
    for (int64_t k = 0; k < mean.size(0); ++k) result.loss_items.push_back(mean[k].item<double>());
  }
  std::optional<data::CocoFile> part;  // a run of part of the split scores only the images run
  if (options.coco && options.max_batches > 0) {
    std::set<int64_t> ids;
    for (int64_t index : seen_images) ids.insert(truth_.image_ids.at(static_cast<size_t>(index)));
    part = coco_truth_of_images(truth_.coco, ids);
  }
  scorer->finish(options.coco ? (part ? &*part : &truth_.coco) : nullptr, detections, result);
  result.fitness = task->fitness(result);
  if (options.keep_detections) result.detections = std::move(detections);
  return result;
}

}  // namespace trainer::engine
