// The interface the trainer uses for every optimizer (MuSGD, SGD, AdamW).
//
// Why: the fit loop, schedules and checkpoints treat optimizers alike: step, zero grads, adjust
// group lr/momentum, and save/load state as a flat name -> tensor map that does not depend on which
// schedule (scalar, batched, padded) wrote it.
#pragma once

#include <ATen/core/Tensor.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "optim/param_group.h"

namespace trainer::optim {

using StateDict = std::map<std::string, at::Tensor>;

class StepScalars;

class Optimizer {
 public:
  Optimizer();
  virtual ~Optimizer();
  Optimizer(const Optimizer&) = delete;
  Optimizer& operator=(const Optimizer&) = delete;

  // In capturable mode, call prepare_step() (host) before each step().
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

  // Capturable mode, for a step a CUDA graph records once and replays: every number that changes
  // between steps (each group's lr and momentum, AdamW's bias corrections) is read by step() from
  // a 0-d device slot (StepScalars) instead of being passed as a host Scalar, which a graph would
  // freeze at its capture value. Each step is then
  //   prepare_step()  host: the coming step's values from the groups into the slots, uploaded
  //                   (idempotent: a retry after a failed capture prepares again);
  //   step()          or a replay of a captured step() (which runs no host code);
  //   count_step()    host: the counts step() would advance (AdamW's step numbers).
  // The arithmetic is the eager one with the scalars as tensors: equal to rounding
  // (tests/optim/test_capturable.cpp). Gradients stay allocated (zero_grad(false)).
  void make_capturable(const at::Device& device);
  bool capturable() const { return scalars_ != nullptr; }
  void prepare_step();
  void count_step() { advance_step_counts(); }

 protected:
  // The slots this optimizer's capturable step reads, e.g. "g0.lr" (group_slot).
  virtual std::vector<std::string> step_scalar_names() const = 0;
  // Writes the coming step's value of every slot (StepScalars::set); changes no state.
  virtual void write_step_scalars(StepScalars& scalars) = 0;
  // Capturable mode: what step() leaves to count_step().
  virtual void advance_step_counts() {}
  // The slot `name` (capturable mode only).
  const at::Tensor& step_scalar(const std::string& name) const;
  // In capturable mode: throws unless prepare_step() ran since the last step() (a step reading
  // the previous step's slots would be silently wrong). Called at the top of step().
  void consume_prepared_step();

 private:
  std::unique_ptr<StepScalars> scalars_;
  bool prepared_ = false;
};

// "g3.lr": the name of group `group`'s slot `name` in capturable mode.
std::string group_slot(size_t group, const char* name);

// "g3.p7.sgd_momentum": the key of one parameter's state entry.
std::string state_key(size_t group, size_t param, const char* name);

// A copy of `state.at(key)` with the dtype and device of `like`; throws std::runtime_error naming
// the key when it is missing or its shape differs from `like`'s.
at::Tensor load_state_entry(const StateDict& state, const std::string& key, const at::Tensor& like);

// Throws when `used` (entries a load consumed) is less than the map's size: the state was written
// for another model or optimizer.
void check_all_state_used(const StateDict& state, size_t used);

}  // namespace trainer::optim
