// Tested by tests/bench/test_bench_cli.cpp: bench interval JSON: measured interval count, breakdown
//   stages (slow; CUDA graph case in test_cuda_smoke).
// See interval.h. The timed run has no synchronisation except the one that ends each interval
// (benchmark-method.md section 1); the breakdown run adds a sync at every stage edge.
#include "engine/interval.h"

#include <chrono>
#include <map>

#include "data/loader_options.h"
#include "engine/device/device.h"
#include "engine/static_step/cuda_graph_step.h"
#include "engine/train_step.h"
#include "engine/training_context.h"

namespace trainer::engine {
namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
}

class BreakdownClock : public StageClock {
 public:
  explicit BreakdownClock(c10::Device device) : device_(device) {}
  void start() { last_ = Clock::now(); }
  void mark(const char* stage) override {
    synchronize(device_);
    const auto now = Clock::now();
    current_[stage] += std::chrono::duration<double, std::milli>(now - last_).count();
    last_ = now;
  }
  std::map<std::string, double> take() { return std::exchange(current_, {}); }

 private:
  c10::Device device_;
  Clock::time_point last_;
  std::map<std::string, double> current_;
};

}  // namespace

IntervalResult measure_intervals(const core::TrainConfig& config, const IntervalOptions& options) {
  ContextOptions context_options;
  context_options.need_val = false;
  context_options.show_progress = false;
  context_options.ranks = options.ranks;
  TrainingContext ctx = build_training_context(config, context_options);
  TrainStep step(ctx);
  BreakdownClock clock(ctx.device);
  IntervalResult result;
  result.device = ctx.device.str();
  result.precision = ctx.bf16() ? "bf16" : "fp32";
  result.precision_reason = ctx.precision.reason;
  result.batches_per_epoch = ctx.batches_per_epoch();

  const int total = options.warmup + options.measure;
  int done = 0;
  int64_t epoch = 0;
  int64_t ni = 0;
  auto interval_start = Clock::now();
  while (done < total) {
    ctx.inputs.train_loader->start_epoch(static_cast<int>(epoch),
                                         data::mosaic_enabled(config, static_cast<int>(epoch)));
    step.reset_epoch();
    while (done < total) {
      if (options.breakdown) clock.start();
      auto batch = ctx.inputs.train_loader->next();
      if (!batch) break;
      if (options.breakdown) clock.mark("loader_wait");
      step.apply_schedule(ni);
      step.run(*batch, ni, options.breakdown ? &clock : nullptr);
      synchronize(ctx.device);
      const double interval = ms_since(interval_start);
      interval_start = Clock::now();
      auto stages = clock.take();
      if (done >= options.warmup) {
        result.intervals_ms.push_back(interval);
        if (options.breakdown) {
          auto& s = result.stages;
          s.loader_wait.push_back(stages["loader_wait"]);
          s.h2d.push_back(stages["h2d"]);
          s.forward_loss.push_back(stages["forward_loss"]);
          s.backward.push_back(stages["backward"]);
          s.clip.push_back(stages["clip"]);
          s.optimizer.push_back(stages["optimizer"]);
          s.ema.push_back(stages["ema"]);
        }
      }
      ++done;
      ++ni;
    }
    ++epoch;
  }
  // Replays, not an eager fallback (a failed capture, or the graph-ready path on a CPU).
  const CudaGraphStep* graph = step.graph();
  result.cuda_graph = graph != nullptr && graph->captures() > 0 && !graph->fell_back();
  return result;
}

}  // namespace trainer::engine
