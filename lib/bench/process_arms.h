// ABBA arms as fresh `trainer` processes: `trainer bench interval` arms and complete `trainer fit`
// arms (benchmark-method.md sections 3 and 4).
//
// Why: each arm must start cold in its own process; the parent only builds the command lines,
// times the child from start to exit, and reads back what the child reports. The executable is
// configurable so tests can stand in a script for `trainer`.
#pragma once

#include <string>
#include <vector>

#include "bench/abba.h"

namespace trainer::bench {

struct ProcessArms {
  std::string executable;                 // the trainer binary (self_executable() by default)
  std::vector<std::string> global_flags;  // before the subcommand, e.g. {"-q"}
  std::string config;                     // CONFIG file (may be empty: defaults)
  std::vector<std::string> common;        // key=value for both arms
  std::vector<std::string> baseline;      // key=value for A only
  std::vector<std::string> candidate;     // key=value for B only
};

// <exe> <flags> bench interval CONFIG common... arm... --warmup W --measure M [--no-breakdown]
std::vector<std::string> interval_arm_command(const ProcessArms& arms, Arm arm, int warmup,
                                              int measure, bool breakdown);

// <exe> <flags> fit CONFIG common... arm... project=PROJECT name=NAME exist_ok=true
std::vector<std::string> fit_arm_command(const ProcessArms& arms, Arm arm,
                                         const std::string& project, const std::string& name);

// Runs interval arms: value = the child's interval median (ms), peak = its peak_memory, detail =
// its whole JSON. Throws std::runtime_error when a child fails or prints no interval result.
ArmRunner interval_arm_runner(const ProcessArms& arms, int warmup, int measure, bool breakdown);

// Runs complete fits: value = wall seconds from process start to exit, peak = the child's max RSS
// (kind "child_max_rss"), detail = {command, wall_s, exit_status, max_rss_bytes, run_name}. Runs
// are named "warmup_a0", "a0", "b0", ... under `project`. Throws when a fit exits non-zero.
ArmRunner fit_arm_runner(const ProcessArms& arms, const std::string& project);

}  // namespace trainer::bench
