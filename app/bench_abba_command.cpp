// `trainer bench abba` (interval arms) and `trainer bench fit` (complete short fits): baseline and
// candidate arms in fresh processes, alternating A B A B after discarded warm-up arms, reduced to
// paired reductions, medians, range, peak memory and a verdict (lib/bench/abba.h). JSON on stdout
// and a table on stderr (`--table`: the table on stdout, the JSON only with --json).
#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <iostream>
#include <memory>
#include <random>

#include "app/bench_command.h"
#include "bench/abba.h"
#include "bench/child_process.h"
#include "bench/process_arms.h"
#include "bench/run_record.h"
#include "core/atomic_file.h"
#include "core/config_loader.h"
#include "core/config_writer.h"

namespace trainer::app {
namespace {

enum class ArmKind { kInterval, kFit };

struct AbbaCli {
  std::vector<std::string> args;  // CONFIG then key=value overrides for both arms
  std::vector<std::string> baseline, candidate;
  bench::AbbaOptions abba;
  int warmup = 15;
  int measure = 44;
  bool breakdown = false;
  std::string project;  // fit only
  std::string json;
  bool table = false;
};

std::string join(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& s : items) out += (out.empty() ? "" : " ") + s;
  return out;
}

// Loads both arms' configs in the parent, so a bad key fails before any arm runs.
std::string resolved_yaml(const std::string& file, const std::vector<std::string>& common,
                          const std::vector<std::string>& own) {
  std::vector<std::string> overrides = common;
  overrides.insert(overrides.end(), own.begin(), own.end());
  return core::config_to_yaml(core::load_config(file, overrides).config);
}

std::filesystem::path fresh_temp_project() {
  std::random_device rd;
  for (int attempt = 0; attempt < 100; ++attempt) {
    auto dir = std::filesystem::temp_directory_path() / fmt::format("trainer-bench-fit-{}", rd());
    if (std::filesystem::create_directory(dir)) return dir;
  }
  throw std::runtime_error("cannot create a temporary folder for the fit runs");
}

int run_abba_command(const AbbaCli& opts, ArmKind kind, const GlobalOptions& global) {
  if (opts.baseline.empty() && opts.candidate.empty()) {
    throw core::ConfigError("bench: give --baseline and/or --candidate key=value overrides");
  }
  bench::ProcessArms arms;
  arms.executable = bench::self_executable();
  if (!global.verbose) arms.global_flags = {"-q"};
  for (const auto& a : opts.args) {
    if (arms.config.empty() && arms.common.empty() && a.find('=') == std::string::npos) {
      arms.config = a;
    } else {
      arms.common.push_back(a);
    }
  }
  arms.config = arms.config.empty() ? "" : std::filesystem::absolute(arms.config).string();
  arms.baseline = opts.baseline;
  arms.candidate = opts.candidate;
  const std::string baseline_yaml = resolved_yaml(arms.config, arms.common, arms.baseline);
  const std::string candidate_yaml = resolved_yaml(arms.config, arms.common, arms.candidate);
  if (baseline_yaml == candidate_yaml) {
    spdlog::warn("baseline and candidate resolve to the same config");
  }

  bench::ArmRunner runner;
  std::filesystem::path project;
  bool remove_project = false;
  std::string unit;
  std::string metric;
  bench::Json example;
  if (kind == ArmKind::kInterval) {
    runner = bench::interval_arm_runner(arms, opts.warmup, opts.measure, opts.breakdown);
    unit = "ms";
    metric = "complete-interval median of each arm (trainer bench interval, fresh process)";
    example = bench::describe_command(bench::interval_arm_command(
        arms, bench::Arm::kBaseline, opts.warmup, opts.measure, opts.breakdown));
  } else {
    remove_project = opts.project.empty();
    project = remove_project ? fresh_temp_project() : std::filesystem::absolute(opts.project);
    runner = bench::fit_arm_runner(arms, project.string());
    unit = "s";
    metric = "wall time of a complete trainer fit, from process start to exit";
    example = bench::describe_command(
        bench::fit_arm_command(arms, bench::Arm::kBaseline, project.string(), "a0"));
  }
  spdlog::info("bench {}: A = {} | B = {}; {} warm-up arm(s), {} pairs",
               kind == ArmKind::kInterval ? "abba" : "fit", join(arms.baseline),
               join(arms.candidate), opts.abba.warmup_arms, opts.abba.pairs);
  // Each finished arm is kept in the --json file at once, marked partial, so a run stopped
  // midway (a time-boxed GPU session) still returns what it measured; the complete JSON replaces
  // it.
  bench::Json partial;
  partial["benchmark"] = kind == ArmKind::kInterval ? "abba" : "fit";
  partial["partial"] = "the ABBA had not finished; arms measured so far";
  partial["unit"] = unit;
  partial["baseline_overrides"] = arms.baseline;
  partial["candidate_overrides"] = arms.candidate;
  partial["arms"] = bench::Json::array();
  const bench::AbbaResult result = bench::run_abba(
      runner, opts.abba,
      [&](bench::Arm arm, int index, bool warmup, const bench::ArmMeasurement& m) {
        spdlog::info("{}{}{}: {:.3f} {}", warmup ? "warm-up " : "",
                     arm == bench::Arm::kBaseline ? "A" : "B", index, m.value, unit);
        if (opts.json.empty()) return;
        partial["arms"].push_back({{"arm", arm == bench::Arm::kBaseline ? "A" : "B"},
                                   {"index", index},
                                   {"warmup", warmup},
                                   {"value", m.value}});
        core::write_file_atomically(opts.json, partial.dump(2) + "\n");
      });
  if (remove_project) {
    std::error_code ec;
    std::filesystem::remove_all(project, ec);
  }

  bench::Json j;
  j["benchmark"] = kind == ArmKind::kInterval ? "abba" : "fit";
  j["metric"] = metric;
  j["config"] = arms.config;
  j["common_overrides"] = arms.common;
  j["baseline_overrides"] = arms.baseline;
  j["candidate_overrides"] = arms.candidate;
  j["arm_command"] = example;
  if (kind == ArmKind::kInterval) {
    j["warmup"] = opts.warmup;
    j["measure"] = opts.measure;
  } else {
    j["project"] = remove_project ? bench::Json(nullptr) : bench::Json(project.string());
  }
  const bench::Json claim = bench::abba_json(result, opts.abba, unit);
  for (const auto& [key, value] : claim.items()) j[key] = value;
  j["baseline_config_yaml"] = baseline_yaml;
  j["candidate_config_yaml"] = candidate_yaml;
  bench::RunRecord record = bench::collect_run_record("cpu");
  record.device = "(per arm; see each arm's record)";
  record.device_name.clear();
  record.config_yaml = baseline_yaml;
  record.counts = {{"pairs", opts.abba.pairs}, {"warmup_arms", opts.abba.warmup_arms}};
  if (kind == ArmKind::kInterval) {
    record.counts["warmup"] = opts.warmup;
    record.counts["measure"] = opts.measure;
  }
  j["record"] = bench::record_to_json(record);

  const std::string table =
      bench::abba_table(result, opts.abba, unit, join(arms.baseline), join(arms.candidate));
  const std::string text = j.dump(2) + "\n";
  if (opts.table) {
    std::cout << table;
  } else {
    std::cerr << table;
    std::cout << text;
  }
  if (!opts.json.empty()) core::write_file_atomically(opts.json, text);
  return 0;
}

CLI::App* add_abba_options(CLI::App* cmd, AbbaCli& opts) {
  cmd->add_option("args", opts.args, "CONFIG file, then key=value overrides for both arms");
  cmd->add_option("--baseline", opts.baseline, "key=value overrides of arm A")->expected(1, -1);
  cmd->add_option("--candidate", opts.candidate, "key=value overrides of arm B")->expected(1, -1);
  cmd->add_option("--pairs", opts.abba.pairs, "A B pairs")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  cmd->add_option("--threshold", opts.abba.rule.threshold,
                  "adopt when the median paired reduction reaches this and the range is > 0")
      ->capture_default_str();
  cmd->add_option("--json", opts.json, "also write the JSON to this file");
  cmd->add_flag("--table", opts.table, "print the table on stdout (the JSON only with --json)");
  return cmd;
}

}  // namespace

