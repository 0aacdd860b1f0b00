// See optim_bench.h.
#include "bench/optim_bench.h"

#include <ATen/CPUGeneratorImpl.h>
#include <fmt/format.h>
#include <torch/torch.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <memory>
#include <stdexcept>

#include "bench/abba.h"
#include "bench/stats.h"
#include "optim/ema.h"
#include "optim/param_groups.h"

namespace trainer::bench {
namespace {

using Clock = std::chrono::steady_clock;

// Holds the model's parameter set, the fixed gradients and the starting values, and times arms.
class Harness {
 public:
  Harness(torch::nn::Module& model, const OptimBenchOptions& options)
      : model_(model), options_(options), device_(options.device) {
    model_.to(device_);
    torch::NoGradGuard no_grad;
    auto gen = at::make_generator<at::CPUGeneratorImpl>(options.seed);
    for (auto& p : model_.parameters()) {
      start_values_.push_back(p.detach().clone());
      if (p.requires_grad()) {
        grads_.push_back(
            (at::randn(p.sizes(), gen, at::TensorOptions().dtype(torch::kFloat32)) * 1e-2)
                .to(p.options()));
      } else {
        grads_.emplace_back();
      }
    }
    optim::GroupingOptions grouping;
    grouping.use_muon = true;
    grouping.lr = options.lr;
    grouping.momentum = options.momentum;
    grouping.weight_decay = options.weight_decay;
    grouping.head_prefix = options.head_prefix;
    groups_ = optim::build_param_groups(model_, grouping);
  }

  // Parameters back to their start values, gradients back to the fixed ones.
  void reset() {
    torch::NoGradGuard no_grad;
    auto params = model_.parameters();
    for (size_t i = 0; i < params.size(); ++i) {
      params[i].copy_(start_values_[i]);
      if (grads_[i].defined()) params[i].mutable_grad() = grads_[i].clone();
    }
  }

  optim::NamedTensors live() const {
    optim::NamedTensors out;
    for (const auto& p : model_.named_parameters()) out.emplace_back(p.key(), p.value());
    for (const auto& b : model_.named_buffers()) out.emplace_back(b.key(), b.value());
    return out;
  }

  // Runs warmup + measure steps of `step`; returns the measured step times in ms.
  std::vector<double> time_steps(const std::function<void()>& step) {
    std::vector<double> times;
    for (int i = 0; i < options_.warmup + options_.measure; ++i) {
      sync();
      const auto t0 = Clock::now();
      step();
      sync();
      const double ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
      if (i >= options_.warmup) times.push_back(ms);
    }
    return times;
  }

  std::unique_ptr<optim::MuSGD> make_optimizer(optim::MuonSchedule schedule) const {
    optim::MuSGDOptions o = options_.musgd;
    o.schedule = schedule;
    return std::make_unique<optim::MuSGD>(groups_, o);
  }

  std::unique_ptr<optim::ModelEma> make_ema(optim::EmaSchedule schedule) const {
    return std::make_unique<optim::ModelEma>(live(), options_.ema_decay, options_.ema_tau,
                                             schedule);
  }

  const std::vector<optim::ParamGroup>& groups() const { return groups_; }

 private:
  void sync() const {
    if (device_.is_cuda()) torch::cuda::synchronize(device_.index() < 0 ? -1 : device_.index());
  }

