// Learning-rate, momentum and accumulation schedules as pure functions of (iteration, epoch).
//
// Why: the reference interleaves a per-epoch LambdaLR with per-iteration warmup overrides; writing
// each value as a function of the global iteration makes it testable at any step and makes resume
// exact (recompute, never trust a restored lr). See reference-behaviour.md 1.5 and 3.2.
#pragma once

#include <cstdint>
#include <optional>

#include "optim/param_group.h"

namespace trainer::optim {

struct ScheduleSettings {
  int64_t epochs = 100;
  int64_t batches_per_epoch = 1;  // nb
  double warmup_epochs = 3.0;
  double warmup_momentum = 0.8;
  double warmup_bias_lr = 0.1;
  double momentum = 0.937;  // args.momentum: the warmup target (also under optimizer=auto)
  double lrf = 0.01;
  bool cos_lr = false;
  int64_t nbs = 64;
  int64_t batch = 16;
};

// numpy.interp on one segment: clamps outside [x0, x1].
double interp(double x, double x0, double x1, double y0, double y1);

// Python's round() for the values the reference rounds (half to even).
int64_t round_half_even(double x);

// nw = round(min(warmup_epochs, max(epochs - 1, 0)) * nb), or 0 when warmup_epochs <= 0.
int64_t warmup_iterations(const ScheduleSettings& s);

// lf(e): linear max(1 - e/E, 0)(1 - lrf) + lrf, or cosine ((1 - cos(pi e/E))/2)(lrf - 1) + 1.
double lr_factor(const ScheduleSettings& s, int64_t epoch);

// The lr a group uses at global iteration ni (= i + nb*epoch), warmup included. Warmup runs while
// ni <= nw (8.4.190), so at ni == nw it lands exactly on the epoch's target, which then holds.
double group_lr(const ScheduleSettings& s, GroupKind kind, double initial_lr, int64_t ni);

// The momentum warmup sets at ni (ni <= nw), or nullopt once warmup is over (or there is none).
std::optional<double> warmup_momentum_at(const ScheduleSettings& s, int64_t ni);

// The momentum a group has at ni as a pure function (so a resumed run gets the same value): the
// warmup value while ni <= nw, then `momentum` (where warmup left it), or `initial` without warmup.
double momentum_at(const ScheduleSettings& s, int64_t ni, double initial);

// max(round(nbs / batch), 1), capped at the run's batch count (nb * epochs) as the reference does.
int64_t nominal_accumulate(const ScheduleSettings& s);

// Optimizer steps happen every `accumulate` batches: ramps 1 -> nominal while ni <= nw.
int64_t accumulate_at(const ScheduleSettings& s, int64_t ni);

// weight_decay * batch * accumulate / nbs with accumulate = max(round(nbs / batch), 1).
double scaled_weight_decay(double weight_decay, int64_t batch, int64_t nbs);

}  // namespace trainer::optim
