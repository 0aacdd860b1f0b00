// AdamW (torch.optim.AdamW semantics): decoupled decay, bias-corrected moments.
//
// Why: `optimizer: auto` picks AdamW for short runs (reference 1.5), so short fits and the demo use
// it. Scalar (oracle) and foreach schedules share the operation order, so they agree bit for bit.
// beta1 is fixed at construction (the reference's warmup only touches groups with a `momentum` key,
// which Adam groups lack).
#pragma once

#include <vector>

#include "optim/optimizer.h"

namespace trainer::optim {

struct AdamWOptions {
  double beta1 = 0.9;
  double beta2 = 0.999;
  double eps = 1e-8;
  bool foreach = true;
};

class AdamW : public Optimizer {
 public:
  AdamW(std::vector<ParamGroup> groups, AdamWOptions options);

  void step() override;
  std::vector<ParamGroup>& groups() override { return groups_; }
  StateDict state_dict() const override;
  void load_state_dict(const StateDict& state) override;

 protected:
  // Per group: decay (1 - lr x weight_decay), bc2_sqrt and neg_step_size (-lr / bc1) of the
  // coming step (one step number per group in capturable mode); count_step() advances it.
  std::vector<std::string> step_scalar_names() const override;
  void write_step_scalars(StepScalars& scalars) override;
  void advance_step_counts() override;

 private:
  void step_capturable();

  struct ParamState {
    at::Tensor exp_avg;
    at::Tensor exp_avg_sq;
    int64_t step = 0;
  };
  std::vector<ParamGroup> groups_;
  AdamWOptions options_;
  std::vector<std::vector<ParamState>> state_;
};

}  // namespace trainer::optim
