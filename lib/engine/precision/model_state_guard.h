// Puts a model back as it was after probing it: BatchNorm statistics (and other buffers),
// gradients and training mode.
//
// Why: the precision check, the bench timing and the precision comparison all run training-mode
// passes on the model a run is about to train; those passes move the running statistics and leave
// gradients behind, which must not leak into the run.
#pragma once

#include <torch/nn/module.h>

#include <vector>

namespace trainer::engine {

class ModelStateGuard {
 public:
  explicit ModelStateGuard(torch::nn::Module& model);
  ~ModelStateGuard();  // restore_buffers(), then the gradients and the mode
  ModelStateGuard(const ModelStateGuard&) = delete;
  ModelStateGuard& operator=(const ModelStateGuard&) = delete;

  // The buffers as they were at construction (so several passes start from the same state).
  void restore_buffers();

 private:
  torch::nn::Module& model_;
  bool was_training_;
  std::vector<at::Tensor> buffers_, grads_;
};

}  // namespace trainer::engine
