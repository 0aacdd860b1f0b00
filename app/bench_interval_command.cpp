// `trainer bench interval CONFIG [key=value ...]`: the complete training interval of the real loop
// (engine/interval.h), a separate synchronised breakdown run, peak memory and the run record as
// JSON on stdout (benchmark-method.md sections 1, 2 and 5); a summary on stderr.
#include <spdlog/spdlog.h>
#include <nlohmann/json.hpp>

#include <iostream>
#include <memory>
#include <sstream>

#include "app/bench_command.h"
#include "app/config_args.h"
#include "bench/interval_report.h"
#include "bench/peak_memory.h"
#include "bench/run_record.h"
#include "core/atomic_file.h"
#include "core/config_loader.h"
#include "core/config_writer.h"
#include "engine/device/device.h"
#include "engine/device/rank_setup.h"
#include "engine/interval.h"

namespace trainer::app {
namespace {

struct IntervalCli {
  std::vector<std::string> args;  // CONFIG (first item without '=') then key=value overrides
  engine::IntervalOptions options;
  bool no_breakdown = false;
  std::string json;
};

int run_bench_interval(const IntervalCli& opts) {
  const auto [file, overrides] = split_config_args(opts.args);
  const core::LoadedConfig loaded = core::load_config(file, overrides);
  // Under torchrun every rank measures its own intervals (with the gradient all-reduce in
  // backward); rank 0 reports.
  const engine::RankSetup joined = engine::join_ranks(loaded.config);
  const engine::Ranks& ranks = joined.ranks;
  core::TrainConfig config = loaded.config;
  config.run.device = ranks.device(loaded.config.run.device);
  // The same device the loop will use (the engine resolves the `device` key).
  const std::string device = engine::resolve_device(config.run.device).str();
  spdlog::info("bench interval: {} on {}, {} warm-up + {} measured intervals{}",
               file.empty() ? std::string("(defaults)") : file, device, opts.options.warmup,
               opts.options.measure, opts.no_breakdown ? "" : ", then a breakdown run");

  engine::IntervalOptions rank_options = opts.options;
  rank_options.ranks = ranks;
  engine::IntervalOptions timed_options = rank_options;
  timed_options.breakdown = false;
  bench::reset_peak_memory(device);
  const engine::IntervalResult timed = engine::measure_intervals(config, timed_options);
  const bench::PeakMemory peak = bench::read_peak_memory(device);

  bench::RunRecord record = bench::collect_run_record(device);
  record.config_yaml = core::config_to_yaml(config);
  record.counts = {{"warmup", opts.options.warmup},
                   {"measure", opts.options.measure},
                   {"world_size", ranks.world_size()}};
  if (ranks.main() && !opts.json.empty() && !opts.no_breakdown) {
    // The timed intervals are kept now, marked partial, in case the process is stopped during the
    // breakdown run (a time-boxed GPU session); the complete JSON replaces this file.
    bench::Json partial = bench::interval_json(timed, nullptr, timed_options, peak, record);
    partial["partial"] = "the breakdown run had not finished";
    core::write_file_atomically(opts.json, partial.dump(2) + "\n");
  }

  engine::IntervalResult breakdown;
  if (!opts.no_breakdown) {
    engine::IntervalOptions breakdown_options = rank_options;
    breakdown_options.breakdown = true;
    breakdown = engine::measure_intervals(config, breakdown_options);
  }

  if (!ranks.main()) return 0;
  const bench::Json j = bench::interval_json(timed, opts.no_breakdown ? nullptr : &breakdown,
                                             timed_options, peak, record);
  std::istringstream table(bench::interval_table(j));
  for (std::string line; std::getline(table, line);) spdlog::info("{}", line);
  const std::string text = j.dump(2) + "\n";
  std::cout << text;
  if (!opts.json.empty()) core::write_file_atomically(opts.json, text);
  return 0;
}

}  // namespace

Command register_bench_interval_command(CLI::App& bench, const GlobalOptions& /*global*/) {
  auto opts = std::make_shared<IntervalCli>();
  CLI::App* cmd = bench.add_subcommand(
      "interval", "complete training intervals of the real loop, with a stage breakdown (JSON)");
  cmd->add_option("args", opts->args, "CONFIG file, then key=value overrides");
  cmd->add_option("--warmup", opts->options.warmup, "discarded intervals")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  cmd->add_option("--measure", opts->options.measure, "measured intervals")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  cmd->add_flag("--no-breakdown", opts->no_breakdown, "skip the separate synchronised stage run");
  cmd->add_option("--json", opts->json, "also write the JSON to this file");
  return {cmd, [opts] { return run_bench_interval(*opts); }};
}

}  // namespace trainer::app
