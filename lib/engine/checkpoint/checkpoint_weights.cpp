// No logic of its own: one-line forward of ema_weights to optim::ModelEma::weights_in.
// What a model takes from a checkpoint: its EMA weights (ema_weights in checkpoint.h). Kept apart
// from the file format in checkpoint.cpp, which the checkpoint fuzz target compiles on its own
// without the model and optimizer libraries.
#include "engine/checkpoint/checkpoint.h"
#include "optim/ema.h"

namespace trainer::engine {

std::vector<std::pair<std::string, at::Tensor>> ema_weights(const Checkpoint& checkpoint) {
  return optim::ModelEma::weights_in(checkpoint.ema);
}

}  // namespace trainer::engine
