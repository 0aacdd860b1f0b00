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
//   (TrainingContext::reducer); every rank validates its share of the val batches and rank 0
//   gathers them into the metrics one process would have (engine/validation_shards.h), logs, and
//   writes results and checkpoints: no other rank writes anything in the run folder (which need not
//   exist on their machines). Decisions that end or repeat an epoch (non-finite rollback, `time`,
//   early stopping) are agreed through the group so that no rank waits for a peer that has stopped.
//   A checkpoint to load (resume, rollback) comes from whichever rank holds it
//   (checkpoint/checkpoint_exchange.h); under torchrun's agent rank 0 records the run and each
//   committed epoch for a restarted attempt (checkpoint/fit_start.h).
#include "engine/trainer.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <functional>
#include <optional>
#include <utility>

#include "core/atomic_file.h"
#include "core/config_writer.h"
#include "core/error.h"
#include "core/logging.h"
#include "core/run_lock.h"
#include "data/loader_options.h"
#include "engine/checkpoint/checkpoint_exchange.h"
#include "engine/checkpoint/fit_start.h"
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

// A resume whose run folder lacks rows the checkpoint has (a node without a shared file system,
// a restart that put rank 0 on another node): results.csv from the checkpoint's copy.
void restore_results_csv(const Checkpoint& from, const std::filesystem::path& file) {
  if (from.results_csv.empty()) return;
  if (std::filesystem::exists(file)) {
    std::vector<std::string> columns;
    std::vector<std::vector<double>> rows;
    try {
      read_results_csv(file, &columns, &rows);
      if (static_cast<int64_t>(rows.size()) >= from.epoch + 1) return;
    } catch (const std::exception&) {  // unreadable: the checkpoint's copy replaces it
    }
  }
  core::write_file_atomically(file, from.results_csv);
  spdlog::info("{}: rows up to epoch {} restored from the checkpoint", file.string(),
               from.epoch + 1);
}

// What one epoch's training pass leaves for the epoch end.
struct TrainedEpoch {
  std::vector<double> losses;          // the task's loss items, means over the epoch
  std::vector<double> learning_rates;  // per parameter group, as the epoch ended
  bool non_finite = false;             // a loss or gradient was not finite (agreed by all ranks)
  bool out_of_time = false;            // `time` ran out inside the epoch (agreed by all ranks)
  std::chrono::steady_clock::time_point start;
};

// The run fit() drives, one member function per phase; the state they share lives here.
class FitRun {
 public:
  explicit FitRun(const FitOptions& options)
      : options_(options),
        group_(options.group),
        main_rank_((group_ ? group_->rank() : options.rank) == 0),
        start_(std::chrono::steady_clock::now()) {}

  // This rank's config, the checks that load no data, the model source (a weights file read
  // once), the run folder with its lock, train.log and args.yaml.
  void open_run(const core::TrainConfig& user_config);
  // Dataset, model, loss, optimizer, EMA; the validator and the EMA's copy; the logs; a resume's
  // state. Returns the first epoch to train.
  int64_t build_training();

  bool has_epoch(int64_t epoch) const { return epoch < epochs_; }
  TrainedEpoch train_one_epoch(int64_t epoch);
  // The non-finite recovery: when `trained` saw a non-finite loss or gradient, the epoch's updates
  // are discarded (the last checkpoint reloaded) and it returns true: the same epoch runs again.
  bool redo_if_non_finite(int64_t epoch, const TrainedEpoch& trained);
  bool is_final(int64_t epoch, const TrainedEpoch& trained) const {
    return epoch + 1 >= epochs_ || trained.out_of_time;
  }
  // On a BN-folded copy of the EMA weights (the shadow is never touched); rank 0 only, and only
  // where `val` or the final epoch asks.
  std::optional<ValidationResult> validate_ema(int64_t epoch, bool final_epoch);
  // Best fitness so far; returns whether this epoch improved it.
  bool update_best(int64_t epoch, const TrainedEpoch& trained,
                   const std::optional<ValidationResult>& val);
  // results.csv, results.png and the TensorBoard events (rank 0).
  void record_epoch(int64_t epoch, const TrainedEpoch& trained,
                    const std::optional<ValidationResult>& val);
  // Checkpoints and exports; last.ckpt, written last, commits the epoch (rank 0 writes).
  void save_epoch(int64_t epoch, bool improved, bool final_epoch,
                  const std::optional<ValidationResult>& val);
  void end_epoch(int64_t epoch, const TrainedEpoch& trained, std::optional<ValidationResult> val);
  // Whether the ranks stop after `epoch`: `time` used up or re-estimated, or early stopping.
  bool agree_to_stop(int64_t epoch, const TrainedEpoch& trained, bool final_epoch);
  FitResult finish_run();

