// One training batch: schedule, device copy, forward + loss under autocast, backward, and when an
// optimizer step is due: clip, step, zero grads, EMA.
//
// Why one place: the fit loop and the interval benchmark must run exactly the same step. Nothing
// here reads a device value back to the host: the loss items, the gradient norm and the
// non-finite flag stay on the device until someone asks (the progress line, the epoch end).
#pragma once

#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>
#include <c10/core/MemoryFormat.h>

#include <cstdint>
#include <memory>

#include "data/batch.h"
#include "engine/interval.h"
#include "loss/gt_targets.h"
#include "loss/loss_targets.h"

namespace trainer::optim {
class StepScalars;
}

namespace trainer::engine {

struct TrainingContext;
struct TrainedNetwork;
struct Optimization;
class CudaGraphStep;

// What the step reads of the run's config and device, resolved once when the step is made: the
// hot path reads these values, not the config.
struct StepSettings {
  c10::Device device{c10::kCPU};
  c10::MemoryFormat memory_format = c10::MemoryFormat::Contiguous;  // of the images it feeds
  bool bf16 = false;            // forward and loss under BF16 autocast
  bool static_shapes = false;   // targets capped and packed to max_instances rows
  int64_t max_instances = 0;    // static_shapes' cap
  bool cuda_graph = false;      // the static step replayed as CUDA graphs
  double max_grad_norm = 10.0;  // clip_grad_norm's bound
  double multi_scale = 0.0;     // the image size's random range (0: off)
  int64_t imgsz = 640;          // multi_scale's centre
  uint64_t seed = 0;            // multi_scale's draw is a function of (seed, ni)
  int world_size = 1;           // data-parallel: each rank's loss is scaled by it
};

// The settings of `context`'s run.
StepSettings step_settings(const TrainingContext& context);

// Stage edges for the breakdown run: each is called after a device sync, with the stage name.
struct StageClock {
  virtual ~StageClock() = default;
  virtual void mark(const char* stage) = 0;  // "h2d", "forward_loss", "backward", "clip", ...
};

class TrainStep {
 public:
  // With run.cuda_graph the optimizer is made capturable and the step runs through
  // CudaGraphStep (static buffers, eager warm-up, then two replayed graphs; on a device without
  // CUDA the same path eagerly, which only tests ask for).
  explicit TrainStep(TrainingContext& context);
  ~TrainStep();

  // Sets lr, momentum and accumulation for global iteration `ni` = batch + nb * epoch (warmup and
  // decay are functions of ni alone).
  void apply_schedule(int64_t ni);

  // Runs one batch: forward, loss and backward, then, when `accumulate` batches have been seen
  // since the last one, the optimizer step (clip, step, zero, EMA). Returns whether that step
  // happened. `clock` (breakdown runs only) gets a mark after each stage, with a sync.
  bool run(const data::Batch& batch, int64_t ni, StageClock* clock = nullptr);

  const StepSettings& settings() const { return settings_; }

  // Running sums since reset_epoch(): the task's loss items (one per TrainedNetwork::columns
  // loss name), batch count, instances of the last batch.
  at::Tensor mean_loss_items() const;  // device tensor (a host read syncs)
  int64_t batches() const { return batches_; }
  int64_t last_instances() const { return last_instances_; }
  // static_shapes: objects dropped above max_instances since reset_epoch(), and the most any
  // sample held before that cap (what max_instances would have to be to drop none).
  int64_t dropped_instances() const { return dropped_instances_; }
  int64_t largest_sample_instances() const { return largest_sample_instances_; }
  // True when any loss or gradient norm since reset_epoch() was not finite (one host read).
  bool saw_non_finite() const;
  // The total gradient norm before clipping at the last optimizer step (undefined before the
  // first): fit logs it in each epoch's line (one host read per epoch).
  at::Tensor last_grad_norm() const { return last_grad_norm_; }
  void reset_epoch();

  // Test hook: the next run() multiplies its loss by NaN before backward (fault injection).
  void poison_next_loss() { poison_next_ = true; }

  int64_t last_opt_step() const { return last_opt_step_; }
  void set_last_opt_step(int64_t ni) { last_opt_step_ = ni; }
  int64_t accumulate() const { return accumulate_; }

  // The model's gradients or the optimizer / EMA state were replaced (resume, rollback): a
  // captured step would replay on the old tensors, so it is captured again.
  void state_replaced(const char* why);
  // cuda_graph: the graph runner (nullptr otherwise), for tests and the benchmark's report.
  const CudaGraphStep* graph() const { return graph_.get(); }

 private:
  // Static shapes: the batch's targets capped at max_instances and packed on the device.
  loss::GtTargets prepare_static(const loss::LossTargets& targets, int64_t batch, int64_t height,
                                 int64_t width);
  // The eager path's half before the optimizer: the device copy, multi_scale, forward, loss,
  // backward.
  void accumulate_eager(const data::Batch& batch, const loss::LossTargets& targets, int64_t ni,
                        StageClock* clock);
  // cuda_graph: the same half through the graph runner; the breakdown's stages are the replays
  // ("h2d": the targets' packing and copy; "backward": the batch's copy into the static buffers,
  // forward, loss and backward).
  void accumulate_graphed(const data::Batch& batch, const loss::LossTargets& targets,
                          StageClock* clock);
  // Forward + loss under autocast, the fault hook, backward, the running sums.
  void forward_backward(const at::Tensor& images, const loss::LossTargets& targets,
                        const loss::GtTargets& prepared, StageClock* clock);
  // cuda_graph: the optimizer half replayed ("optimizer": clip, step and EMA).
  void optimizer_step_graphed(StageClock* clock);
  // The one tail of both paths: clip -> step -> zero grads -> EMA. With cuda_graph (inside a
  // capture or its eager warm-up) the norm goes to a fixed address, the gradients are zeroed in
  // place and the EMA reads its weight from a device slot.
  void clip_step_ema(StageClock* clock);

  StepSettings settings_;
  TrainedNetwork& net_;
  Optimization& optimization_;
  int64_t accumulate_ = 1;
  int64_t last_opt_step_ = -1;
  at::Tensor loss_sum_;
  at::Tensor non_finite_;
  at::Tensor last_grad_norm_;
  int64_t batches_ = 0;
  int64_t last_instances_ = 0;
  int64_t dropped_instances_ = 0;
  int64_t largest_sample_instances_ = 0;
  bool poison_next_ = false;
  std::unique_ptr<CudaGraphStep> graph_;            // cuda_graph only
  std::unique_ptr<optim::StepScalars> ema_weight_;  // cuda_graph: 1 - d(updates + 1)
  at::Tensor grad_norm_;                            // cuda_graph: the norm at a fixed address
};

}  // namespace trainer::engine
