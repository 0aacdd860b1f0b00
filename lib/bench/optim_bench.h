// `trainer bench optim`: one optimizer step and one EMA update on a real model's parameter set,
// timed for each schedule with alternating arms in one process (benchmark-method.md section 3).
//
// Why: the seeds' claim is that the post-backward work gets cheaper without changing its maths;
// this isolates that work (no loader, no forward/backward) so each schedule's cost is visible.
// Every arm starts from the same parameter values and fixed random gradients with a fresh
// optimizer/EMA, so the arms differ only in the schedule. This is a stage benchmark: the training
// claim is made on complete intervals (`trainer bench interval` / `abba`).
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "bench/run_record.h"
#include "optim/musgd.h"

namespace torch::nn {
class Module;
}

namespace trainer::bench {

struct OptimBenchOptions {
  std::string device = "cpu";
  int warmup = 2;           // discarded steps per arm (the first builds the momentum buffers)
  int measure = 10;         // measured steps per arm; the arm's value is their median
  int pairs = 5;            // rounds; each round runs every arm once, in a fixed order
  uint64_t seed = 0;        // gradients: N(0, 1e-2^2) from this seed
  std::string head_prefix;  // "model.<last>." for the x3 classification-head groups
  double threshold = 0.08;
  // Hyperparameters (trainer defaults; they do not change the cost, but are recorded).
  double lr = 0.01;
  double momentum = 0.937;
  double weight_decay = 5e-4;
  optim::MuSGDOptions musgd;
  double ema_decay = 0.9999;
  double ema_tau = 2000.0;
};

// Runs the three comparisons on `model` (moved to options.device):
//   optimizer: MuSGD step, scalar (A) against batched and padded;
//   ema: EMA update, scalar (A) against foreach;
//   step_plus_ema: MuSGD + EMA, scalar+scalar (A) against padded+foreach (the seeds' candidate).
// Returns the JSON (without the record; the caller adds it). `log` (optional) gets progress lines.
Json run_optim_bench(torch::nn::Module& model, const OptimBenchOptions& options,
                     const std::function<void(const std::string&)>& log = {});

// Top-level keys of run_optim_bench()'s JSON.
const std::vector<std::string>& optim_json_keys();

}  // namespace trainer::bench
