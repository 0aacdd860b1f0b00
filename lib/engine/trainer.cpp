// See trainer.h. Policies chosen where the reference leaves room (README "Training"):
// - Non-finite loss or gradient: flagged on the device every step (no host sync), read once per
//   epoch. The epoch's updates are then discarded by reloading the last checkpoint (its EMA
//   weights into the model, EMA, optimizer, loss schedule, all gradients dropped) and the same
//   epoch runs again, as the reference does; after 3 failures in a row, or in the first epoch
//   (nothing to go back to), the run stops with an error that says what to try. The checkpoint
//   must be the one this run last wrote.
// - Checkpoints: weights/best.ckpt on improvement, then weights/last.ckpt every epoch (with any
//   gradients pending under accumulation), epochN.ckpt every save_period epochs; the EMA weights
//   are also exported as weights/last.pt and best.pt (lib/model/weights_io.h). Resuming from a
//   checkpoint older than the run's last.ckpt continues in a new folder <run>-from-epochN.
#include "engine/trainer.h"

#include <ATen/CPUGeneratorImpl.h>
#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <chrono>
#include <ctime>

#include "core/config_loader.h"
#include "core/config_writer.h"
#include "core/error.h"
#include "core/logging.h"
#include "core/run_dir.h"
#include "data/batch_plot.h"
#include "data/loader_options.h"
#include "engine/checkpoint.h"
#include "engine/epoch_record.h"
#include "engine/memory_format.h"
#include "engine/progress.h"
#include "engine/results_log.h"
#include "engine/results_plot.h"
#include "engine/train_step.h"
#include "engine/training_context.h"
#include "model/weights_io.h"