Command register_bench_abba_command(CLI::App& bench, const GlobalOptions& global) {
  auto opts = std::make_shared<AbbaCli>();
  CLI::App* cmd = add_abba_options(
      bench.add_subcommand("abba", "ABBA pairs of `bench interval` arms in fresh processes (JSON)"),
      *opts);
  cmd->add_option("--warmup-arms", opts->abba.warmup_arms, "discarded arms before the pairs")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  cmd->add_option("--warmup", opts->warmup, "discarded intervals per arm")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  cmd->add_option("--measure", opts->measure, "measured intervals per arm")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  cmd->add_flag("--breakdown", opts->breakdown, "also run each arm's stage breakdown");
  return {cmd, [opts, &global] { return run_abba_command(*opts, ArmKind::kInterval, global); }};
}

Command register_bench_fit_command(CLI::App& bench, const GlobalOptions& global) {
  auto opts = std::make_shared<AbbaCli>();
  opts->abba.warmup_arms = 2;  // the seeds' protocol: 2 discarded warm-up fits
  CLI::App* cmd = add_abba_options(
      bench.add_subcommand("fit", "ABBA pairs of complete `trainer fit` runs timed start to exit"),
      *opts);
  cmd->add_option("--warmup-arms", opts->abba.warmup_arms, "discarded fits before the pairs")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  cmd->add_option("--project", opts->project,
                  "keep the runs here (default: a temporary folder, removed afterwards)");
  return {cmd, [opts, &global] { return run_abba_command(*opts, ArmKind::kFit, global); }};
}

}  // namespace trainer::app