 private:
  double elapsed() const { return seconds_since(start_); }
  // The resume's checkpoint: as given (agree_fit_start), or under a group agreed here (a rank
  // whose node lacks the file receives it), or none (open_run_folder reads config.run.resume).
  std::optional<Checkpoint> resume_checkpoint() const;
  // The run's id: the job's (a restart), the checkpoint's when resuming in its own run folder, or
  // a new one (rank 0's counts).
  std::string choose_run_id() const;

  const FitOptions& options_;
  std::shared_ptr<distributed::Group> group_;
  bool main_rank_;
  std::chrono::steady_clock::time_point start_;

  core::TrainConfig user_config_;
  core::TrainConfig config_;    // this rank's (its device; the run's task)
  core::TrainConfig recorded_;  // what args.yaml records: the user's, with the run's task
  std::optional<ModelSource> source_;
  RunFolder folder_;
  std::filesystem::path weights_dir_;
  std::optional<core::RunLock> lock_;  // one live run per folder (rank 0 holds it)
  FitResult result_;

  std::optional<TrainingContext> ctx_;
  std::optional<TrainStep> step_;
  std::optional<Validator> validator_;
  model::YoloModel eval_model_{nullptr};  // the EMA weights' copy, validated and exported
  optim::NamedTensors eval_state_;
  std::optional<TimeBudget> budget_;
  int64_t epochs_ = 0;  // `time` re-estimates it after every epoch
  EpochRecord layout_;  // the columns: the task's loss items and metrics, the parameter groups
  std::optional<ResultsLog> results_;            // rank 0 alone writes the run folder
  std::optional<TensorBoardLog> tensorboard_;    // the same rows as events, plus the pictures
  std::vector<std::filesystem::path> previews_;  // written this epoch, sent with its events
  std::optional<ProgressLine> progress_;
  int64_t start_epoch_ = 0;
  int non_finite_recoveries_ = 0;  // consecutive, reset by a good epoch (the reference's rule)
  int64_t last_saved_epoch_ = -1;  // the epoch last.ckpt holds
  std::string run_id_;             // kept by a resume in the run's folder (checkpoint_exchange.h)
};

void FitRun::open_run(const core::TrainConfig& user_config) {
  user_config_ = user_config;
  config_ = user_config;
  config_.run.device = device_for_rank(user_config.run.device, options_.local_rank,
                                       group_ ? options_.local_world_size : 1);
  // Every check that loads no data, before the run folder and the configuration table: a bad
  // device, model name, dataset yaml or weights file is the first thing reported, and nothing is
  // written. The model source is read here, once: a weights file's architecture, task and tensors.
  (void)check_run_config(config_, group_ ? group_->size() : options_.world_size);
  source_ = read_model_source(config_);
  config_.run.task =
      resolved_task(config_, *source_);  // a weights file's own, recorded in args.yaml
  recorded_ = user_config;               // the device list kept
  recorded_.run.task = config_.run.task;

  // Run folder: a resumed run continues in its own folder (runs/x/weights/last.ckpt -> runs/x).
  // Rank 0 creates it; the others take its name (they never write there).
  folder_ = open_run_folder(config_, main_rank_, resume_checkpoint(), options_.restart_dir);
  run_id_ = choose_run_id();
  if (group_) {
    folder_.dir = group_->broadcast_text(folder_.dir.string(), 0);
    run_id_ = group_->broadcast_text(run_id_, 0);
  }
  result_.run_dir = folder_.dir;
  weights_dir_ = result_.run_dir / "weights";
  if (!main_rank_) return;
  // Where a restarted attempt of this job finds the run (fit_start.h).
  if (options_.records) options_.records->set(kRunRecord, run_record(run_id_, result_.run_dir));
  lock_.emplace(result_.run_dir);
  if (!lock_->stale_holder().empty()) {
    spdlog::info("{}: took over the lock of a run that ended without releasing it ({})",
                 result_.run_dir.string(), lock_->stale_holder());
  }
  if (!folder_.resume && options_.restart_dir.empty()) keep_earlier_results(result_.run_dir);
  std::filesystem::create_directories(weights_dir_);
  core::add_run_log_file(result_.run_dir, options_.rank, "train.log");
  for (const auto& dir : {result_.run_dir, weights_dir_}) {
    for (const auto& stale : core::remove_stale_temporaries(dir))
      spdlog::info("removed {} (left by an interrupted write)", stale.string());
  }
  core::write_config_yaml(recorded_, result_.run_dir / "args.yaml");
  spdlog::info("run folder: {}", result_.run_dir.string());
  spdlog::info("configuration:\n{}", core::config_table(recorded_));
}

