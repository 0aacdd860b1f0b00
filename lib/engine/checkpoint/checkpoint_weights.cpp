// What a model takes from a checkpoint: its EMA weights (see checkpoint.h). Kept apart from the
// file format in checkpoint.cpp, which the checkpoint fuzz target compiles on its own without the
// model and optimizer libraries.
#include "engine/checkpoint/checkpoint.h"
#include "model/weights_io.h"
#include "model/yolo_model.h"
#include "optim/ema.h"

namespace trainer::engine {

std::vector<std::pair<std::string, at::Tensor>> ema_weights(const Checkpoint& checkpoint) {
  return optim::ModelEma::weights_in(checkpoint.ema);
}

void load_weights_or_checkpoint(model::YoloModelImpl& model, const std::filesystem::path& path) {
  if (path.extension() == ".ckpt") {
    load_checkpoint_weights(model, load_checkpoint(path), path);
    return;
  }
  model::load_weights(model, path);
}

void load_checkpoint_weights(model::YoloModelImpl& model, const Checkpoint& checkpoint,
                             const std::filesystem::path& path) {
  model::load_weights(model, ema_weights(checkpoint), path.string() + " (EMA weights)");
}

}  // namespace trainer::engine
