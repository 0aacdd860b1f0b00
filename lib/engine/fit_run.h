// lib/engine internal: the run fit() drives (engine/trainer.h), one member function per phase, and
// the state those phases share. Only trainer.cpp and the two files of its phases include it:
// fit_run_setup.cpp (checks, run folder, building the training) and fit_run_epoch.cpp (an epoch's
// pass, validation, records, checkpoints, the decisions to redo or stop). Apart from trainer.cpp so
// that fit() reads as the data flow and each phase file holds one concern.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/config.h"
#include "core/run_lock.h"
#include "engine/checkpoint/checkpoint.h"
#include "engine/checkpoint/model_source.h"
#include "engine/checkpoint/resume.h"
#include "engine/log/epoch_record.h"
#include "engine/log/progress.h"
#include "engine/log/results_log.h"
#include "engine/log/tensorboard_log.h"
#include "engine/run_decisions.h"
#include "engine/time_budget.h"
#include "engine/train_step.h"
#include "engine/trainer.h"
#include "engine/training_context.h"
#include "engine/validation_result.h"
#include "engine/validator.h"

namespace trainer::engine {

inline double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
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
      : options_(options), ranks_(options.ranks), start_(std::chrono::steady_clock::now()) {}

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
  // On a BN-folded copy of the EMA weights (the shadow is never touched), only where `val` or the
  // final epoch asks. Every rank scores its share of the val batches; rank 0 gets the merged
  // result (engine/validation_shards.h), the others nullopt.
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
  const Ranks& ranks_;  // options_'s: this rank's place, "the main rank" asked of it
  std::chrono::steady_clock::time_point start_;

  core::TrainConfig user_config_;  // as given (its device list)
  RunDecisions decisions_;         // what the run decided; args.yaml and checkpoints record them
  // This rank's: the user's with its device and the decisions open_run made; not written after.
  core::TrainConfig config_;
  std::optional<RunSources> sources_;  // read in open_run, moved into the context
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

}  // namespace trainer::engine
