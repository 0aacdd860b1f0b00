// Tested by tests/loss/test_keypoint_loss.cpp: the flow equals the standard normal it adapts.
#include "loss/keypoint_flow.h"

namespace trainer::loss {

KeypointFlow keypoint_flow(model::RealNvp flow) {
  KeypointFlow out;
  out.parameters = flow->parameters();
  out.log_prob = [flow](const at::Tensor& x) mutable { return flow->log_prob(x); };
  return out;
}

}  // namespace trainer::loss
