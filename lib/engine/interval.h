// The complete training interval (benchmark-method.md section 1), measured by the real loop.
//
// Why: every speed claim is made on the interval from one finished batch (optimizer step, EMA,
// device sync done) to the next; measuring it with the trainer's own step code keeps the benchmark
// honest. Stage times are only taken in a separate breakdown run, with a sync at each stage edge.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/config.h"
#include "engine/device/ranks.h"

namespace trainer::distributed {
class Group;
}

namespace trainer::engine {

struct IntervalOptions {
  int warmup = 15;         // discarded intervals
  int measure = 44;        // measured intervals
  bool breakdown = false;  // synchronise at stage edges and time each stage (a separate run)
  // Data-parallel (under torchrun): this rank's group; every rank measures its own intervals.
  Ranks ranks;
};

// Per-stage times in milliseconds, one entry per measured interval (breakdown runs only).
struct StageTimes {
  std::vector<double> loader_wait, h2d, forward_loss, backward, clip, optimizer, ema;
};

struct IntervalResult {
  std::vector<double> intervals_ms;  // `measure` complete intervals
  StageTimes stages;                 // filled when breakdown
  std::string device;                // "cpu", "cuda:0"
  std::string precision;             // "bf16" / "fp32": `precision` resolved (auto included)
  std::string precision_reason;      // why (engine/precision/precision_choice.h)
  int64_t batches_per_epoch = 0;
  // run.cuda_graph and the step was captured and replayed (not fallen back to eager): the stages
  // are replays (see TrainStep::run_graphed): forward_loss, clip and ema are 0, their time is in
  // backward and optimizer.
  bool cuda_graph = false;
};

// Builds the model, data, loss, optimizer and EMA from `config` exactly as `trainer fit` does and
// runs warmup + measure training steps (crossing epochs if needed), without validation or
// checkpoints. Peak memory is left to the caller (reset before, read after).
IntervalResult measure_intervals(const core::TrainConfig& config, const IntervalOptions& options);

}  // namespace trainer::engine
