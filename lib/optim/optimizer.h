// The interface the trainer uses for every optimizer (MuSGD, SGD, AdamW).
//
// Why: the fit loop, schedules and checkpoints treat optimizers alike: step, zero grads, adjust
// group lr/momentum, and save/load state as a flat name -> tensor map that does not depend on which
// schedule (scalar, batched, padded) wrote it.
#pragma once

#include <ATen/core/Tensor.h>

#include <map>
#include <string>
#include <vector>

#include "optim/param_group.h"

namespace trainer::optim {

using StateDict = std::map<std::string, at::Tensor>;

class Optimizer {
 public:
  virtual ~Optimizer() = default;
  virtual void step() = 0;
  virtual std::vector<ParamGroup>& groups() = 0;
  virtual StateDict state_dict() const = 0;
  // Loads state written by any schedule of the same optimizer; throws std::runtime_error naming a
  // missing or mismatched entry.
  virtual void load_state_dict(const StateDict& state) = 0;

  // set_to_none: every gradient undefined (the next backward allocates fresh; what the eager step
  // does). Otherwise zeroed in place: the tensors stay where they are, as a captured CUDA graph,
  // which replays on fixed addresses, needs.
  void zero_grad(bool set_to_none = true);
};

// "g3.p7.sgd_momentum": the key of one parameter's state entry.
std::string state_key(size_t group, size_t param, const char* name);

// A copy of `state.at(key)` with the dtype and device of `like`; throws std::runtime_error naming
// the key when it is missing or its shape differs from `like`'s.
at::Tensor load_state_entry(const StateDict& state, const std::string& key, const at::Tensor& like);

// Throws when `used` (entries a load consumed) is less than the map's size: the state was written
// for another model or optimizer.
void check_all_state_used(const StateDict& state, size_t used);

}  // namespace trainer::optim
