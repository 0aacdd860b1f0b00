// Tested by tests/integration/test_fit.cpp: engine::fit end to end: trains, validates, checkpoints,
//   logs; exact resume; rollback.
// See trainer.h. fit() below is the data flow; its phases are FitRun's (engine/fit_run.h). Policies
// chosen where the reference leaves room (README "Training"):
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
//   (TrainedNetwork::reducer); every rank validates its share of the val batches and rank 0
//   gathers them into the metrics one process would have (engine/validation_shards.h), logs, and
//   writes results and checkpoints: no other rank writes anything in the run folder (which need not
//   exist on their machines). Decisions that end or repeat an epoch (non-finite rollback, `time`,
//   early stopping) are agreed through the group so that no rank waits for a peer that has stopped.
//   A checkpoint to load (resume, rollback) comes from whichever rank holds it
//   (checkpoint/checkpoint_exchange.h); under torchrun's agent rank 0 records the run and each
//   committed epoch for a restarted attempt (checkpoint/fit_start.h).
#include "engine/trainer.h"

#include <cstdint>
#include <optional>
#include <utility>

#include "engine/fit_run.h"

namespace trainer::engine {

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
