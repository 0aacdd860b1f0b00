// Which optimizer a run uses and with which hyperparameters, and the one function that builds it.
//
// Why: the reference resolves `optimizer: auto` from the run's length and the class count, and
// then builds MuSGD, SGD or AdamW over the same parameter groups. Both decisions live here, with
// the optimizers, so the engine never compares optimizer names: it asks for a choice, builds it
// with make_optimizer() and reads the kind.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "optim/adamw.h"
#include "optim/musgd.h"
#include "optim/optimizer.h"
#include "optim/optimizer_kind.h"
#include "optim/param_group.h"

namespace trainer::optim {

// What the user asked for (the config's values) and what the auto rule needs to know.
struct OptimizerRequest {
  OptimizerKind kind = OptimizerKind::kAuto;
  double lr0 = 0.01;
  double momentum = 0.937;
  double warmup_bias_lr = 0.1;
  double weight_decay = 5e-4;  // unscaled (the config's value)
  int64_t batch = 16;
  int64_t nbs = 64;
  int64_t epochs = 100;
  int64_t train_images = 0;
  int64_t num_classes = 80;
};

// The resolved choice: `kind` is never kAuto.
struct OptimizerChoice {
  OptimizerKind kind = OptimizerKind::kMuSGD;
  double lr = 0.01;  // lr0 actually used (auto overrides it)
  double momentum = 0.937;
  double warmup_bias_lr = 0.1;
  double weight_decay = 0.0;  // scaled by batch / nbs (scaled_weight_decay)
  bool auto_chosen = false;
};

// optimizer=auto: MuSGD (lr 0.01, momentum 0.9) when ceil(n / max(batch, nbs)) * epochs > 10000,
// else AdamW (lr round(0.002 * 5 / (4 + nc), 6), momentum 0.9); warmup_bias_lr becomes 0 in both.
struct AutoOptimizerChoice {
  OptimizerKind kind = OptimizerKind::kAdamW;
  double lr = 0;
  double momentum = 0.9;
  double warmup_bias_lr = 0.0;
  int64_t iterations = 0;
};
AutoOptimizerChoice choose_auto_optimizer(int64_t train_images, int64_t batch, int64_t nbs,
                                          int64_t epochs, int64_t num_classes);

// The reference's choice for `request` (the auto rule included); weight decay scaled by batch/nbs.
OptimizerChoice choose_optimizer(const OptimizerRequest& request);

// The settings of every kind; make_optimizer() reads the ones of the kind it builds.
struct OptimizerOptions {
  bool foreach = true;  // SGD and AdamW: one foreach call per group (false: the scalar oracle)
  MuSGDOptions musgd;
  AdamWOptions
      adamw;  // beta1 is the choice's momentum (the reference's AdamW(betas=(momentum, ..)))
};

// MuSGD, SGD or AdamW over `groups`. Throws std::invalid_argument for kAuto (resolve it first).
std::unique_ptr<Optimizer> make_optimizer(OptimizerKind kind, std::vector<ParamGroup> groups,
                                          const OptimizerOptions& options);

// Whether the kind splits out Muon groups (and the head's x3-lr groups): MuSGD only.
bool uses_muon_groups(OptimizerKind kind);
// Whether warmup and the schedule drive the groups' momentum: not AdamW, whose beta1 is fixed at
// construction (the reference's warmup touches only `momentum`).
bool schedules_momentum(OptimizerKind kind);

}  // namespace trainer::optim
