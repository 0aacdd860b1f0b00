#include "optim/lr_schedule.h"

#include <algorithm>
#include <cfenv>
#include <cmath>

namespace trainer::optim {

double interp(double x, double x0, double x1, double y0, double y1) {
  if (x <= x0) return y0;
  if (x >= x1) return y1;
  return y0 + (x - x0) * (y1 - y0) / (x1 - x0);
}

int64_t round_half_even(double x) {
  const double r = std::round(x);
  if (std::abs(x - std::trunc(x)) == 0.5) return static_cast<int64_t>(2.0 * std::round(x / 2.0));
  return static_cast<int64_t>(r);
}

int64_t warmup_iterations(const ScheduleSettings& s) {
  if (s.warmup_epochs <= 0) return 0;
  const double epochs =
      std::min(s.warmup_epochs, static_cast<double>(std::max<int64_t>(s.epochs - 1, 0)));
  return round_half_even(epochs * static_cast<double>(s.batches_per_epoch));
}

double lr_factor(const ScheduleSettings& s, int64_t epoch) {
  const double e = static_cast<double>(epoch);
  const double total = static_cast<double>(s.epochs);
  if (s.cos_lr) return ((1.0 - std::cos(M_PI * e / total)) / 2.0) * (s.lrf - 1.0) + 1.0;
  return std::max(1.0 - e / total, 0.0) * (1.0 - s.lrf) + s.lrf;
}

double group_lr(const ScheduleSettings& s, GroupKind kind, double initial_lr, int64_t ni) {
  const int64_t nw = warmup_iterations(s);
  const int64_t epoch = ni / std::max<int64_t>(s.batches_per_epoch, 1);
  const double target = initial_lr * lr_factor(s, epoch);
  const double start = kind == GroupKind::kBias ? s.warmup_bias_lr : 0.0;
  // ni == nw is still warmup and lands exactly on the target, so the rest of the epoch uses it too.
  if (nw > 0 && ni <= nw) {
    return interp(static_cast<double>(ni), 0.0, static_cast<double>(nw), start, target);
  }
  return target;
}

std::optional<double> warmup_momentum_at(const ScheduleSettings& s, int64_t ni) {
  const int64_t nw = warmup_iterations(s);
  if (nw <= 0 || ni > nw) return std::nullopt;
  return interp(static_cast<double>(ni), 0.0, static_cast<double>(nw), s.warmup_momentum,
                s.momentum);
}

double momentum_at(const ScheduleSettings& s, int64_t ni, double initial) {
  const int64_t nw = warmup_iterations(s);
  if (nw <= 0) return initial;
  return *warmup_momentum_at(s, std::min(ni, nw));
}

int64_t nominal_accumulate(const ScheduleSettings& s) {
  const int64_t full = std::max<int64_t>(
      round_half_even(static_cast<double>(s.nbs) / static_cast<double>(s.batch)), 1);
  return std::min(full, std::max<int64_t>(s.batches_per_epoch * s.epochs, 1));
}

int64_t accumulate_at(const ScheduleSettings& s, int64_t ni) {
  const int64_t nw = warmup_iterations(s);
  const int64_t nominal = nominal_accumulate(s);
  if (nw > 0 && ni <= nw) {
    return std::max<int64_t>(
        1, round_half_even(interp(static_cast<double>(ni), 0.0, static_cast<double>(nw), 1.0,
                                  static_cast<double>(nominal))));
  }
  return nominal;
}

double scaled_weight_decay(double weight_decay, int64_t batch, int64_t nbs) {
  const int64_t accumulate =
      std::max<int64_t>(round_half_even(static_cast<double>(nbs) / static_cast<double>(batch)), 1);
  return weight_decay * static_cast<double>(batch * accumulate) / static_cast<double>(nbs);
}

}  // namespace trainer::optim
