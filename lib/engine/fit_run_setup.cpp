// Tested by tests/integration/test_fit.cpp: end-to-end fit: run folder, resume into -from-epochN
//   branch, exist_ok keeps earlier results, config refusals.
// FitRun's opening phases (engine/fit_run.h): this rank's config and the checks that load no data,
// the run folder (a new one keeps an earlier run's results; a resume restores results.csv rows its
// folder lacks), then the dataset, model, loss, optimizer, EMA, validator, logs and a resume's
// state.
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "core/atomic_file.h"
#include "core/config_writer.h"
#include "core/logging.h"
#include "engine/checkpoint/checkpoint_exchange.h"
#include "engine/checkpoint/fit_start.h"
#include "engine/checkpoint/run_state.h"
#include "engine/device/memory_format.h"
#include "engine/device/process_settings.h"
#include "engine/fit_run.h"

namespace trainer::engine {
namespace {

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

}  // namespace

void FitRun::open_run(const core::TrainConfig& user_config) {
  user_config_ = user_config;
  const std::string rank_device = ranks_.device(user_config.run.device);
  config_ = rank_config(user_config_, decisions_, rank_device);
  // Every check that loads no data, before the run folder and the configuration table: a bad
  // device, model name, dataset yaml or weights file is the first thing reported, and nothing is
  // written. The run's sources are read here, once: the dataset yaml, and a weights file's
  // architecture, task and tensors; build_training() hands them on.
  sources_ = read_run_sources(config_, ranks_.world_size());
  decisions_.task = resolved_task(config_, sources_->model);  // a weights file's own
  // A run from a weights file records the architecture it held: its own files then describe their
  // model when that file is moved or deleted.
  if (is_weights_file(config_.model.model))
    decisions_.architecture = sources_->model.name.display();
  config_ = rank_config(user_config_, decisions_, rank_device);  // from here on as it stays

  // Run folder: a resumed run continues in its own folder (runs/x/weights/last.ckpt -> runs/x).
  // Rank 0 creates it; the others take its name (they never write there).
  folder_ = open_run_folder(config_, ranks_.main(), resume_checkpoint(), options_.restart_dir);
  run_id_ = choose_run_id();
  if (ranks_.group) {
    folder_.dir = ranks_.group->broadcast_text(folder_.dir.string(), 0);
    run_id_ = ranks_.group->broadcast_text(run_id_, 0);
  }
  result_.run_dir = folder_.dir;
  weights_dir_ = result_.run_dir / "weights";
  if (!ranks_.main()) return;
  // Where a restarted attempt of this job finds the run (fit_start.h).
  if (options_.records) options_.records->set(kRunRecord, run_record(run_id_, result_.run_dir));
  lock_.emplace(result_.run_dir);
  if (!lock_->stale_holder().empty()) {
    spdlog::info("{}: took over the lock of a run that ended without releasing it ({})",
                 result_.run_dir.string(), lock_->stale_holder());
  }
  if (!folder_.resume && options_.restart_dir.empty()) keep_earlier_results(result_.run_dir);
  std::filesystem::create_directories(weights_dir_);
  core::add_run_log_file(result_.run_dir, ranks_.rank(), "train.log");
  for (const auto& dir : {result_.run_dir, weights_dir_}) {
    for (const auto& stale : core::remove_stale_temporaries(dir))
      spdlog::info("removed {} (left by an interrupted write)", stale.string());
  }
  const core::TrainConfig recorded = recorded_config(user_config_, decisions_);
  core::write_config_yaml(recorded, result_.run_dir / "args.yaml");
  spdlog::info("run folder: {}", result_.run_dir.string());
  spdlog::info("configuration:\n{}", core::config_table(recorded));
}

std::optional<Checkpoint> FitRun::resume_checkpoint() const {
  if (options_.resume_checkpoint) return options_.resume_checkpoint;
  if (!ranks_.group || config_.run.resume.empty()) return std::nullopt;
  return agree_on_resume_checkpoint(ranks_.group.get(), config_.run.resume);
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
  context_options.ranks = ranks_;
  context_options.show_progress = options_.interactive && ranks_.main();
  context_options.need_val = true;                             // every rank validates its share
  const c10::Device device = apply_process_settings(config_);  // seeds, current device, cuDNN
  ctx_.emplace(build_training_context(config_, device, std::move(*sources_), context_options));
  sources_.reset();
  TrainingContext& ctx = *ctx_;
  if (folder_.resume) keep_checkpoint_precision(ctx, *folder_.resume);
  decisions_.class_widths = ctx.architecture.cls_width;  // a fine-tune may have rebuilt them
  decisions_.precision_used = ctx.bf16() ? "bf16" : "fp32";
  // args.yaml again, now with what the model and the hardware decided.
  if (ranks_.main()) {
    core::write_config_yaml(recorded_config(user_config_, decisions_),
                            result_.run_dir / "args.yaml");
  }
  // Validation batches of 2 x the per-rank batch (the reference's), sharded over the ranks; with
  // cache: disk local rank 0 first, since the first to build the val images' cache writes it.
  core::TrainConfig val_config = config_;
  val_config.data.batch = config_.data.batch / ctx.world_size();
  const auto make_validator = [&] {
    validator_.emplace(ctx.inputs.val_set, ctx.inputs.dataset, val_config, ctx.device, false,
                       ranks_.group);
  };
  if (config_.data.cache == core::CacheMode::kDisk) {
    distributed::run_local_rank_zero_first(ranks_.group.get(), ranks_.first_on_machine(),
                                           make_validator);
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
  if (ranks_.main()) {
    if (folder_.resume) restore_results_csv(*folder_.resume, result_.run_dir / "results.csv");
    results_.emplace(result_.run_dir / "results.csv", layout_.header(), start_epoch_);
  }
  if (ranks_.main() && config_.run.tensorboard) tensorboard_.emplace(result_.run_dir);
  progress_.emplace(epochs_, ctx.batches_per_epoch(), config_.data.imgsz,
                    options_.interactive && ranks_.main(), ctx.net.columns.loss_names);
  // Set-up passed (data, model, optimizer): the folder is the run's. Until here a failure gave it
  // back (core::ClaimedRunDir), so a run that never trained leaves no folder behind.
  folder_.claim.keep();
  return start_epoch_;
}

}  // namespace trainer::engine
