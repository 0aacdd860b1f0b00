// See run_state.h.
// Tested by tests/integration/test_fit.cpp: resume bit-for-bit (make_checkpoint/restore_run),
//   non-finite rollback redoes the epoch (roll_back_epoch); keep_checkpoint_precision in
//   test_precision_policy.
#include "engine/checkpoint/run_state.h"

#include <ATen/CPUGeneratorImpl.h>
#include <ATen/Context.h>
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <ctime>
#include <stdexcept>

#include "core/config_writer.h"
#include "core/error.h"
#include "engine/train_step.h"
#include "engine/training_context.h"
#include "model/weights_io.h"
#include "optim/optimizer_kind.h"

namespace trainer::engine {
namespace {

std::string now_iso() {
  const std::time_t t = std::time(nullptr);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%S", std::localtime(&t));
  return text;
}

model::NamedTensorList to_list(const TensorMap& map) {
  return model::NamedTensorList(map.begin(), map.end());
}

TensorMap to_map(const optim::NamedTensors& named) {
  TensorMap map;
  for (const auto& [k, v] : named) map.emplace(k, v);
  return map;
}

// Parameter gradients by name (the ones an optimizer step has not consumed yet).
TensorMap pending_gradients(const model::YoloModelImpl& model) {
  TensorMap out;
  for (const auto& p : model.named_parameters()) {
    if (p.value().grad().defined()) out.emplace(p.key(), p.value().grad().detach().clone());
  }
  return out;
}

void restore_gradients(model::YoloModelImpl& model, const TensorMap& grads) {
  for (auto& p : model.named_parameters()) {
    auto it = grads.find(p.key());
    if (it == grads.end()) {
      p.value().mutable_grad() = at::Tensor();
    } else {
      p.value().mutable_grad() = it->second.to(p.value().device(), p.value().scalar_type());
    }
  }
}

// Model, EMA, optimizer and loss-schedule state from a checkpoint.
void restore_state(TrainingContext& ctx, const Checkpoint& ckpt, const std::string& source) {
  model::load_weights(*ctx.net.model, to_list(ckpt.model), source);
  ctx.optimization.ema->load_state_dict(ckpt.ema);
  ctx.optimization.optimizer->load_state_dict(ckpt.optimizer);
  ctx.net.criterion->set_epoch_updates(ckpt.loss_updates,
                                       static_cast<int>(ctx.config.schedule.epochs));
}

// The checkpoint's EMA weights into the live model (the reference's non-finite recovery).
void load_ema_into_model(TrainingContext& ctx, const Checkpoint& ckpt, const std::string& source) {
  const model::NamedTensorList list = ema_weights(ckpt);
  for (const auto& [key, tensor] : list) {
    if (tensor.is_floating_point() && !torch::isfinite(tensor).all().item<bool>()) {
      throw core::InputError(fmt::format("{}: its EMA weights are not finite ({})", source, key));
    }
  }
  model::load_weights(*ctx.net.model, list, source + " (EMA weights)");
}

}  // namespace

Checkpoint make_checkpoint(const TrainingContext& ctx, const TrainStep& step,
                           const core::TrainConfig& recorded, int64_t epoch, double best_fitness,
                           int64_t best_epoch) {
  Checkpoint ckpt;
  ckpt.config_yaml = core::config_to_yaml(recorded);
  ckpt.epoch = epoch;
  ckpt.iteration = ctx.batches_per_epoch() * (epoch + 1);
  ckpt.last_opt_step = step.last_opt_step();
  ckpt.best_fitness = best_fitness;
  ckpt.best_epoch = best_epoch;
  ckpt.loss_updates = ctx.net.criterion->epoch_updates();
  ckpt.world_size = ctx.world_size();
  ckpt.precision = ctx.bf16() ? "bf16" : "fp32";
  // The file keeps the reference's spelling of the optimizer (a string, as its checkpoints do).
  ckpt.optimizer_name = optim::optimizer_kind_name(ctx.optimization.choice.kind);
  ckpt.model = to_map(ctx.net.live_state);
  ckpt.ema = ctx.optimization.ema->state_dict();
  ckpt.optimizer = ctx.optimization.optimizer->state_dict();
  if (step.last_opt_step() < ckpt.iteration - 1)
    ckpt.pending_grads = pending_gradients(*ctx.net.model);
  ckpt.rng_cpu = at::detail::getDefaultCPUGenerator().get_state();
  // A CUDA run's generator too (dropout and any random op on the device); the CPU build compiles
  // this and never runs it.
  if (ctx.device.is_cuda())
    ckpt.rng_cuda = at::globalContext().defaultGenerator(ctx.device).get_state();
  ckpt.date = now_iso();
  return ckpt;
}

void keep_checkpoint_precision(TrainingContext& ctx, const Checkpoint& checkpoint) {
  if (ctx.config.run.precision != core::Precision::kAuto) return;
  if (checkpoint.precision != "bf16" && checkpoint.precision != "fp32") return;
  const bool bf16 = checkpoint.precision == "bf16";
  if (bf16 == ctx.bf16()) return;
  ctx.precision.precision = bf16 ? core::Precision::kBF16 : core::Precision::kFP32;
  ctx.precision.reason = fmt::format(
      "precision: auto -> {}: kept from the checkpoint, which chose it when the run started (here "
      "and now it would be: {})",
      checkpoint.precision, ctx.precision.reason);
  spdlog::info("{}", ctx.precision.reason);
}

int64_t restore_run(TrainingContext& ctx, TrainStep& step, const Checkpoint& checkpoint,
                    const std::string& source) {
  restore_state(ctx, checkpoint, source);
  if (checkpoint.world_size != ctx.world_size()) {
    spdlog::warn(
        "{} was trained on {} rank(s) and resumes on {}: each rank's share of the data and the "
        "per-rank batch change, so the run continues correctly but not bit-identically to an "
        "uninterrupted one",
        source, checkpoint.world_size, ctx.world_size());
  }
  if (checkpoint.rng_cpu.defined()) {
    at::Generator generator = at::detail::getDefaultCPUGenerator();  // shares the global state
    generator.set_state(checkpoint.rng_cpu);
  }
  // A CUDA checkpoint resumed on a CUDA device restores its generator; on the CPU it is not used.
  if (checkpoint.rng_cuda.defined() && ctx.device.is_cuda()) {
    at::Generator generator = at::globalContext().defaultGenerator(ctx.device);
    generator.set_state(checkpoint.rng_cuda);
  }
  const int64_t start_epoch = checkpoint.epoch + 1;
  step.set_last_opt_step(checkpoint.last_opt_step);
  // Gradients accumulated after the last optimizer step carry into the next epoch in a straight
  // run; the checkpoint holds them so a resume continues with the same ones.
  restore_gradients(*ctx.net.model, checkpoint.pending_grads);
  step.state_replaced("resumed from a checkpoint");
  const int64_t epochs = ctx.config.schedule.epochs;
  if (start_epoch >= epochs) {
    throw core::ConfigError(
        fmt::format("{}: the run already finished its {} epochs; start a new run (e.g. with this "
                    "checkpoint's weights) instead of resuming",
                    source, epochs));
  }
  spdlog::info("resuming from {} at epoch {}/{}", source, start_epoch + 1, epochs);
  return start_epoch;
}

void roll_back_epoch(TrainingContext& ctx, TrainStep& step, const std::optional<Checkpoint>& good,
                     const std::string& source, int64_t epoch, int recoveries, int max_recoveries) {
  if (!good || recoveries > max_recoveries) {
    throw std::runtime_error(fmt::format(
        "non-finite loss or gradient in epoch {} ({}); try a lower lr0, precision=fp32, or "
        "check the labels",
        epoch + 1,
        good ? fmt::format("{} recoveries from {} did not help", max_recoveries, source) : source));
  }
  spdlog::warn(
      "non-finite loss or gradient in epoch {}: discarding its updates and running it again "
      "from {} with its EMA weights ({}/{})",
      epoch + 1, source, recoveries, max_recoveries);
  restore_state(ctx, *good, source);
  load_ema_into_model(ctx, *good, source);
  // As a resume from `good` would continue: the failed pass's gradients (NaN under accumulation)
  // give way to the ones pending when `good` was saved, and the accumulation counter is the one
  // saved with them, so the redone epoch's optimizer steps land on the same iterations as in an
  // uninterrupted epoch.
  ctx.optimization.optimizer->zero_grad();
  restore_gradients(*ctx.net.model, good->pending_grads);
  step.set_last_opt_step(good->last_opt_step);
  step.state_replaced("rolled back after a non-finite loss");
}

}  // namespace trainer::engine
