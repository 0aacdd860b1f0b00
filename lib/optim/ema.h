// Exponential moving average of the model's weights (reference-behaviour.md 2).
//
// Why: validation and checkpoints use the EMA weights. The shadow covers every floating parameter
// and buffer (BN running statistics too); integer buffers are copied, never averaged. The decay
// ramps as d = decay * (1 - exp(-updates / tau)). Two schedules compute the same recurrence
// ema = lerp(ema, live, 1 - d): kScalar one tensor at a time (the oracle), kForeach one
// `_foreach_lerp_` per (device, dtype) bucket. The shadow is never handed out for writing: callers
// copy it into another model for validation.
#pragma once

#include <ATen/core/Tensor.h>

#include <map>
#include <string>
#include <utility>
#include <vector>

namespace trainer::optim {

enum class EmaSchedule { kScalar, kForeach };

// "scalar", "foreach": the config's ema.impl values, for logs and benchmark rows.
const char* ema_schedule_name(EmaSchedule schedule);

using NamedTensors = std::vector<std::pair<std::string, at::Tensor>>;

class ModelEma {
 public:
  // `live` names the model's parameters and buffers (for example from named_parameters() and
  // named_buffers()); the shadow starts as a detached copy.
  ModelEma(const NamedTensors& live, double decay = 0.9999, double tau = 2000.0,
           EmaSchedule schedule = EmaSchedule::kForeach);

  // updates += 1, then every floating entry moves towards `live` with weight 1 - d(updates);
  // integer entries are copied. `live` must name the same tensors in the same order as at
  // construction.
  void update(const NamedTensors& live);

  double decay_at(int64_t updates) const;  // d(n)

  // The same update split for a captured CUDA graph, whose replays run device work only:
  // lerp_towards moves the shadow by the weight held in the 0-d fp64 tensor `weight` (on the
  // shadow's device; one lerp per tensor, the weight converted on the device to each entry's
  // dtype) and copies integer entries; count_update advances the host's update count. With
  // weight = 1 - decay_at(updates() + 1) written before each replay, lerp_towards then
  // count_update equals update() bit for bit for fp32 and fp64 entries (a reduced-precision entry
  // would see the weight rounded to its own dtype, ATen's lerp taking no wider tensor weight).
  void lerp_towards(const NamedTensors& live, const at::Tensor& weight);
  void count_update() { ++updates_; }
  int64_t updates() const { return updates_; }

  // Copies the shadow into `target` (same names and shapes), e.g. an evaluation model.
  void copy_to(const NamedTensors& target) const;
  const NamedTensors& shadow() const { return shadow_; }

  // Checkpoint form: "ema.<name>" tensors plus "ema.updates"; load checks names and shapes.
  std::map<std::string, at::Tensor> state_dict() const;
  void load_state_dict(const std::map<std::string, at::Tensor>& state);
  // The averaged weights held in a state_dict(), under the model's own names (without the "ema."
  // prefix and the update count), e.g. to score or export a checkpoint's EMA weights.
  static NamedTensors weights_in(const std::map<std::string, at::Tensor>& state);

  void set_schedule(EmaSchedule schedule) { schedule_ = schedule; }

 private:
  NamedTensors shadow_;
  double decay_;
  double tau_;
  EmaSchedule schedule_;
  int64_t updates_ = 0;
};

}  // namespace trainer::optim
