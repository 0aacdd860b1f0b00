// Replays the static training step as two CUDA graphs (`cuda_graph: true`).
//
// Why: a YOLO step at a small batch is thousands of small kernels, and the GPU's time goes to
// launching them rather than to the arithmetic; a graph launches them all at once. Two graphs keep
// the accumulation decision on the host: A = forward + loss + backward + the running sums (every
// batch), B = clip + optimizer step + zeroing the gradients in place + EMA (when a step is due).
// A graph replays fixed kernels on fixed addresses, so everything that changes between steps
// enters through tensors that stay where they are: the batch is copied into static buffers here;
// lr, momentum and AdamW's bias corrections are the optimizer's slots (Optimizer capturable
// mode), the EMA weight a slot of its own, the loss weights filled in place.
//
// Order: `warmup_batches` batches and one optimizer step run eagerly first, through the same
// buffers and code (they make what is made on first use: optimizer state, scale factors, cuBLAS
// and cuDNN plans); A is captured on the next batch, B on the next optimizer step, each replayed
// at once (a capture records, it does not run). invalidate() (a rollback or a resume replaced the
// gradients or the optimizer state) drops both and warms up again; a change of the batch's shape
// does so by itself. A failed capture is logged and the run goes on eagerly.
//
// All of it runs on a side stream (capture cannot use the default stream) that waits for the
// caller's stream on entry and is waited for on exit. Without CUDA (the CPU, tests) nothing is
// captured: the same buffers and bodies run eagerly, which is what the CPU tests exercise.
#pragma once

#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "loss/gt_targets.h"

namespace trainer::engine {

class CudaGraphStep {
 public:
  // The batch's work on the static buffers: uint8 images on the device (the loader's layout) and
  // the packed targets.
  using AccumulateBody = std::function<void(const at::Tensor& images, const loss::GtTargets&)>;
  using Work = std::function<void()>;

  CudaGraphStep(const c10::Device& device, int64_t warmup_batches);
  ~CudaGraphStep();
  CudaGraphStep(const CudaGraphStep&) = delete;
  CudaGraphStep& operator=(const CudaGraphStep&) = delete;

  // Copies `images` (host, uint8) and `targets` into the static buffers, then runs `body` on
  // them: eagerly while warming up or when `eager` (a fault-injection batch), else graph A.
  void accumulate(const at::Tensor& images, const loss::GtTargets& targets,
                  const AccumulateBody& body, bool eager = false);
  // `prepare` (host: upload the step's slots), then `body` (clip, step, zero, EMA): eagerly while
  // warming up, else graph B. After a failed capture `prepare` runs again before the eager body.
  void optimizer_step(const Work& prepare, const Work& body);
  // Drops both graphs: their inputs moved. Logged with `why`; warm-up starts again.
  void invalidate(const std::string& why);

  bool replaying() const;    // both graphs captured and in use
  int64_t captures() const;  // graphs captured so far (A and B count one each)
  bool fell_back() const;    // a capture failed: eager for the rest of the run
  int64_t eager_batches() const;

 private:
  struct State;
  void stage(const at::Tensor& images, const loss::GtTargets& targets);
  bool ready_to_capture() const;
  std::unique_ptr<State> state_;
};

}  // namespace trainer::engine
