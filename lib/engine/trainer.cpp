// See trainer.h. Policies chosen where the reference leaves room (README "Training"):
// - Non-finite loss or gradient: flagged on the device every step (no host sync), read once per
//   epoch. The epoch's updates are then discarded by reloading the last checkpoint (its EMA
//   weights into the model, EMA, optimizer, loss schedule, the failed pass's gradients replaced by
//   the checkpoint's pending ones, the accumulation counter restored) and the same epoch runs
//   again, as the reference does; after 3 failures in a row, or in the first epoch
//   (nothing to go back to), the run stops with an error that says what to try. The checkpoint
//   must be the one this run last wrote (engine/checkpoint/run_state.h, roll_back_epoch).
// - Checkpoints: weights/best.ckpt on improvement, epochN.ckpt every save_period epochs, then
//   weights/last.ckpt every epoch (with any gradients pending under accumulation), written last:
//   it commits the epoch (save_checkpoints); the EMA weights are also exported as weights/last.pt
//   and best.pt (lib/model/weights_io.h). Resuming from a checkpoint older than the run's
//   last.ckpt continues in a new folder <run>-from-epochN (engine/checkpoint/resume.h). Rank 0
//   holds the run folder's lock (core/run_lock.h) for the whole run.
// - What depends on the task (loss items, metrics, fitness, previews) is asked of the run's
//   TaskDefinition (engine/task/task_definition.h).
// - Data-parallel (several ranks): every rank trains its shard with gradients averaged in backward
//   (TrainingContext::reducer); rank 0 alone validates (the others wait; the reference shards
//   validation over the ranks), logs, and writes results and checkpoints: no other rank writes
//   anything in the run folder (which need not exist on their machines). Decisions that end or
//   repeat an epoch (non-finite rollback, `time`, early stopping) are agreed through the group so
//   that no rank waits for a peer that has stopped.
#include "engine/trainer.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <functional>
#include <optional>
#include <utility>

#include "core/atomic_file.h"
#include "core/config_writer.h"
#include "core/logging.h"
#include "core/run_lock.h"
#include "data/loader_options.h"
#include "engine/checkpoint/model_source.h"
#include "engine/checkpoint/run_state.h"
#include "engine/device/device.h"
#include "engine/device/memory_format.h"
#include "engine/log/epoch_record.h"
#include "engine/log/progress.h"
#include "engine/log/results_log.h"
#include "engine/log/results_plot.h"
#include "engine/log/tensorboard_log.h"
#include "engine/time_budget.h"
#include "engine/train_step.h"
#include "engine/training_context.h"
#include "model/fuse.h"
#include "model/model_name.h"
#include "model/weights_io.h"

