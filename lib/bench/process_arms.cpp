// See process_arms.h.
#include "bench/process_arms.h"

#include <nlohmann/json.hpp>

#include <stdexcept>

#include "bench/child_process.h"
#include "bench/interval_report.h"

namespace trainer::bench {
namespace {

std::vector<std::string> prefix(const ProcessArms& arms, const std::string& subcommand) {
  std::vector<std::string> argv{arms.executable.empty() ? self_executable() : arms.executable};
  argv.insert(argv.end(), arms.global_flags.begin(), arms.global_flags.end());
  if (subcommand == "interval") {
    argv.insert(argv.end(), {"bench", "interval"});
  } else {
    argv.push_back(subcommand);
  }
  if (!arms.config.empty()) argv.push_back(arms.config);
  return argv;
}

void add_overrides(std::vector<std::string>& argv, const ProcessArms& arms, Arm arm) {
  argv.insert(argv.end(), arms.common.begin(), arms.common.end());
  const auto& own = arm == Arm::kBaseline ? arms.baseline : arms.candidate;
  argv.insert(argv.end(), own.begin(), own.end());
}

const char* arm_letter(Arm arm) {
  return arm == Arm::kBaseline ? "a" : "b";
}

std::string failure(const std::vector<std::string>& argv, const ChildResult& r) {
  return "benchmark arm failed (" +
         (r.signal ? "signal " + std::to_string(r.signal)
                   : "exit status " + std::to_string(r.exit_status)) +
         "): " + describe_command(argv);
}

}  // namespace

std::vector<std::string> interval_arm_command(const ProcessArms& arms, Arm arm, int warmup,
                                              int measure, bool breakdown) {
  auto argv = prefix(arms, "interval");
  add_overrides(argv, arms, arm);
  argv.insert(argv.end(),
              {"--warmup", std::to_string(warmup), "--measure", std::to_string(measure)});
  if (!breakdown) argv.push_back("--no-breakdown");
  return argv;
}

std::vector<std::string> fit_arm_command(const ProcessArms& arms, Arm arm,
                                         const std::string& project, const std::string& name) {
  auto argv = prefix(arms, "fit");
  add_overrides(argv, arms, arm);
  argv.insert(argv.end(), {"project=" + project, "name=" + name, "exist_ok=true"});
  return argv;
}

ArmRunner interval_arm_runner(const ProcessArms& arms, int warmup, int measure, bool breakdown) {
  return [arms, warmup, measure, breakdown](Arm arm, int /*index*/, bool /*warmup_arm*/) {
    const auto argv = interval_arm_command(arms, arm, warmup, measure, breakdown);
    const ChildResult r = run_child(argv);
    if (r.exit_status != 0) throw std::runtime_error(failure(argv, r));
    Json j;
    try {
      j = Json::parse(r.stdout_text);
    } catch (const nlohmann::json::exception& e) {
      throw std::runtime_error("benchmark arm printed no JSON (" + std::string(e.what()) +
                               "): " + describe_command(argv));
    }
    check_interval_json(j);
    ArmMeasurement m;
    m.value = j["interval_ms"]["median"].get<double>();
    m.peak_bytes = j["peak_memory"]["bytes"].get<int64_t>();
    m.peak_kind = j["peak_memory"]["kind"].get<std::string>();
    j["arm_command"] = describe_command(argv);
    j["arm_wall_s"] = r.wall_seconds;
    m.detail = std::move(j);
    return m;
  };
}

ArmRunner fit_arm_runner(const ProcessArms& arms, const std::string& project) {
  return [arms, project](Arm arm, int index, bool warmup_arm) {
    const std::string name =
        std::string(warmup_arm ? "warmup_" : "") + arm_letter(arm) + std::to_string(index);
    const auto argv = fit_arm_command(arms, arm, project, name);
    const ChildResult r = run_child(argv);
    if (r.exit_status != 0) throw std::runtime_error(failure(argv, r));
    ArmMeasurement m;
    m.value = r.wall_seconds;
    m.peak_bytes = r.max_rss_bytes;
    m.peak_kind = "child_max_rss";
    m.detail = {{"command", describe_command(argv)},
                {"wall_s", r.wall_seconds},
                {"exit_status", r.exit_status},
                {"max_rss_bytes", r.max_rss_bytes},
                {"run_name", name}};
    return m;
  };
}

}  // namespace trainer::bench
