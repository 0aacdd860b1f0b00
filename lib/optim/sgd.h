// SGD with Nesterov momentum and coupled weight decay (torch.optim.SGD, dampening 0).
//
// Why: the reference uses SGD under `optimizer: SGD` and for the non-matrix groups of MuSGD; it
// shares the momentum code (momentum.h) with MuSGD, in a scalar (oracle) and a foreach schedule.
#pragma once

#include <vector>

#include "optim/optimizer.h"

namespace trainer::optim {

class Sgd : public Optimizer {
 public:
  Sgd(std::vector<ParamGroup> groups, bool foreach);

  void step() override;
  std::vector<ParamGroup>& groups() override { return groups_; }
  StateDict state_dict() const override;
  void load_state_dict(const StateDict& state) override;

 protected:
  std::vector<std::string> step_scalar_names() const override;  // g.lr, g.momentum
  void write_step_scalars(StepScalars& scalars) override;

 private:
  std::vector<ParamGroup> groups_;
  bool foreach_;
  std::vector<std::vector<at::Tensor>> buffers_;
};

}  // namespace trainer::optim
