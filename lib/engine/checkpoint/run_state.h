// A run's state into a checkpoint and back: make_checkpoint(), restore_run(), roll_back_epoch().
//
// Why: fit() should read like the data flow; what goes into a checkpoint and how a run comes back
// from one (a resume, or the non-finite rollback) are their own steps, each in one place, so the
// resume stays bit-exact and the rollback restores exactly what a resume would.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

#include "core/config.h"
#include "engine/checkpoint/checkpoint.h"

namespace trainer::engine {

struct TrainingContext;
class TrainStep;

// Everything needed to continue after `epoch` (0-based): config (`recorded`: what args.yaml
// records, engine/run_decisions.h), counters, best fitness, model, EMA, optimizer, loss schedule,
// gradients pending under accumulation, RNG state, date.
Checkpoint make_checkpoint(const TrainingContext& ctx, const TrainStep& step,
                           const core::TrainConfig& recorded, int64_t epoch, double best_fitness,
                           int64_t best_epoch);

// A resume under `precision: auto` continues in the precision the checkpoint was trained in
// (recorded by make_checkpoint), whatever this start decided: the rule and the check decide alike
// on the same machine, but a run moved to other hardware (or a checkpoint of an older version,
// which timed) must not switch its numerics halfway. Call before the validator is built.
void keep_checkpoint_precision(TrainingContext& ctx, const Checkpoint& checkpoint);

// A resume: model, EMA, optimizer, loss schedule, CPU RNG, the last optimizer step and the pending
// gradients from `checkpoint` (read from `source`). Returns the epoch to continue with; throws
// core::ConfigError when the run already finished its epochs.
int64_t restore_run(TrainingContext& ctx, TrainStep& step, const Checkpoint& checkpoint,
                    const std::string& source);

// The non-finite recovery, as the reference does: reloads `good`, the checkpoint this run last
// saved as the ranks agreed on it (checkpoint_exchange.h; read from `source`), with its EMA weights
// in the model (a different start from the failed attempt's), replaces every gradient of the
// failed pass (NaNs still sit in .grad under accumulation) by the checkpoint's pending ones and
// restores its last optimizer step, so that `epoch` runs again with the same accumulation cadence.
// `recoveries` counts the consecutive tries including this one; past `max_recoveries`, or without
// a checkpoint (`source` then says why), throws with advice.
void roll_back_epoch(TrainingContext& ctx, TrainStep& step, const std::optional<Checkpoint>& good,
                     const std::string& source, int64_t epoch, int recoveries, int max_recoveries);

}  // namespace trainer::engine
