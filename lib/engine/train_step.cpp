// See train_step.h. The order of operations is the reference's (section 3.2 of the spec):
// warmup/schedule -> forward+loss (autocast) -> backward -> [every `accumulate` batches: clip to
// max_grad_norm -> optimizer.step -> zero_grad -> EMA update].
#include "engine/train_step.h"

#include <torch/torch.h>

#include <algorithm>
#include <limits>

#include "core/autocast_guard.h"
#include "engine/batch_targets.h"
#include "engine/device/device.h"
#include "engine/device/memory_format.h"
#include "engine/multi_scale.h"
#include "engine/static_step/cuda_graph_step.h"
#include "engine/static_step/op_shape_trace.h"
#include "engine/training_context.h"
#include "loss/instance_cap.h"
#include "optim/clip.h"
#include "optim/step_scalars.h"

namespace trainer::engine {

namespace {

// Eager batches before the first capture (and after each recapture): PyTorch's guidance for
// whole-network capture is a few; they also run the first optimizer step, which makes its state.
constexpr int64_t kGraphWarmupBatches = 3;

}  // namespace

StepSettings step_settings(const TrainingContext& context) {
  const core::TrainConfig& config = context.config;
  StepSettings s;
  s.device = context.device;
  s.memory_format = model_memory_format(config, context.device);
  s.bf16 = context.bf16();
  s.static_shapes = config.run.static_shapes;
  s.max_instances = config.data.max_instances;
  s.cuda_graph = config.run.cuda_graph;
  s.max_grad_norm = config.optim.max_grad_norm;
  s.multi_scale = config.augment.multi_scale;
  s.imgsz = config.data.imgsz;
  s.seed = static_cast<uint64_t>(config.run.seed);
  s.world_size = context.world_size();
  return s;
}

TrainStep::TrainStep(TrainingContext& context)
    : settings_(step_settings(context)), net_(context.net), optimization_(context.optimization) {
  if (settings_.cuda_graph) {
    optimization_.optimizer->make_capturable(settings_.device);
    ema_weight_ = std::make_unique<optim::StepScalars>(std::vector<std::string>{"ema_weight"},
                                                       settings_.device);
    graph_ = std::make_unique<CudaGraphStep>(settings_.device, kGraphWarmupBatches);
  }
  reset_epoch();
}

TrainStep::~TrainStep() = default;

void TrainStep::state_replaced(const char* why) {
  if (graph_) graph_->invalidate(why);
}

void TrainStep::reset_epoch() {
  const auto options = torch::TensorOptions().dtype(torch::kFloat).device(settings_.device);
  // In place once made: a captured step adds to these tensors where they are.
  if (loss_sum_.defined()) {
    loss_sum_.zero_();
    non_finite_.zero_();
  } else {
    loss_sum_ = torch::zeros({static_cast<int64_t>(net_.columns.loss_names.size())}, options);
    non_finite_ = torch::zeros({}, options.dtype(torch::kBool));
  }
  batches_ = 0;
  dropped_instances_ = 0;
  largest_sample_instances_ = 0;
  // A new phase (close_mosaic, the loss weights' update): whether any parameter goes without a
  // gradient is decided again at the first backward.
  if (net_.reducer) net_.reducer->recheck();
}

void TrainStep::apply_schedule(int64_t ni) {
  const auto& s = optimization_.schedule;
  accumulate_ = optim::accumulate_at(s, ni);
  const bool has_momentum = optim::schedules_momentum(optimization_.choice.kind);
  const double momentum = optim::momentum_at(s, ni, optimization_.choice.momentum);
  for (auto& group : optimization_.optimizer->groups()) {
    group.lr = optim::group_lr(s, group.kind, group.initial_lr, ni);
    if (has_momentum) group.momentum = momentum;
  }
}

bool TrainStep::run(const data::Batch& batch, int64_t ni, StageClock* clock) {
  // The labels stay on the host: the loss checks and packs them there (no device read) and sends
  // the packed targets over.
  const loss::LossTargets targets = loss_targets_of(batch);
  if (graph_) {
    accumulate_graphed(batch, targets, clock);
  } else {
    accumulate_eager(batch, targets, ni, clock);
  }
  ++batches_;
  last_instances_ = batch.labels.size(0);
  if (ni - last_opt_step_ < accumulate_) return false;
  if (graph_) {
    optimizer_step_graphed(clock);
  } else {
    clip_step_ema(clock);
  }
  last_opt_step_ = ni;
  return true;
}

loss::GtTargets TrainStep::prepare_static(const loss::LossTargets& targets, int64_t batch,
                                          int64_t height, int64_t width) {
  OpShapeTrace::HostWork host_work;
  loss::LossTargets capped = targets;
  capped.static_instances = settings_.max_instances;
  const auto cap = loss::cap_instances(capped, batch, capped.static_instances);
  dropped_instances_ += cap.dropped;
  largest_sample_instances_ = std::max(largest_sample_instances_, cap.largest);
  return net_.criterion->prepare(capped, batch, static_cast<double>(height),
                                 static_cast<double>(width), settings_.device);
}

void TrainStep::accumulate_eager(const data::Batch& batch, const loss::LossTargets& targets,
                                 int64_t ni, StageClock* clock) {
  auto images = data::images_to_device(batch.images, settings_.device, torch::kFloat,
                                       settings_.memory_format);
  if (settings_.multi_scale > 0.0) {
    const auto stride = static_cast<int64_t>(net_.model->strides().back());
    const auto range = multi_scale_range(settings_.imgsz, settings_.multi_scale, stride);
    images = apply_multi_scale(images, draw_multi_scale_size(range, settings_.seed, ni), stride);
  }
  // Static shapes: the host prepares targets of a fixed shape first (capped, packed, copied), and
  // the rest of the step is device work whose shapes come from the config alone.
  const loss::GtTargets prepared =
      settings_.static_shapes
          ? prepare_static(targets, images.size(0), images.size(2), images.size(3))
          : loss::GtTargets{};
  if (clock) clock->mark("h2d");
  forward_backward(images, targets, prepared, clock);
}

void TrainStep::accumulate_graphed(const data::Batch& batch, const loss::LossTargets& targets,
                                   StageClock* clock) {
  // batch.images is the loader's (B, 3, H, W) uint8 view.
  const loss::GtTargets prepared =
      prepare_static(targets, batch.images.size(0), batch.images.size(2), batch.images.size(3));
  if (clock) clock->mark("h2d");
  // A fault-injection batch multiplies by a host NaN: eager, so no graph keeps it.
  graph_->accumulate(
      batch.images, prepared,
      [&](const at::Tensor& images, const loss::GtTargets& static_targets) {
        forward_backward(data::images_to_unit_float(images, torch::kFloat, settings_.memory_format),
                         targets, static_targets, nullptr);
      },
      /*eager=*/poison_next_);
  // One replay: the image copy into the static buffer, forward, loss and backward.
  if (clock) clock->mark("backward");
}

void TrainStep::forward_backward(const at::Tensor& images, const loss::LossTargets& targets,
                                 const loss::GtTargets& prepared, StageClock* clock) {
  loss::LossResult result;
  {
    // A captured step keeps no autocast cast cache (casts made during capture would be cached
    // tensors of the capture); the eager step keeps LibTorch's default.
    core::AutocastGuard autocast(settings_.device.type(), at::kBFloat16, settings_.bf16,
                                 graph_ ? std::optional<bool>(false) : std::nullopt);
    auto outputs = net_.model->forward_for_loss(images);
    result = settings_.static_shapes ? net_.criterion->compute(outputs, prepared, images.size(0))
                                     : (*net_.criterion)(outputs, targets, images.size(0));
  }
  if (poison_next_) {
    result.total = result.total * std::numeric_limits<double>::quiet_NaN();
    poison_next_ = false;
  }
  if (clock) clock->mark("forward_loss");
  // Data-parallel: the reducer averages gradients over ranks, so each rank's loss is scaled by
  // WORLD_SIZE (the reference's rule): the mean of the ranks' gradients of world_size * L_r is the
  // sum of theirs, the single-process gradient at the global batch.
  if (net_.reducer) {
    net_.reducer->backward(result.total * static_cast<double>(settings_.world_size));
  } else {
    result.total.backward();
  }
  if (clock) clock->mark("backward");
  loss_sum_.add_(result.items.to(torch::kFloat));
  non_finite_.logical_or_(torch::isfinite(result.total.detach()).logical_not());
}

void TrainStep::optimizer_step_graphed(StageClock* clock) {
  optim::Optimizer& optimizer = *optimization_.optimizer;
  optim::ModelEma& ema = *optimization_.ema;
  graph_->optimizer_step(
      [&] {
        optimizer.prepare_step();
        ema_weight_->set("ema_weight", 1.0 - ema.decay_at(ema.updates() + 1));
        ema_weight_->upload();
      },
      [&] { clip_step_ema(nullptr); });
  // One replay: clip, the optimizer step and the EMA update.
  if (clock) clock->mark("optimizer");
  optimizer.count_step();
  ema.count_update();
  last_grad_norm_ = grad_norm_;
}

void TrainStep::clip_step_ema(StageClock* clock) {
  const bool graphed = graph_ != nullptr;
  std::vector<at::Tensor> grads;
  grads.reserve(net_.trainable.size());
  for (const auto& p : net_.trainable) grads.push_back(p.grad());
  at::Tensor norm = optim::clip_grad_norm(grads, settings_.max_grad_norm).to(settings_.device);
  if (graphed) {
    // Made by the first (eager) step, outside any capture, and written in place from then on.
    if (!grad_norm_.defined()) grad_norm_ = at::empty_like(norm);
    grad_norm_.copy_(norm);
  } else {
    last_grad_norm_ = norm;
  }
  non_finite_.logical_or_(torch::isfinite(norm).logical_not());
  if (clock) clock->mark("clip");
  optimization_.optimizer->step();
  optimization_.optimizer->zero_grad(/*set_to_none=*/!graphed);
  if (clock) clock->mark("optimizer");
  if (graphed) {
    optimization_.ema->lerp_towards(net_.live_state, ema_weight_->slot("ema_weight"));
  } else {
    optimization_.ema->update(net_.live_state);
  }
  if (clock) clock->mark("ema");
}

at::Tensor TrainStep::mean_loss_items() const {
  return batches_ > 0 ? loss_sum_ / static_cast<double>(batches_) : loss_sum_;
}

bool TrainStep::saw_non_finite() const {
  return non_finite_.item<bool>();
}

}  // namespace trainer::engine
