// MuSGD: SGD-Nesterov on every parameter plus a Muon step on matrix weights (reference 1.3).
//
// Why: this is the optimizer of the YOLO26 era, and its step is the largest post-backward cost. The
// maths is fixed; three schedules compute it (optimizer-batching.md):
//   kScalar  one parameter at a time: the oracle, kept forever;
//   kBatched Newton-Schulz on exact-shape stacks with baddbmm epilogues, foreach momentum;
//   kPadded  kBatched plus zero-extended stacks of matrices sharing a smaller dimension <= 256.
// Parameters whose storage overlaps another's always take the scalar path (exact by construction).
// State is per parameter (Muon buffer M and SGD buffer B) and does not depend on the schedule.
#pragma once

#include <vector>

#include "optim/muon_update.h"
#include "optim/newton_schulz.h"
#include "optim/optimizer.h"

namespace trainer::optim {

enum class MuonSchedule { kScalar, kBatched, kPadded };

// "scalar", "batched", "padded": the config's optim.impl values, for logs and benchmark rows.
const char* muon_schedule_name(MuonSchedule schedule);

struct MuSGDOptions {
  double muon_gain = 0.2;  // the trainer's MuSGD(muon=0.2, sgd=1.0)
  double sgd_gain = 1.0;
  NewtonSchulzOptions ns;
  MuonSchedule schedule = MuonSchedule::kPadded;
  int64_t pad_max_dim = 256;  // padding only where the shared smaller dimension is <= this
};

class MuSGD : public Optimizer {
 public:
  MuSGD(std::vector<ParamGroup> groups, MuSGDOptions options);

  void step() override;
  std::vector<ParamGroup>& groups() override { return groups_; }
  StateDict state_dict() const override;
  void load_state_dict(const StateDict& state) override;

  const MuSGDOptions& options() const { return options_; }
  // Scale-factor tensors kept on the device (one per distinct bucket; test and diagnostics).
  size_t cached_scale_factors() const { return scale_factors_.size(); }
  void set_schedule(MuonSchedule schedule) { options_.schedule = schedule; }

  // Buckets the last step formed (for tests and the benchmark): each entry is the member count of
  // one Newton-Schulz batch; `padded` flags batches of mixed widths.
  struct BucketInfo {
    size_t members = 0;
    bool padded = false;
    int64_t stack_bytes = 0;
    int64_t member_bytes = 0;  // parameter + gradient bytes of the members
  };
  const std::vector<BucketInfo>& last_buckets() const { return last_buckets_; }

 protected:
  // Per group: momentum, one_minus_momentum (the Muon lerp), neg_muon_lr (-lr x muon_gain),
  // sgd_lr (lr x the SGD gain of matrices) and lr (the rest).
  std::vector<std::string> step_scalar_names() const override;
  void write_step_scalars(StepScalars& scalars) override;

 private:
  struct ParamState {
    at::Tensor muon_momentum;  // M (muon groups only)
    at::Tensor sgd_momentum;   // B
  };

  void step_scalar_param(ParamGroup& group, at::Tensor& param, ParamState& state);
  void step_group_foreach(size_t g, std::vector<size_t>& scheduled,
                          const std::vector<at::Tensor>& muon_updates);
  std::vector<at::Tensor> orthogonalize_all(const std::vector<at::Tensor>& updates);
  void ensure_state(size_t g, size_t i);
  std::vector<std::vector<bool>> overlapping_params() const;

  std::vector<ParamGroup> groups_;
  MuSGDOptions options_;
  ScaleFactorCache scale_factors_;  // the stacks' scale factors, on the device once
  std::vector<std::vector<ParamState>> state_;
  std::vector<BucketInfo> last_buckets_;
};

// The dimension-dependent scale of the reference: sqrt(max(1, size(-2)/size(-1))) of the original
// tensor (so 1 for every square-kernel conv weight).
double muon_scale(const at::Tensor& param);

}  // namespace trainer::optim