namespace trainer::engine {
namespace {

constexpr int kMaxNonFiniteRecoveries = 3;

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

// The checkpoint's EMA weights into the live model (the reference's non-finite recovery).
void load_ema_into_model(TrainingContext& ctx, const Checkpoint& ckpt, const std::string& source) {
  const model::NamedTensorList list = ema_weights(ckpt);
  for (const auto& [key, tensor] : list) {
    if (tensor.is_floating_point() && !torch::isfinite(tensor).all().item<bool>()) {
      throw core::InputError(fmt::format("{}: its EMA weights are not finite ({})", source, key));
    }
  }
  model::load_weights(*ctx.model, list, source + " (EMA weights)");
}

// Restores model, EMA, optimizer and loss-schedule state from a checkpoint.
void restore_state(TrainingContext& ctx, const Checkpoint& ckpt, const std::string& source) {
  model::load_weights(*ctx.model, to_list(ckpt.model), source);
  ctx.ema->load_state_dict(ckpt.ema);
  ctx.optimizer->load_state_dict(ckpt.optimizer);
  ctx.criterion->set_epoch_updates(ckpt.loss_updates, static_cast<int>(ctx.config.schedule.epochs));
}

// Resuming from a checkpoint older than the run's last.ckpt (e.g. weights/epoch2.ckpt) must not
// overwrite the later last.ckpt and results.csv rows: the resumed run then continues in a new
// folder beside it (<name>-from-epochN), starting with a copy of results.csv.
std::filesystem::path branch_if_older(const std::filesystem::path& run_dir, const Checkpoint& from,
                                      const core::TrainConfig& config, bool main_rank) {
  const auto last = run_dir / "weights" / "last.ckpt";
  std::error_code ec;
  if (!std::filesystem::exists(last) || std::filesystem::equivalent(last, config.run.resume, ec)) {
    return run_dir;
  }
  const Checkpoint latest = load_checkpoint(last);
  if (latest.epoch <= from.epoch) return run_dir;
  core::RunConfig branch = config.run;
  branch.project = run_dir.parent_path().string();
  branch.name = fmt::format("{}-from-epoch{}", run_dir.filename().string(), from.epoch + 1);
  branch.exist_ok = false;
  const auto dir = main_rank ? core::create_run_dir(branch) : core::choose_run_dir(branch);
  if (main_rank && std::filesystem::exists(run_dir / "results.csv")) {
    std::filesystem::copy_file(run_dir / "results.csv", dir / "results.csv",
                               std::filesystem::copy_options::overwrite_existing);
  }
  spdlog::warn(
      "{} is from epoch {}, but {} already reached epoch {}: continuing in {} so that nothing "
      "there is overwritten",
      config.run.resume, from.epoch + 1, last.string(), latest.epoch + 1, dir.string());
  return dir;
}

// Parameter gradients by name (the ones an optimizer step has not consumed yet).
TensorMap pending_gradients(model::DetectionModelImpl& model) {
  TensorMap out;
  for (const auto& p : model.named_parameters()) {
    if (p.value().grad().defined()) out.emplace(p.key(), p.value().grad().detach().clone());
  }
  return out;
}

void restore_gradients(model::DetectionModelImpl& model, const TensorMap& grads) {
  for (auto& p : model.named_parameters()) {
    auto it = grads.find(p.key());
    if (it == grads.end()) {
      p.value().mutable_grad() = at::Tensor();
    } else {
      p.value().mutable_grad() = it->second.to(p.value().device(), p.value().scalar_type());
    }
  }
}

EpochValidation epoch_validation(const ValidationResult& val) {
  EpochValidation v;
  v.precision = val.metric.precision;
  v.recall = val.metric.recall;
  v.map50 = val.metric.map50;
  v.map50_95 = val.metric.map50_95;
  if (val.coco) {
    v.coco_ap = val.coco->stats[0];
    v.coco_ap50 = val.coco->stats[1];
  }
  if (val.has_loss) v.loss_items.assign(val.loss_items.begin(), val.loss_items.end());
  return v;
}

}  // namespace

core::TrainConfig resume_config(const std::filesystem::path& checkpoint,
                                const std::vector<std::string>& overrides) {
  static const std::vector<std::string> allowed = {
      "device",      "workers",  "val",   "val_batches",     "plots",
      "save_period", "patience", "cache", "cudnn_benchmark", "resume"};
  const Checkpoint ckpt = load_checkpoint(checkpoint);
  std::vector<std::string> kept;
  for (const auto& o : overrides) {
    const std::string key = o.substr(0, o.find('='));
    if (std::find(allowed.begin(), allowed.end(), key) == allowed.end()) {
      throw core::ConfigError(fmt::format(
          "{}: cannot be changed when resuming (a resumed run continues the checkpoint's config; "
          "changeable: device, workers, val, val_batches, plots, save_period, patience, cache)",
          key));
    }
    if (key != "resume") kept.push_back(o);
  }
  auto loaded =
      core::load_config_text(ckpt.config_yaml, checkpoint.string(), checkpoint.parent_path(), kept);
  loaded.config.run.resume = std::filesystem::absolute(checkpoint).string();
  return loaded.config;
}

FitResult fit(const core::TrainConfig& config_in, const FitOptions& options) {
  const auto run_start = std::chrono::steady_clock::now();
  const bool main_rank = options.rank == 0;
  core::TrainConfig config = config_in;

  // Run folder: a resumed run continues in its own folder (runs/x/weights/last.ckpt -> runs/x).
  std::optional<Checkpoint> resume;
  FitResult result;
  if (!config.run.resume.empty()) {
    resume = load_checkpoint(config.run.resume);
    if (resume->version < kOldestResumableCheckpointVersion) {
      throw core::InputError(fmt::format(
          "{}: written by an older trainer (checkpoint format {}) whose optimizer state uses "
          "another parameter-group order; it cannot be resumed. Its weights still load: start a "
          "new run from them or score them with trainer val weights={}",
          config.run.resume, resume->version, config.run.resume));
    }
    result.run_dir = std::filesystem::absolute(config.run.resume).parent_path().parent_path();
    result.run_dir = branch_if_older(result.run_dir, *resume, config, main_rank);
  } else {
    result.run_dir =
        main_rank ? core::create_run_dir(config.run) : core::choose_run_dir(config.run);
  }
  const auto weights_dir = result.run_dir / "weights";
  if (main_rank) {
    std::filesystem::create_directories(weights_dir);
    core::add_run_log_file(result.run_dir, options.rank, "train.log");
    core::write_config_yaml(config, result.run_dir / "args.yaml");
    spdlog::info("run folder: {}", result.run_dir.string());
    spdlog::info("configuration:\n{}", core::config_table(config));
  }

  ContextOptions context_options;
  context_options.rank = options.rank;
  context_options.world_size = options.world_size;
  context_options.show_progress = options.interactive;
  TrainingContext ctx = build_training_context(config, context_options);
  Validator validator(ctx.val_set, ctx.dataset, config, ctx.device);
  auto eval_model = model::build_detection_model(ctx.model->name(), ctx.dataset.nc());
  eval_model->to(ctx.device);
  apply_memory_format(*eval_model, model_memory_format(config, ctx.device));
  const auto eval_state = named_state(*eval_model);

  TrainStep step(ctx);
  const int64_t epochs = config.schedule.epochs;
  const int64_t nb = ctx.batches_per_epoch();
  int64_t start_epoch = 0;
  if (resume) {
    restore_state(ctx, *resume, config.run.resume);
    if (resume->rng_cpu.defined()) {
      at::Generator generator = at::detail::getDefaultCPUGenerator();  // shares the global state
      generator.set_state(resume->rng_cpu);
    }
    start_epoch = resume->epoch + 1;
    step.set_last_opt_step(resume->last_opt_step);
    // Gradients accumulated after the last optimizer step carry into the next epoch in a straight
    // run; the checkpoint holds them so a resume continues with the same ones.
    restore_gradients(*ctx.model, resume->pending_grads);
    result.best_fitness = resume->best_fitness;
    result.best_epoch = resume->best_epoch;
    if (start_epoch >= epochs) {
      throw core::ConfigError(
          fmt::format("{}: the run already finished its {} epochs; start a new run (e.g. with this "
                      "checkpoint's weights) instead of resuming",
                      config.run.resume, epochs));
    }
    spdlog::info("resuming from {} at epoch {}/{}", config.run.resume, start_epoch + 1, epochs);
  }
  const std::vector<std::string> loss_names = detection_loss_names(ctx.model->reg_max());
  EpochRecord layout;  // the columns: this run's loss items and parameter groups
  layout.loss_names = loss_names;
  layout.train_loss.assign(loss_names.size(), 0.0);
  layout.learning_rates.assign(ctx.optimizer->groups().size(), 0.0);
  ResultsLog results(result.run_dir / "results.csv", layout.header(), start_epoch);
  ProgressLine progress(epochs, nb, config.data.imgsz, options.interactive, loss_names);
  int non_finite_recoveries = 0;  // consecutive, reset by a good epoch (the reference's rule)
  int64_t last_saved_epoch = resume ? resume->epoch : -1;  // what weights/last.ckpt must hold

  for (int64_t epoch = start_epoch; epoch < epochs; ++epoch) {
    // --- train one epoch: loader -> step (schedule, forward+loss, backward, clip, optim, EMA)
    const auto epoch_start = std::chrono::steady_clock::now();
    ctx.train_loader->start_epoch(static_cast<int>(epoch),
                                  data::mosaic_enabled(config, static_cast<int>(epoch)));
    step.reset_epoch();
    progress.start_epoch(epoch);
    int64_t i = 0;
    while (auto batch = ctx.train_loader->next()) {
      const int64_t ni = i + nb * epoch;
      step.apply_schedule(ni, epoch);
      if (options.inject_non_finite && options.inject_non_finite(epoch, i)) step.poison_next_loss();
      step.run(*batch, ni);
      if (main_rank && config.run.plots && epoch == start_epoch && i < 3 && start_epoch == 0) {
        data::save_batch_plot(*batch, ctx.dataset.names,
                              result.run_dir / fmt::format("train_batch{}.jpg", i));
      }
      ++i;
      if (progress.due()) {
        const auto mean = step.mean_loss_items().cpu();
        progress.update(i, {mean[0].item<double>(), mean[1].item<double>(), mean[2].item<double>()},
                        step.last_instances());
      }
    }
    const auto train_loss = step.mean_loss_items().cpu();
    const std::vector<double> losses = {train_loss[0].item<double>(), train_loss[1].item<double>(),
                                        train_loss[2].item<double>()};
    progress.finish(losses, step.last_instances());
    std::vector<double> lrs;
    for (const auto& g : ctx.optimizer->groups()) lrs.push_back(g.lr);

    // --- epoch end: loss schedule, non-finite check
    ctx.criterion->end_epoch(static_cast<int>(epochs));
    if (step.saw_non_finite()) {
      // As the reference: reload last.ckpt with its EMA weights in the model (a different start
      // from the failed attempt's), drop every gradient of the failed pass (NaNs still sit in
      // .grad under accumulation), and run the same epoch again; 3 tries in a row at most.
      const auto last = weights_dir / "last.ckpt";
      if (!std::filesystem::exists(last) || ++non_finite_recoveries > kMaxNonFiniteRecoveries) {
        throw std::runtime_error(fmt::format(
            "non-finite loss or gradient in epoch {} ({}); try a lower lr0, precision=fp32, or "
            "check the labels",
            epoch + 1,
            std::filesystem::exists(last) ? fmt::format("{} recoveries from {} did not help",
                                                        kMaxNonFiniteRecoveries, last.string())
                                          : "no checkpoint to go back to yet"));
      }
      const Checkpoint good = load_checkpoint(last);
      if (good.epoch != last_saved_epoch) {
        throw core::InputError(fmt::format(
            "{}: holds epoch {}, but this run last saved epoch {}; it was replaced by something "
            "else, so the run stops rather than continue from it",
            last.string(), good.epoch + 1, last_saved_epoch + 1));
      }
      spdlog::warn(
          "non-finite loss or gradient in epoch {}: discarding its updates and running it again "
          "from {} with its EMA weights ({}/{})",
          epoch + 1, last.string(), non_finite_recoveries, kMaxNonFiniteRecoveries);
      restore_state(ctx, good, last.string());
      load_ema_into_model(ctx, good, last.string());
      ctx.optimizer->zero_grad();
      step.set_last_opt_step(-1);  // the redone epoch steps with the normal cadence
      --epoch;
      continue;
    }
    non_finite_recoveries = 0;

    // --- validation on a copy of the EMA weights (the shadow is never touched)
    ctx.ema->copy_to(eval_state);
    const bool final_epoch = epoch + 1 == epochs;
    std::optional<ValidationResult> val;
    if (config.run.val || final_epoch) {
      auto vo = ValidationOptions::from_config(config);
      val = validator.run(*eval_model, ctx.criterion.get(), vo);
      if (main_rank) {
        spdlog::info(
            "validation (EMA weights, {} images):\n{}", val->images,
            format_validation_table(*val, ctx.dataset.names, options.per_class && final_epoch));
      }
    }
    const double fitness = val ? val->metric.fitness : -(losses[0] + losses[1] + losses[2]);
    const bool improved = result.best_epoch < 0 || fitness >= result.best_fitness;
    if (improved) {
      result.best_fitness = fitness;
      result.best_epoch = epoch;
    }

    // --- results and checkpoints
    if (main_rank) {
      EpochRecord record = layout;
      record.epoch = epoch + 1;
      record.seconds =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - run_start).count();
      record.train_loss = losses;
      record.learning_rates = lrs;
      if (val) record.validation = epoch_validation(*val);
      results.append(record.row());
      if (config.run.plots)
        plot_results(results.columns(), results.rows(), result.run_dir / "results.png");

      Checkpoint ckpt;
      ckpt.config_yaml = core::config_to_yaml(config);
      ckpt.epoch = epoch;
      ckpt.iteration = nb * (epoch + 1);
      ckpt.last_opt_step = step.last_opt_step();
      ckpt.best_fitness = result.best_fitness;
      ckpt.best_epoch = result.best_epoch;
      ckpt.loss_updates = ctx.criterion->epoch_updates();
      // The file keeps the reference's spelling of the optimizer (a string, as its checkpoints do).
      ckpt.optimizer_name = optim::optimizer_kind_name(ctx.optimizer_choice.kind);
      ckpt.model = to_map(ctx.live_state);
      ckpt.ema = ctx.ema->state_dict();
      ckpt.optimizer = ctx.optimizer->state_dict();
      if (step.last_opt_step() < ckpt.iteration - 1)
        ckpt.pending_grads = pending_gradients(*ctx.model);
      ckpt.rng_cpu = at::detail::getDefaultCPUGenerator().get_state();
      ckpt.date = now_iso();
      // best before last: a kill between the two leaves last.ckpt one epoch behind (resume redoes
      // that epoch and rewrites best exactly), never a last.ckpt whose best_epoch has no best.ckpt.
      if (improved) {
        save_checkpoint(ckpt, weights_dir / "best.ckpt");
        model::save_weights(*eval_model, weights_dir / "best.pt");
      }
      save_checkpoint(ckpt, weights_dir / "last.ckpt");
      model::save_weights(*eval_model, weights_dir / "last.pt");
      last_saved_epoch = epoch;
      if (config.run.save_period > 0 && (epoch + 1) % config.run.save_period == 0) {
        save_checkpoint(ckpt, weights_dir / fmt::format("epoch{}.ckpt", epoch + 1));
      }
    }
    ++result.epochs_completed;
    if (val) result.last_validation = std::move(val);
    spdlog::info(
        "epoch {}/{} done in {}", epoch + 1, epochs,
        format_duration(
            std::chrono::duration<double>(std::chrono::steady_clock::now() - epoch_start).count()));

    // --- early stopping (the reference's EarlyStopping: no improvement for `patience` epochs)
    if (config.schedule.patience > 0 && epoch - result.best_epoch >= config.schedule.patience &&
        !final_epoch) {
      spdlog::info("early stopping: no improvement for {} epochs (best epoch {})",
                   config.schedule.patience, result.best_epoch + 1);
      result.early_stopped = true;
      break;
    }
  }
  result.seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - run_start).count();
  if (main_rank) {
    spdlog::info("{} epochs completed in {}; best fitness (mAP50-95) {:.4f} at epoch {}",
                 result.epochs_completed, format_duration(result.seconds), result.best_fitness,
                 result.best_epoch + 1);
    spdlog::info("results: {}", result.run_dir.string());
  }
  return result;
}

}  // namespace trainer::engine