  torch::nn::Module& model_;
  const OptimBenchOptions& options_;
  torch::Device device_;
  std::vector<at::Tensor> start_values_;
  std::vector<at::Tensor> grads_;
  std::vector<optim::ParamGroup> groups_;
};

// An arm: a label and a function that builds fresh state and times it.
struct ArmDef {
  std::string label;
  std::function<std::vector<double>(Harness&)> run;
};

// Runs `pairs` rounds of all arms (arms[0] is the baseline) and reduces each candidate against it.
Json compare(Harness& harness, const std::vector<ArmDef>& arms, const OptimBenchOptions& options,
             const std::string& what, const std::function<void(const std::string&)>& log) {
  std::vector<std::vector<ArmMeasurement>> measured(arms.size());
  std::vector<std::vector<std::vector<double>>> raw(arms.size());
  for (int p = 0; p < options.pairs; ++p) {
    for (size_t a = 0; a < arms.size(); ++a) {
      harness.reset();
      std::vector<double> times = arms[a].run(harness);
      ArmMeasurement m;
      m.value = median(times);
      measured[a].push_back(m);
      raw[a].push_back(std::move(times));
      if (log)
        log(fmt::format("{} round {}/{}: {} {:.3f} ms", what, p + 1, options.pairs, arms[a].label,
                        m.value));
    }
  }
  Json j;
  j["baseline"] = arms[0].label;
  Json arms_json;
  for (size_t a = 0; a < arms.size(); ++a) {
    std::vector<double> medians;
    for (const auto& m : measured[a]) medians.push_back(m.value);
    const Summary s = summarize(medians);
    Json arm;
    arm["median_ms"] = s.median;
    arm["min_ms"] = s.min;
    arm["max_ms"] = s.max;
    arm["arm_medians_ms"] = medians;
    arm["raw_ms"] = raw[a];
    arms_json[arms[a].label] = arm;
  }
  j["arms"] = arms_json;
  Json reductions;
  VerdictRule rule;
  rule.threshold = options.threshold;
  for (size_t a = 1; a < arms.size(); ++a) {
    const AbbaResult r = reduce_pairs(measured[0], measured[a], rule);
    Json red = summary_json(r.reduction_summary);
    red["values"] = r.reductions;
    red["speedup_median"] = r.baseline_summary.median / r.candidate_summary.median;
    red["verdict"] = verdict_name(r.verdict);
    reductions[arms[a].label] = red;
  }
  j["reduction_vs_baseline"] = reductions;
  return j;
}

}  // namespace

const std::vector<std::string>& optim_json_keys() {
  static const std::vector<std::string> keys = {"benchmark",  "device", "unit",         "settings",
                                                "parameters", "groups", "buckets",      "order",
                                                "optimizer",  "ema",    "step_plus_ema"};
  return keys;
}

Json run_optim_bench(torch::nn::Module& model, const OptimBenchOptions& options,
                     const std::function<void(const std::string&)>& log) {
  if (options.warmup < 0 || options.measure < 1 || options.pairs < 1) {
    throw std::invalid_argument("bench optim: need warmup >= 0, measure >= 1, pairs >= 1");
  }
  Harness harness(model, options);
  using optim::EmaSchedule;
  using optim::MuonSchedule;

  Json j;
  j["benchmark"] = "optim";
  j["device"] = torch::Device(options.device).str();
  j["unit"] = "ms";
  Json settings;
  settings["warmup_steps"] = options.warmup;
  settings["measure_steps"] = options.measure;
  settings["rounds"] = options.pairs;
  settings["seed"] = options.seed;
  settings["gradients"] = "fixed N(0, 0.01^2) per parameter, restored before every arm";
  settings["lr"] = options.lr;
  settings["momentum"] = options.momentum;
  settings["weight_decay"] = options.weight_decay;
  settings["head_prefix"] = options.head_prefix;
  settings["muon_gain"] = options.musgd.muon_gain;
  settings["sgd_gain"] = options.musgd.sgd_gain;
  settings["ns_steps"] = options.musgd.ns.steps;
  settings["ns_dtype"] = c10::toString(options.musgd.ns.dtype);
  settings["ns_coefficients"] = options.musgd.ns.coefficients;
  settings["pad_max_dim"] = options.musgd.pad_max_dim;
  settings["ema_decay"] = options.ema_decay;
  settings["ema_tau"] = options.ema_tau;
  settings["threshold"] = options.threshold;
  j["settings"] = settings;

  Json params;
  int64_t total = 0;
  int64_t tensors = 0;
  for (const auto& p : model.parameters()) {
    total += p.numel();
    ++tensors;
  }
  params["tensors"] = tensors;
  params["elements"] = total;
  params["ema_tensors"] = harness.live().size();
  j["parameters"] = params;
  Json groups = Json::array();
  for (const auto& g : harness.groups()) {
    Json gj;
    gj["name"] = g.name;
    gj["tensors"] = g.params.size();
    groups.push_back(gj);
  }
  j["groups"] = groups;

  // Bucket shapes of the fast schedules (one step each, outside any timing).
  Json buckets;
  for (auto s : {MuonSchedule::kBatched, MuonSchedule::kPadded}) {
    harness.reset();
    auto opt = harness.make_optimizer(s);
    opt->step();
    size_t padded = 0;
    size_t members = 0;
    for (const auto& b : opt->last_buckets()) {
      padded += b.padded ? 1 : 0;
      members += b.members;
    }
    Json bj;
    bj["ns_batches"] = opt->last_buckets().size();
    bj["padded_batches"] = padded;
    bj["batched_matrices"] = members;
    buckets[optim::muon_schedule_name(s)] = bj;
  }
  j["buckets"] = buckets;
  j["order"] = "each round runs every arm once in the listed order; arm value = median step time";

  auto optimizer_arm = [](MuonSchedule s) {
    return ArmDef{optim::muon_schedule_name(s), [s](Harness& h) {
                    auto opt = h.make_optimizer(s);
                    return h.time_steps([&] { opt->step(); });
                  }};
  };
  auto ema_arm = [](EmaSchedule s) {
    return ArmDef{optim::ema_schedule_name(s), [s](Harness& h) {
                    auto ema = h.make_ema(s);
                    const auto live = h.live();
                    return h.time_steps([&] { ema->update(live); });
                  }};
  };
  auto both_arm = [](MuonSchedule ms, EmaSchedule es) {
    return ArmDef{std::string(optim::muon_schedule_name(ms)) + "+" + optim::ema_schedule_name(es),
                  [ms, es](Harness& h) {
                    auto opt = h.make_optimizer(ms);
                    auto ema = h.make_ema(es);
                    const auto live = h.live();
                    return h.time_steps([&] {
                      opt->step();
                      ema->update(live);
                    });
                  }};
  };

  j["optimizer"] =
      compare(harness,
              {optimizer_arm(MuonSchedule::kScalar), optimizer_arm(MuonSchedule::kBatched),
               optimizer_arm(MuonSchedule::kPadded)},
              options, "optimizer", log);
  j["ema"] = compare(harness, {ema_arm(EmaSchedule::kScalar), ema_arm(EmaSchedule::kForeach)},
                     options, "ema", log);
  j["step_plus_ema"] = compare(harness,
                               {both_arm(MuonSchedule::kScalar, EmaSchedule::kScalar),
                                both_arm(MuonSchedule::kPadded, EmaSchedule::kForeach)},
                               options, "step+ema", log);
  return j;
}

}  // namespace trainer::bench