std::optional<Checkpoint> FitRun::resume_checkpoint() const {
  if (options_.resume_checkpoint) return options_.resume_checkpoint;
  if (!group_ || config_.run.resume.empty()) return std::nullopt;
  return agree_on_resume_checkpoint(group_.get(), config_.run.resume);
}

std::string FitRun::choose_run_id() const {
  if (!options_.run_id.empty()) return options_.run_id;
  if (folder_.resume && !folder_.resume->run_id.empty()) {
    std::error_code ec;
    const auto own = std::filesystem::absolute(config_.run.resume).parent_path().parent_path();
    if (std::filesystem::equivalent(own, folder_.dir, ec)) return folder_.resume->run_id;
  }
  return new_run_id();
}

int64_t FitRun::build_training() {
  ContextOptions context_options;
  context_options.rank = options_.rank;
  context_options.world_size = options_.world_size;
  context_options.local_rank = options_.local_rank;
  context_options.group = group_;
  context_options.show_progress = options_.interactive && main_rank_;
  context_options.need_val = true;  // every rank validates its share
  ctx_.emplace(build_training_context(config_, std::move(*source_), context_options));
  source_.reset();
  TrainingContext& ctx = *ctx_;
  ctx.config.run.device = user_config_.run.device;              // checkpoints keep the device list
  if (ctx.config.model.cls_width != config_.model.cls_width) {  // fine-tuning rebuilt the branches
    config_.model.cls_width = ctx.config.model.cls_width;
    recorded_.model.cls_width = ctx.config.model.cls_width;
    if (main_rank_) core::write_config_yaml(recorded_, result_.run_dir / "args.yaml");
  }
  if (folder_.resume) keep_checkpoint_precision(ctx, *folder_.resume);
  // Validation batches of 2 x the per-rank batch (the reference's), sharded over the ranks; with
  // cache: disk local rank 0 first, since the first to build the val images' cache writes it.
  core::TrainConfig val_config = config_;
  val_config.data.batch = config_.data.batch / ctx.world_size();
  const auto make_validator = [&] {
    validator_.emplace(ctx.inputs.val_set, ctx.inputs.dataset, val_config, ctx.device, false,
                       group_);
  };
  if (config_.data.cache == core::CacheMode::kDisk) {
    distributed::run_local_rank_zero_first(group_.get(), options_.local_rank == 0, make_validator);
  } else {
    make_validator();
  }
  eval_model_ = ctx.task->build_model(ctx.architecture, ctx.inputs.dataset);
  eval_model_->to(ctx.device);
  apply_memory_format(*eval_model_, model_memory_format(config_, ctx.device));
  eval_state_ = named_state(*eval_model_);

  step_.emplace(ctx);
  epochs_ = config_.schedule.epochs;
  budget_.emplace(config_.schedule.time);
  if (folder_.resume) {
    start_epoch_ = restore_run(ctx, *step_, *folder_.resume, config_.run.resume);
    result_.best_fitness = folder_.resume->best_fitness;
    result_.best_epoch = folder_.resume->best_epoch;
    last_saved_epoch_ = folder_.resume->epoch;
  }
  layout_.columns = ctx.net.columns;
  layout_.train_loss.assign(ctx.net.columns.loss_names.size(), 0.0);
  layout_.learning_rates.assign(ctx.optimization.optimizer->groups().size(), 0.0);
  if (main_rank_) {
    if (folder_.resume) restore_results_csv(*folder_.resume, result_.run_dir / "results.csv");
    results_.emplace(result_.run_dir / "results.csv", layout_.header(), start_epoch_);
  }
  if (main_rank_ && config_.run.tensorboard) tensorboard_.emplace(result_.run_dir);
  progress_.emplace(epochs_, ctx.batches_per_epoch(), config_.data.imgsz,
                    options_.interactive && main_rank_, ctx.net.columns.loss_names);
  return start_epoch_;
}

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
      main_rank_ && config_.run.plots && epoch == start_epoch_ && start_epoch_ == 0;
  int64_t i = 0;
  while (auto batch = ctx.inputs.train_loader->next()) {
    const int64_t ni = i + nb * epoch;
    step.apply_schedule(ni);
    if (options_.before_batch) options_.before_batch(epoch, i);
    if (options_.inject_non_finite && options_.inject_non_finite(epoch, i)) step.poison_next_loss();
    step.run(*batch, ni);
    if (options_.observe_optimizer_step && step.last_opt_step() == ni) {
      options_.observe_optimizer_step(epoch, i);
    }
    // `time`: stop at the first optimizer step past the budget (the reference's rule); under
    // data-parallel training the ranks agree after every optimizer step, as the reference does.
    if (budget_->active() && step.last_opt_step() == ni) {
      trained.out_of_time = budget_->exhausted(elapsed());
      if (group_) trained.out_of_time = group_->any(trained.out_of_time);
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
  if (group_) trained.non_finite = group_->any(trained.non_finite);  // every rank, or none
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
    AgreedCheckpoint agreed =
        agree_on_checkpoint(group_.get(), weights_dir_ / "last.ckpt", {run_id_, last_saved_epoch_});
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
  if (group_) group_->broadcast(eval_model_->buffers(), 0);
  auto vo = ValidationOptions::from_config(config_);
  vo.bf16 = ctx.bf16();  // the run's precision, `auto` resolved
  vo.keep_detections = config_.run.save_json && final_epoch;
  if (options_.after_validation_batch) {
    vo.after_batch = [this, epoch](int64_t b) { options_.after_validation_batch(epoch, b); };
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
  if (!main_rank_) return;
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
  if (main_rank_) {
    // The final epoch's predictions are written before its last.ckpt (the commit point), so a
    // kill before that redoes the epoch on resume and writes them again.
    const bool write_predictions = val && final_epoch && config_.run.save_json;
    const TaskDefinition& task = *ctx_->task;
    Checkpoint ckpt =
        make_checkpoint(*ctx_, *step_, epoch, result_.best_fitness, result_.best_epoch);
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
    if (group_) epochs_ = group_->broadcast_value(epochs_, 0);  // rank 0's clock decides
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
  bool stop_early = main_rank_ && config_.schedule.patience > 0 &&
                    epoch - result_.best_epoch >= config_.schedule.patience && !final_epoch;
  if (group_) stop_early = group_->any(stop_early);
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
  if (main_rank_) {
    spdlog::info("{} epochs completed in {}; best fitness {:.4f} at epoch {}",
                 result_.epochs_completed, format_duration(result_.seconds), result_.best_fitness,
                 result_.best_epoch + 1);
    spdlog::info("results: {}", result_.run_dir.string());
  }
  return std::move(result_);
}

}  // namespace

FitResult fit(const core::TrainConfig& config, const FitOptions& options) {
  FitRun run(options);
  run.open_run(config);                  // checks, model source, run folder, args.yaml
  int64_t epoch = run.build_training();  // data, model, loss, optimizer, EMA; a resume's state
  while (run.has_epoch(epoch)) {
    // loader -> step (schedule, forward+loss, backward, clip, optimizer, EMA), the loss schedule
    const TrainedEpoch trained = run.train_one_epoch(epoch);
    if (run.redo_if_non_finite(epoch, trained)) continue;  // the same epoch, from last.ckpt
    const bool final_epoch = run.is_final(epoch, trained);
    std::optional<ValidationResult> val = run.validate_ema(epoch, final_epoch);
    const bool improved = run.update_best(epoch, trained, val);
    run.record_epoch(epoch, trained, val);              // results.csv, plots, TensorBoard
    run.save_epoch(epoch, improved, final_epoch, val);  // checkpoints; last.ckpt commits it
    run.end_epoch(epoch, trained, std::move(val));
    if (run.agree_to_stop(epoch, trained, final_epoch)) break;  // `time`, patience
    ++epoch;
  }
  return run.finish_run();
}

}  // namespace trainer::engine
