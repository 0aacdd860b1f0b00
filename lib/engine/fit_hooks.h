// The test hooks of a fit: calls at batch edges that inject a fault or observe a step.
//
// Why a module of their own: production options should say what a run is, not how the fault
// tests break it. The hooks are empty in every real run; the fault scripts switch them on through
// the environment (fault_hooks_from_environment, honoured only with TRAINER_TEST_HOOKS=1), and the
// tests set them directly.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace trainer::engine {

struct FitHooks {
  // Called before each batch with (epoch, batch index); returning true makes that batch's loss
  // non-finite (NaN), as a diverging run would.
  std::function<bool(int64_t epoch, int64_t batch)> inject_non_finite;
  // Called before each training batch, and after each validation batch of this rank.
  std::function<void(int64_t epoch, int64_t batch)> before_batch;
  std::function<void(int64_t epoch, int64_t batch)> after_validation_batch;
  // Called after each batch whose step ran the optimizer.
  std::function<void(int64_t epoch, int64_t batch)> observe_optimizer_step;
};

// TRAINER_FAULT_NON_FINITE=R:E:B: rank R's loss is non-finite at batch B of epoch E (0-based).
struct NonFiniteFault {
  int rank = -1;
  int64_t epoch = -1;
  int64_t batch = -1;
};
// Throws core::ConfigError naming the variable for a value that is not RANK:EPOCH:BATCH.
NonFiniteFault parse_non_finite_fault(const std::string& spec);

// TRAINER_FAULT_KILL=A:R:E:B[,...]: on attempt A of an elastic job rank R is killed (SIGKILL)
// before training batch B of epoch E, or for B = vN after its validation batch N.
struct KillPoint {
  int attempt = 0;
  int rank = -1;
  int64_t epoch = -1;
  int64_t batch = -1;
  bool validation = false;
};
// Throws core::ConfigError naming the entry that is not ATTEMPT:RANK:EPOCH:[v]BATCH.
std::vector<KillPoint> parse_kill_points(const std::string& spec);

// The hooks the fault scripts ask of this process (rank `rank`, elastic attempt
// TORCHELASTIC_RESTART_COUNT, 0 outside torchrun): the non-finite loss fires once (the redone
// epoch then runs clean); a kill point raises SIGKILL. Empty hooks without TRAINER_TEST_HOOKS=1.
FitHooks fault_hooks_from_environment(int rank);

}  // namespace trainer::engine