namespace trainer::engine {
namespace {

constexpr int kMaxNonFiniteRecoveries = 3;

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

std::vector<double> to_vector(const at::Tensor& items) {
  const at::Tensor host = items.cpu();
  std::vector<double> out;
  for (int64_t k = 0; k < host.size(0); ++k) out.push_back(host[k].item<double>());
  return out;
}

std::vector<double> learning_rates(TrainingContext& ctx) {
  std::vector<double> lrs;
  for (const auto& g : ctx.optimizer->groups()) lrs.push_back(g.lr);
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

// A new run in a folder that already holds an earlier run's results (exist_ok=true) keeps them:
// results.csv and args.yaml move to results-earlierN.csv / args-earlierN.yaml (the first free N).
void keep_earlier_results(const std::filesystem::path& run_dir) {
  if (!std::filesystem::exists(run_dir / "results.csv")) return;
  int n = 1;
  while (std::filesystem::exists(run_dir / fmt::format("results-earlier{}.csv", n))) ++n;
  for (const auto& [name, moved] :
       {std::pair<std::string, std::string>{"results.csv", fmt::format("results-earlier{}.csv", n)},
        {"args.yaml", fmt::format("args-earlier{}.yaml", n)}}) {
    if (!std::filesystem::exists(run_dir / name)) continue;
    std::filesystem::rename(run_dir / name, run_dir / moved);
    spdlog::info("{} held an earlier run's {}: kept as {}", run_dir.string(), name, moved);
  }
}

}  // namespace

FitResult fit(const core::TrainConfig& user_config, const FitOptions& options) {
  const auto run_start = std::chrono::steady_clock::now();
  const std::shared_ptr<distributed::Group>& group = options.group;
  const int rank = group ? group->rank() : options.rank;
  const bool main_rank = rank == 0;
  make_task_definition(user_config);  // an unimplemented task fails before the run folder exists
  // This rank's config: its own device from a device list (device=0,1 -> rank 1 uses 1).
  core::TrainConfig config = user_config;
  config.run.task = resolved_task(user_config);  // a weights file's own task, recorded in args.yaml
  config.run.device = device_for_rank(user_config.run.device, options.local_rank,
                                      group ? options.local_world_size : 1);
  // Every check that loads no data, before the run folder and the configuration table: a bad
  // device, model name or dataset yaml is the first thing reported, and nothing is written.
  (void)check_run_config(config, group ? group->size() : options.world_size);

  // Run folder: a resumed run continues in its own folder (runs/x/weights/last.ckpt -> runs/x).
  // Rank 0 creates it; the others take its name (they never write there).
  FitResult result;
  RunFolder folder = open_run_folder(config, main_rank);
  if (group) folder.dir = group->broadcast_text(folder.dir.string(), 0);
  result.run_dir = folder.dir;
  const auto weights_dir = result.run_dir / "weights";
  std::optional<core::RunLock> lock;  // one live run per folder (rank 0 holds it)
  // The user's config (device list included) with the run's task: a weights file's own.
  core::TrainConfig recorded = user_config;
  recorded.run.task = config.run.task;
  if (main_rank) {
    lock.emplace(result.run_dir);
    if (!lock->stale_holder().empty()) {
      spdlog::info("{}: took over the lock of a run that ended without releasing it ({})",
                   result.run_dir.string(), lock->stale_holder());
    }
    if (!folder.resume) keep_earlier_results(result.run_dir);
    std::filesystem::create_directories(weights_dir);
    core::add_run_log_file(result.run_dir, options.rank, "train.log");
    for (const auto& dir : {result.run_dir, weights_dir}) {
      for (const auto& stale : core::remove_stale_temporaries(dir))
        spdlog::info("removed {} (left by an interrupted write)", stale.string());
    }
    core::write_config_yaml(recorded, result.run_dir / "args.yaml");
    spdlog::info("run folder: {}", result.run_dir.string());
    spdlog::info("configuration:\n{}", core::config_table(recorded));
  }

  ContextOptions context_options;
  context_options.rank = options.rank;
  context_options.world_size = options.world_size;
  context_options.local_rank = options.local_rank;
  context_options.group = group;
  context_options.show_progress = options.interactive && main_rank;
  context_options.need_val = main_rank;
  TrainingContext ctx = build_training_context(config, context_options);
  ctx.config.run.device = user_config.run.device;              // checkpoints keep the device list
  if (ctx.config.model.cls_width != config.model.cls_width) {  // fine-tuning rebuilt the branches
    config.model.cls_width = ctx.config.model.cls_width;
    recorded.model.cls_width = ctx.config.model.cls_width;
    if (main_rank) core::write_config_yaml(recorded, result.run_dir / "args.yaml");
  }
  if (folder.resume) keep_checkpoint_precision(ctx, *folder.resume);
  const TaskDefinition& task = *ctx.task;
  // Rank 0 validates with the per-rank batch (the reference's val batch is 2 x batch / world).
  core::TrainConfig val_config = config;
  val_config.run.precision = ctx.precision.precision;  // auto resolved
  val_config.data.batch = config.data.batch / ctx.world_size();
  std::optional<Validator> validator;
  if (main_rank) validator.emplace(ctx.val_set, ctx.dataset, val_config, ctx.device);
  auto eval_model = task.build_model(resolve_model_source(config).name, ctx.dataset);
  eval_model->to(ctx.device);
  apply_memory_format(*eval_model, model_memory_format(config, ctx.device));
  const auto eval_state = named_state(*eval_model);

  TrainStep step(ctx);
  int64_t epochs = config.schedule.epochs;  // `time` re-estimates it after every epoch
  const TimeBudget budget(config.schedule.time);
  bool out_of_time = false;
  const int64_t nb = ctx.batches_per_epoch();
  int64_t start_epoch = 0;
  if (folder.resume) {
    start_epoch = restore_run(ctx, step, *folder.resume, config.run.resume);
    result.best_fitness = folder.resume->best_fitness;
    result.best_epoch = folder.resume->best_epoch;
  }
  EpochRecord layout;  // the columns: the task's loss items and metrics, the parameter groups
  layout.columns = ctx.columns;
  layout.train_loss.assign(ctx.columns.loss_names.size(), 0.0);
  layout.learning_rates.assign(ctx.optimizer->groups().size(), 0.0);
  std::optional<ResultsLog> results;  // rank 0 alone writes the run folder
  if (main_rank) results.emplace(result.run_dir / "results.csv", layout.header(), start_epoch);
  std::optional<TensorBoardLog> tensorboard;  // the same rows as events, plus the pictures
  if (main_rank && config.run.tensorboard) tensorboard.emplace(result.run_dir);
  std::vector<std::filesystem::path> previews;  // written this epoch, sent with its events
  ProgressLine progress(epochs, nb, config.data.imgsz, options.interactive && main_rank,
                        ctx.columns.loss_names);
  int non_finite_recoveries = 0;  // consecutive, reset by a good epoch (the reference's rule)
  int64_t last_saved_epoch = folder.resume ? folder.resume->epoch : -1;  // what last.ckpt holds

  for (int64_t epoch = start_epoch; epoch < epochs; ++epoch) {
    // --- train one epoch: loader -> step (schedule, forward+loss, backward, clip, optim, EMA)
    const auto epoch_start = std::chrono::steady_clock::now();
    ctx.train_loader->start_epoch(static_cast<int>(epoch),
                                  data::mosaic_enabled(config, static_cast<int>(epoch), epochs));
    step.reset_epoch();
    progress.start_epoch(epoch);
    int64_t i = 0;
    while (auto batch = ctx.train_loader->next()) {
      const int64_t ni = i + nb * epoch;
      step.apply_schedule(ni, epoch);
      if (options.inject_non_finite && options.inject_non_finite(epoch, i)) step.poison_next_loss();
      step.run(*batch, ni);
      if (options.observe_optimizer_step && step.last_opt_step() == ni) {
        options.observe_optimizer_step(epoch, i);
      }
      // `time`: stop at the first optimizer step past the budget (the reference's rule); under
      // data-parallel training the ranks agree after every optimizer step, as the reference does.
      if (budget.active() && step.last_opt_step() == ni) {
        out_of_time = budget.exhausted(seconds_since(run_start));
        if (group) out_of_time = group->any(out_of_time);
      }
      if (main_rank && config.run.plots && epoch == start_epoch && i < 3 && start_epoch == 0) {
        previews.push_back(result.run_dir / fmt::format("train_batch{}.jpg", i));
        task.save_batch_preview(*batch, ctx.dataset.names, previews.back());
      }
      ++i;
      if (progress.due()) {
        progress.update(i, to_vector(step.mean_loss_items()), step.last_instances());
      }
      if (out_of_time) break;
    }
    const std::vector<double> losses = to_vector(step.mean_loss_items());
    progress.finish(losses, step.last_instances());
    const std::vector<double> lrs = learning_rates(ctx);

    // --- epoch end: loss schedule, non-finite check (then the same epoch again)
    ctx.criterion->end_epoch(static_cast<int>(epochs));
    bool non_finite = step.saw_non_finite();
    if (group) non_finite = group->any(non_finite);  // every rank rolls back, or none
    if (non_finite) {
      roll_back_epoch(ctx, step, weights_dir / "last.ckpt", epoch, last_saved_epoch,
                      ++non_finite_recoveries, kMaxNonFiniteRecoveries);
      --epoch;
      continue;
    }
    non_finite_recoveries = 0;

    // --- validation on a copy of the EMA weights (the shadow is never touched)
    ctx.ema->copy_to(eval_state);
    const bool final_epoch = epoch + 1 >= epochs || out_of_time;
    std::optional<ValidationResult> val;
    if (validator && (config.run.val || final_epoch)) {
      auto vo = ValidationOptions::from_config(config);
      vo.keep_detections = config.run.save_json && final_epoch;
      // Scored on a BN-folded copy of the EMA weights, as the reference validates a fused model;
      // eval_model keeps its BatchNorms for the .pt export.
      auto fused = model::fused_copy(*eval_model);
      apply_memory_format(*fused, model_memory_format(config, ctx.device));
      val = validator->run(*fused, ctx.criterion.get(), vo);
      if (main_rank) {
        spdlog::info(
            "validation (EMA weights, {} images):\n{}", val->images,
            task.validation_table(*val, ctx.dataset.names, options.per_class && final_epoch));
      }
    }
    double loss_sum = 0;
    for (double l : losses) loss_sum += l;
    const double fitness = val ? task.fitness(*val) : -loss_sum;
    const bool improved = result.best_epoch < 0 || fitness >= result.best_fitness;
    if (improved) {
      result.best_fitness = fitness;
      result.best_epoch = epoch;
    }

    // --- results and checkpoints
    if (main_rank) {
      EpochRecord record = layout;
      record.epoch = epoch + 1;
      record.seconds = seconds_since(run_start);
      record.train_loss = losses;
      record.learning_rates = lrs;
      if (val) record.validation = task.epoch_validation(*val);
      results->append(record.row());
      if (config.run.plots)
        plot_results(results->columns(), results->rows(), result.run_dir / "results.png");
      if (tensorboard) {
        tensorboard->epoch(record, seconds_since(epoch_start));
        for (const auto& file : previews) tensorboard->image(file.stem().string(), file, epoch + 1);
      }
      previews.clear();
      // The final epoch's predictions are written before its last.ckpt (the commit point), so
      // a kill before that redoes the epoch on resume and writes them again.
      const bool write_predictions = val && final_epoch && config.run.save_json;
      save_checkpoints(
          make_checkpoint(ctx, step, epoch, result.best_fitness, result.best_epoch), *eval_model,
          weights_dir, improved, config.run.save_period, [&] {
            if (!write_predictions) return;
            task.write_predictions(*val, ctx.dataset.names, result.run_dir / "predictions.json");
            spdlog::info("save_json: {}", (result.run_dir / "predictions.json").string());
          });
    }
    last_saved_epoch = epoch;  // every rank: a rollback reloads what rank 0 saved
    ++result.epochs_completed;
    if (val) result.last_validation = std::move(val);
    spdlog::info("epoch {}/{} done in {}", epoch + 1, epochs,
                 format_duration(seconds_since(epoch_start)));
    if (out_of_time) {
      spdlog::info("time: the {:g} h budget is used up after {} epochs", config.schedule.time,
                   epoch + 1);
      break;
    }
    if (budget.active()) {  // the schedule follows the epochs the budget holds
      epochs = budget.epochs_for(seconds_since(run_start), result.epochs_completed);
      if (group) epochs = group->broadcast_value(epochs, 0);  // rank 0's clock decides
      ctx.schedule.epochs = epochs;
      progress.set_epochs(epochs);
      if (epoch + 1 >= epochs) {
        spdlog::info("time: {} epochs fit in the {:g} h budget; done", epochs,
                     config.schedule.time);
        break;
      }
    }

    // --- early stopping (the reference's EarlyStopping: no improvement for `patience` epochs),
    // decided where the validation ran (rank 0) and agreed by all ranks
    bool stop_early = main_rank && config.schedule.patience > 0 &&
                      epoch - result.best_epoch >= config.schedule.patience && !final_epoch;
    if (group) stop_early = group->any(stop_early);
    if (stop_early) {
      spdlog::info("early stopping: no improvement for {} epochs (best epoch {})",
                   config.schedule.patience, result.best_epoch + 1);
      result.early_stopped = true;
      break;
    }
  }
  result.seconds = seconds_since(run_start);
  const auto results_png = result.run_dir / "results.png";
  if (tensorboard && config.run.plots && std::filesystem::exists(results_png)) {
    tensorboard->image("results", results_png, last_saved_epoch + 1);
  }
  if (main_rank) {
    spdlog::info("{} epochs completed in {}; best fitness {:.4f} at epoch {}",
                 result.epochs_completed, format_duration(result.seconds), result.best_fitness,
                 result.best_epoch + 1);
    spdlog::info("results: {}", result.run_dir.string());
  }
  return result;
}

}  // namespace trainer::engine
