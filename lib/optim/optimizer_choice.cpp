// See optimizer_choice.h.
#include "optim/optimizer_choice.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "optim/lr_schedule.h"
#include "optim/sgd.h"

namespace trainer::optim {

AutoOptimizerChoice choose_auto_optimizer(int64_t train_images, int64_t batch, int64_t nbs,
                                          int64_t epochs, int64_t num_classes) {
  AutoOptimizerChoice c;
  const int64_t per_epoch = (train_images + std::max(batch, nbs) - 1) / std::max(batch, nbs);
  c.iterations = per_epoch * epochs;
  const bool musgd = c.iterations > 10000;
  c.kind = musgd ? OptimizerKind::kMuSGD : OptimizerKind::kAdamW;
  c.lr =
      musgd ? 0.01 : std::round(0.002 * 5.0 / (4.0 + static_cast<double>(num_classes)) * 1e6) / 1e6;
  return c;
}

OptimizerChoice choose_optimizer(const OptimizerRequest& r) {
  OptimizerChoice c;
  c.kind = r.kind;
  c.lr = r.lr0;
  c.momentum = r.momentum;
  c.warmup_bias_lr = r.warmup_bias_lr;
  c.weight_decay = scaled_weight_decay(r.weight_decay, r.batch, r.nbs);
  if (r.kind == OptimizerKind::kAuto) {
    const auto a = choose_auto_optimizer(r.train_images, r.batch, r.nbs, r.epochs, r.num_classes);
    c.kind = a.kind;
    c.lr = a.lr;
    c.momentum = a.momentum;
    c.warmup_bias_lr = a.warmup_bias_lr;
    c.auto_chosen = true;
  }
  return c;
}

std::unique_ptr<Optimizer> make_optimizer(OptimizerKind kind, std::vector<ParamGroup> groups,
                                          const OptimizerOptions& options) {
  switch (kind) {
    case OptimizerKind::kMuSGD:
      return std::make_unique<MuSGD>(std::move(groups), options.musgd);
    case OptimizerKind::kSGD:
      return std::make_unique<Sgd>(std::move(groups), options.foreach);
    case OptimizerKind::kAdamW: {
      AdamWOptions o = options.adamw;
      o.foreach = options.foreach;
      return std::make_unique<AdamW>(std::move(groups), o);
    }
    case OptimizerKind::kAuto:
      break;
  }
  throw std::invalid_argument("make_optimizer: optimizer 'auto' must be resolved first");
}

bool uses_muon_groups(OptimizerKind kind) {
  return kind == OptimizerKind::kMuSGD;
}

bool schedules_momentum(OptimizerKind kind) {
  return kind != OptimizerKind::kAdamW;
}

}  // namespace trainer::optim
