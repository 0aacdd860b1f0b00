// `trainer bench optim`: times one MuSGD step and one EMA update on a real model's parameter set
// for each schedule (lib/bench/optim_bench.h); JSON on stdout, a short summary on stderr.
#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <nlohmann/json.hpp>

#include <iostream>
#include <memory>

#include "app/bench_command.h"
#include "bench/device.h"
#include "bench/optim_bench.h"
#include "bench/peak_memory.h"
#include "bench/run_record.h"
#include "core/atomic_file.h"
#include "model/model_name.h"
#include "model/yolo_model.h"

namespace trainer::app {
namespace {

struct OptimBenchCli {
  std::string model = "yolo26n";
  bool tiny = false;
  std::string device = "cpu";
  std::string json;
  bench::OptimBenchOptions bench;
};

void log_summary(const bench::Json& j) {
  for (const char* part : {"optimizer", "ema", "step_plus_ema"}) {
    const auto& c = j[part];
    std::string line = fmt::format("{}:", part);
    for (const auto& [label, arm] : c["arms"].items()) {
      line += fmt::format(" {} {:.3f} ms", label, arm["median_ms"].get<double>());
    }
    for (const auto& [label, red] : c["reduction_vs_baseline"].items()) {
      line += fmt::format("; {} vs {}: {:.1f}% ({:.1f}..{:.1f}%, x{:.2f})", label,
                          c["baseline"].get<std::string>(), 100 * red["median"].get<double>(),
                          100 * red["min"].get<double>(), 100 * red["max"].get<double>(),
                          red["speedup_median"].get<double>());
    }
    spdlog::info("{}", line);
  }
}

int run_bench_optim(OptimBenchCli opts) {
  opts.bench.device = bench::resolve_device(opts.device);
  const model::ModelName name = model::parse_model_name(opts.model);
  model::YoloModel net =
      opts.tiny ? model::build_tiny_yolo_model(name.family, 80) : model::build_yolo_model(name, 80);
  opts.bench.head_prefix = fmt::format("model.{}.", net->layer_modules().size() - 1);
  const std::string label = opts.tiny ? name.display() + " (tiny test width)" : name.display();
  spdlog::info("bench optim: {} on {}, {} warm-up + {} measured steps per arm, {} rounds", label,
               opts.bench.device, opts.bench.warmup, opts.bench.measure, opts.bench.pairs);

  bench::reset_peak_memory(opts.bench.device);
  bench::Json j = bench::run_optim_bench(
      *net, opts.bench, [](const std::string& line) { spdlog::debug("{}", line); });
  const bench::PeakMemory peak = bench::read_peak_memory(opts.bench.device);

  bench::Json result;
  result["benchmark"] = j["benchmark"];
  result["model"] = label;
  for (const auto& [key, value] : j.items()) {
    if (key != "benchmark") result[key] = value;
  }
  result["peak_memory"] = {{"kind", peak.kind},
                           {"device", peak.device},
                           {"bytes", peak.bytes},
                           {"mib", bench::to_mib(peak.bytes)},
                           {"since_reset", peak.since_reset}};
  bench::RunRecord record = bench::collect_run_record(opts.bench.device);
  record.counts = {{"warmup_steps", opts.bench.warmup},
                   {"measure_steps", opts.bench.measure},
                   {"rounds", opts.bench.pairs}};
  result["record"] = bench::record_to_json(record);
  log_summary(result);
  const std::string text = result.dump(2) + "\n";
  std::cout << text;
  if (!opts.json.empty()) core::write_file_atomically(opts.json, text);
  return 0;
}

}  // namespace

Command register_bench_optim_command(CLI::App& bench, const GlobalOptions& /*global*/) {
  auto opts = std::make_shared<OptimBenchCli>();
  CLI::App* cmd = bench.add_subcommand(
      "optim", "time one MuSGD step + EMA update per schedule on a model's parameters (JSON)");
  cmd->add_option("--model", opts->model, "built-in model name")->capture_default_str();
  cmd->add_flag("--tiny", opts->tiny, "the model's tiny test width (fast; for tests)");
  cmd->add_option("--device", opts->device, "cpu, 0, cuda:N")->capture_default_str();
  cmd->add_option("--warmup", opts->bench.warmup, "discarded steps per arm")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  cmd->add_option("--measure", opts->bench.measure, "measured steps per arm")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  cmd->add_option("--pairs", opts->bench.pairs, "rounds of alternating arms")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  cmd->add_option("--seed", opts->bench.seed, "seed of the fixed gradients")->capture_default_str();
  cmd->add_option("--threshold", opts->bench.threshold, "verdict threshold (fraction)")
      ->capture_default_str();
  cmd->add_option("--json", opts->json, "also write the JSON to this file");
  return {cmd, [opts] { return run_bench_optim(*opts); }};
}

}  // namespace trainer::app
