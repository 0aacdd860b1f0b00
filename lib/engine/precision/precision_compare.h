// BF16 autocast against fp32 on one batch with identical weights: per-layer activations, the head
// outputs, every loss term and every layer's gradients, plus which ops ran in BF16.
//
// Why: "does BF16 learn like fp32" needs to know where the two differ before it needs a long
// training comparison; a layer whose error stands out, or a loss term computed in BF16, is a
// defect to fix, while a uniform ~0.4%-per-op rounding is what BF16 costs. `trainer bench
// precision` prints this as JSON; the tests check the parts that must stay fp32.
#pragma once

#include <c10/core/Device.h>
#include <torch/types.h>

#include <map>
#include <string>
#include <vector>

#include "engine/precision/op_dtype_census.h"

namespace trainer::model {
class YoloModelImpl;
}
namespace trainer::loss {
class YoloLoss;
struct LossTargets;
}  // namespace trainer::loss

namespace trainer::engine {

struct LayerComparison {
  int64_t index = 0;
  std::string type;               // "Conv", "C3k2", ...
  std::string bf16_dtype;         // the layer output's dtype under autocast
  double activation_error = 0.0;  // ||a_bf16 - a_fp32|| / ||a_fp32||, accumulated through the net
  double gradient_error = 0.0;    // the same over the layer's parameter gradients
  double gradient_cosine = 1.0;   // cosine between the two gradients
  // The noise floor: the same errors for fp32 on the images rounded to bf16 (one bf16 rounding
  // of the input, no bf16 arithmetic), against fp32.
  double floor_activation_error = 0.0;
  double floor_gradient_error = 0.0;
};

struct PrecisionComparison {
  std::vector<LayerComparison> layers;  // the head is the last entry (its gradients; activation
                                        // error = the box and class outputs together)
  double head_box_error = 0.0;          // one-to-many head, box channels (all levels)
  double head_class_error = 0.0;        // class logits
  std::vector<double> loss_fp32, loss_bf16;  // the criterion's items
  std::vector<double> loss_floor;            // ... for fp32 on bf16-rounded images
  double gradient_error = 0.0;               // all trainable gradients together
  double gradient_cosine = 1.0;
  double floor_gradient_error = 0.0;  // fp32 on bf16-rounded images against fp32
  double floor_gradient_cosine = 1.0;
  std::map<std::string, OpDtypeCount> forward_ops;  // model forward under autocast
  std::vector<std::string>
      loss_low_precision_ops;      // arithmetic on BF16 inside the loss (want none)
  bool running_stats_fp32 = true;  // BN running mean/var stay fp32 after the step
  bool gradients_fp32 = true;      // every parameter gradient is fp32
};

// Runs `images` through `model` (training mode, as a training step) and `criterion` three times:
// in fp32, under BF16 autocast on `device`, and in fp32 on the images rounded to BF16 (the noise
// floor), each with backward; the model's parameters, buffers and gradients are restored
// afterwards. Relative errors are ||x - fp32|| / ||fp32||.
PrecisionComparison compare_precisions(model::YoloModelImpl& model, loss::YoloLoss& criterion,
                                       const at::Tensor& images, const loss::LossTargets& targets,
                                       const c10::Device& device);

}  // namespace trainer::engine
