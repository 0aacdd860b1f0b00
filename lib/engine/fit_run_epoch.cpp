// Tested by tests/integration/test_fit.cpp: end-to-end fit: epochs, checkpoints, results.csv,
//   non-finite rollback under accumulation, first-epoch non-finite stop.
// FitRun's per-epoch phases (engine/fit_run.h): the training pass over the loader, the non-finite
// rollback, validation of the EMA weights, the best fitness, results.csv/plots/TensorBoard, the
// checkpoints (last.ckpt written last commits the epoch), and the decisions to stop (`time`,
// patience) that all ranks agree on.
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/error.h"
#include "data/loader_options.h"
#include "engine/checkpoint/checkpoint_exchange.h"
#include "engine/checkpoint/fit_start.h"
#include "engine/checkpoint/run_state.h"
#include "engine/device/memory_format.h"
#include "engine/fit_run.h"
#include "engine/log/results_plot.h"
#include "model/fuse.h"
#include "model/weights_io.h"

namespace trainer::engine {
namespace {

constexpr int kMaxNonFiniteRecoveries = 3;

std::vector<double> to_vector(const at::Tensor& items) {
  const at::Tensor host = items.cpu();
  std::vector<double> out;
  for (int64_t k = 0; k < host.size(0); ++k) out.push_back(host[k].item<double>());
  return out;
}

std::vector<double> learning_rates(TrainingContext& ctx) {
  std::vector<double> lrs;
  for (const auto& g : ctx.optimization.optimizer->groups()) lrs.push_back(g.lr);
  return lrs;
}

// The order of an epoch's files makes last.ckpt the epoch's commit point: best.ckpt and best.pt
// (on improvement), epochN.ckpt, last.pt and (final epoch) predictions.json are all written
// before it. A kill anywhere before the rename of last.ckpt leaves last.ckpt at the previous
// epoch, so resume redoes this epoch and rewrites every one of them exactly; a kill after it
// leaves the epoch complete. (A last.ckpt whose best_epoch has no best.ckpt cannot happen.)
void save_checkpoints(const Checkpoint& ckpt, model::YoloModelImpl& eval_model,
                      const std::filesystem::path& weights_dir, bool improved, int64_t save_period,
                      const std::function<void()>& before_commit) {
  if (improved) {
    save_checkpoint(ckpt, weights_dir / "best.ckpt");
    model::save_weights(eval_model, weights_dir / "best.pt");
  }
  if (save_period > 0 && (ckpt.epoch + 1) % save_period == 0) {
    save_checkpoint(ckpt, weights_dir / fmt::format("epoch{}.ckpt", ckpt.epoch + 1));
  }
  model::save_weights(eval_model, weights_dir / "last.pt");
  if (before_commit) before_commit();
  save_checkpoint(ckpt, weights_dir / "last.ckpt");
}

}  // namespace

TrainedEpoch FitRun::train_one_epoch(int64_t epoch) {
  TrainingContext& ctx = *ctx_;
  TrainStep& step = *step_;
  TrainedEpoch trained;
  trained.start = std::chrono::steady_clock::now();
  const int64_t nb = ctx.batches_per_epoch();
  ctx.inputs.train_loader->start_epoch(
      static_cast<int>(epoch), data::mosaic_enabled(config_, static_cast<int>(epoch), epochs_));
  step.reset_epoch();
  progress_->start_epoch(epoch);
  const bool previews =
      ranks_.main() && config_.run.plots && epoch == start_epoch_ && start_epoch_ == 0;
  const FitHooks& hooks = options_.hooks;
  int64_t i = 0;
  while (auto batch = ctx.inputs.train_loader->next()) {
    const int64_t ni = i + nb * epoch;
    step.apply_schedule(ni);
    if (hooks.before_batch) hooks.before_batch(epoch, i);
    if (hooks.inject_non_finite && hooks.inject_non_finite(epoch, i)) step.poison_next_loss();
    const bool stepped = step.run(*batch, ni);
    if (hooks.observe_optimizer_step && stepped) hooks.observe_optimizer_step(epoch, i);
    // `time`: stop at the first optimizer step past the budget (the reference's rule); under
    // data-parallel training the ranks agree after every optimizer step, as the reference does.
    if (budget_->active() && stepped) {
      trained.out_of_time = budget_->exhausted(elapsed());
      if (ranks_.group) trained.out_of_time = ranks_.group->any(trained.out_of_time);
    }
    if (previews && i < 3) {
      previews_.push_back(result_.run_dir / fmt::format("train_batch{}.jpg", i));
      ctx.task->save_batch_preview(*batch, ctx.inputs.dataset.names, previews_.back());
    }
    ++i;
    if (progress_->due()) {
      progress_->update(i, to_vector(step.mean_loss_items()), step.last_instances());
    }
    if (trained.out_of_time) break;
  }
  trained.losses = to_vector(step.mean_loss_items());
  progress_->finish(trained.losses, step.last_instances());
  trained.learning_rates = learning_rates(ctx);
  ctx.net.criterion->end_epoch(static_cast<int>(epochs_));  // the loss schedule
  trained.non_finite = step.saw_non_finite();
  if (ranks_.group)
    trained.non_finite = ranks_.group->any(trained.non_finite);  // every rank, or none
  return trained;
}

bool FitRun::redo_if_non_finite(int64_t epoch, const TrainedEpoch& trained) {
  if (!trained.non_finite) {
    non_finite_recoveries_ = 0;
    return false;
  }
  // The checkpoint this run last saved, from whichever rank holds it (rank 0 wrote it; without a
  // shared file system the others receive it).
  std::optional<Checkpoint> good;
  std::string source = "no checkpoint to go back to yet";
  if (last_saved_epoch_ >= 0) {
    AgreedCheckpoint agreed = agree_on_checkpoint(ranks_.group.get(), weights_dir_ / "last.ckpt",
                                                  {run_id_, last_saved_epoch_});
    if (!agreed.checkpoint) {
      throw core::InputError(fmt::format(
          "{}: no rank holds the checkpoint of epoch {} this run saved any more (it was replaced "
          "by something else, or removed: {}); the run stops rather than continue from it",
          (weights_dir_ / "last.ckpt").string(), last_saved_epoch_ + 1, agreed.describe_offers()));
    }
    good = std::move(agreed.checkpoint);
    source = agreed.where;
  }
  roll_back_epoch(*ctx_, *step_, good, source, epoch, ++non_finite_recoveries_,
                  kMaxNonFiniteRecoveries);
  return true;
}

std::optional<ValidationResult> FitRun::validate_ema(int64_t epoch, bool final_epoch) {
  TrainingContext& ctx = *ctx_;
  ctx.optimization.ema->copy_to(eval_state_);
  if (!validator_ || !(config_.run.val || final_epoch)) return std::nullopt;
  // Every rank validates rank 0's EMA, as the reference broadcasts the EMA buffers first: the
  // parameters agree, the BatchNorm statistics are per rank (broadcast_buffers=False).
  if (ranks_.group) ranks_.group->broadcast(eval_model_->buffers(), 0);
  auto vo = ValidationOptions::from_config(config_);
  vo.bf16 = ctx.bf16();  // the run's precision, `auto` resolved
  vo.keep_detections = config_.run.save_json && final_epoch;
  if (options_.hooks.after_validation_batch) {
    vo.after_batch = [this, epoch](int64_t b) { options_.hooks.after_validation_batch(epoch, b); };
  }
  // Scored on a BN-folded copy of the EMA weights, as the reference validates a fused model;
  // eval_model_ keeps its BatchNorms for the .pt export.
  auto fused = model::fused_copy(*eval_model_);
  apply_memory_format(*fused, model_memory_format(config_, ctx.device));
  std::optional<ValidationResult> val = validator_->run(*fused, ctx.net.criterion.get(), vo);
  if (!val->scored) return std::nullopt;  // another rank's share: rank 0 has the metrics
  spdlog::info("validation (EMA weights, {} images):\n{}", val->images,
               ctx.task->validation_table(*val, ctx.inputs.dataset.names,
                                          options_.per_class && final_epoch));
  return val;
}

bool FitRun::update_best(int64_t epoch, const TrainedEpoch& trained,
                         const std::optional<ValidationResult>& val) {
  double loss_sum = 0;
  for (double l : trained.losses) loss_sum += l;
  const double fitness = val ? ctx_->task->fitness(*val) : -loss_sum;
  const bool improved = result_.best_epoch < 0 || fitness >= result_.best_fitness;
  if (improved) {
    result_.best_fitness = fitness;
    result_.best_epoch = epoch;
  }
  return improved;
}

void FitRun::record_epoch(int64_t epoch, const TrainedEpoch& trained,
                          const std::optional<ValidationResult>& val) {
  if (!ranks_.main()) return;
  EpochRecord record = layout_;
  record.epoch = epoch + 1;
  record.seconds = elapsed();
  record.train_loss = trained.losses;
  record.learning_rates = trained.learning_rates;
  if (val) record.validation = ctx_->task->epoch_validation(*val);
  results_->append(record.row());
  if (config_.run.plots)
    plot_results(results_->columns(), results_->rows(), result_.run_dir / "results.png");
  if (tensorboard_) {
    tensorboard_->epoch(record, seconds_since(trained.start));
    for (const auto& file : previews_) tensorboard_->image(file.stem().string(), file, epoch + 1);
  }
  previews_.clear();
}

void FitRun::save_epoch(int64_t epoch, bool improved, bool final_epoch,
                        const std::optional<ValidationResult>& val) {
  if (ranks_.main()) {
    // The final epoch's predictions are written before its last.ckpt (the commit point), so a
    // kill before that redoes the epoch on resume and writes them again.
    const bool write_predictions = val && final_epoch && config_.run.save_json;
    const TaskDefinition& task = *ctx_->task;
    Checkpoint ckpt = make_checkpoint(*ctx_, *step_, recorded_config(user_config_, decisions_),
                                      epoch, result_.best_fitness, result_.best_epoch);
    ckpt.run_id = run_id_;
    ckpt.results_csv = format_results_csv(results_->columns(), results_->rows());
    save_checkpoints(ckpt, *eval_model_, weights_dir_, improved, config_.run.save_period, [&] {
      if (!write_predictions) return;
      task.write_predictions(*val, ctx_->inputs.dataset.names,
                             result_.run_dir / "predictions.json");
      spdlog::info("save_json: {}", (result_.run_dir / "predictions.json").string());
    });
    if (options_.records) {  // what a restarted attempt that cannot read it reports (fit_start.h)
      options_.records->set(kCommittedRecord,
                            committed_record(epoch, (weights_dir_ / "last.ckpt").string()));
    }
  }
  last_saved_epoch_ = epoch;  // every rank: a rollback reloads what rank 0 saved
}

void FitRun::end_epoch(int64_t epoch, const TrainedEpoch& trained,
                       std::optional<ValidationResult> val) {
  ++result_.epochs_completed;
  if (val) result_.last_validation = std::move(val);
  const at::Tensor grad_norm = step_->last_grad_norm();
  spdlog::info(
      "epoch {}/{} done in {}{}", epoch + 1, epochs_, format_duration(seconds_since(trained.start)),
      grad_norm.defined() ? fmt::format(" (gradient norm {:.3g} before clipping, at the last step)",
                                        grad_norm.item<double>())
                          : std::string());
  if (config_.run.static_shapes) {
    const int64_t dropped = step_->dropped_instances();
    spdlog::log(dropped > 0 ? spdlog::level::warn : spdlog::level::info,
                "static_shapes: at most {} objects in a training sample this epoch; {} dropped "
                "above max_instances {}",
                step_->largest_sample_instances(), dropped, config_.data.max_instances);
  }
}

bool FitRun::agree_to_stop(int64_t epoch, const TrainedEpoch& trained, bool final_epoch) {
  if (trained.out_of_time) {
    spdlog::info("time: the {:g} h budget is used up after {} epochs", config_.schedule.time,
                 epoch + 1);
    return true;
  }
  if (budget_->active()) {  // the schedule follows the epochs the budget holds
    epochs_ = budget_->epochs_for(elapsed(), result_.epochs_completed);
    if (ranks_.group)
      epochs_ = ranks_.group->broadcast_value(epochs_, 0);  // rank 0's clock decides
    ctx_->optimization.schedule.epochs = epochs_;
    progress_->set_epochs(epochs_);
    if (epoch + 1 >= epochs_) {
      spdlog::info("time: {} epochs fit in the {:g} h budget; done", epochs_,
                   config_.schedule.time);
      return true;
    }
  }
  // Early stopping (the reference's EarlyStopping: no improvement for `patience` epochs), decided
  // where the validation ran (rank 0) and agreed by all ranks.
  bool stop_early = ranks_.main() && config_.schedule.patience > 0 &&
                    epoch - result_.best_epoch >= config_.schedule.patience && !final_epoch;
  if (ranks_.group) stop_early = ranks_.group->any(stop_early);
  if (stop_early) {
    spdlog::info("early stopping: no improvement for {} epochs (best epoch {})",
                 config_.schedule.patience, result_.best_epoch + 1);
    result_.early_stopped = true;
  }
  return stop_early;
}

FitResult FitRun::finish_run() {
  result_.seconds = elapsed();
  const auto results_png = result_.run_dir / "results.png";
  if (tensorboard_ && config_.run.plots && std::filesystem::exists(results_png)) {
    tensorboard_->image("results", results_png, last_saved_epoch_ + 1);
  }
  if (ranks_.main()) {
    spdlog::info("{} epochs completed in {}; best fitness {:.4f} at epoch {}",
                 result_.epochs_completed, format_duration(result_.seconds), result_.best_fitness,
                 result_.best_epoch + 1);
    spdlog::info("results: {}", result_.run_dir.string());
  }
  return std::move(result_);
}

}  // namespace trainer::engine
