// The normalising flow as the RLE loss sees it: a log-density of 2-D residuals and the parameters
// it depends on.
//
// Why not the model type: lib/loss takes the head's outputs, not the head; a callable keeps the
// loss testable with a closed-form density (a standard normal) and free of the pose model's code.
#pragma once

#include <ATen/core/Tensor.h>

#include <functional>
#include <vector>

#include "model/real_nvp.h"

namespace trainer::loss {

struct KeypointFlow {
  // (N, 2) residuals -> (N) log-density, differentiable in the residuals and the parameters.
  std::function<at::Tensor(const at::Tensor&)> log_prob;
  // Every trainable parameter of the flow: a batch without positives still adds a zero that
  // touches each (so data-parallel gradient reduction sees them all used).
  std::vector<at::Tensor> parameters;
};

// The flow of a YOLO26-pose head (shares the module: later weight updates are seen).
KeypointFlow keypoint_flow(model::RealNvp flow);

}  // namespace trainer::loss
