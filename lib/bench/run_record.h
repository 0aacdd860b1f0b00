// The run record every benchmark result carries (benchmark-method.md section 5).
//
// Why: a number without its revision and config is not reported. The record says which code ran
// (revision and dirty flag at build time, and of the working tree now when `git` is available),
// with which config, on which LibTorch/CUDA/cuDNN/driver/GPU/CPU and thread counts, when, with
// which warm-up/measure counts and command line. LibTorch-free header.
#pragma once

#include <nlohmann/json_fwd.hpp>

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace trainer::bench {

using Json = nlohmann::ordered_json;

struct RunRecord {
  // Code.
  std::string trainer_version;
  std::string build_revision;  // at build time (core/build_info.h)
  bool build_dirty = false;
  std::string build_type;
  std::optional<std::string> worktree_revision;  // `git rev-parse` now, when git and a tree exist
  std::optional<bool> worktree_dirty;            // tracked files modified now
  // Software and hardware.
  std::string libtorch_version;
  bool cuda_compiled = false;
  bool cuda_available = false;
  std::string cuda_runtime_version;
  std::string cudnn_version;
  std::string driver_version;
  std::vector<std::string> gpu_names;
  std::string device;       // the device the benchmark ran on ("cpu", "cuda:0")
  std::string device_name;  // GPU name, or the CPU model for "cpu"
  std::string cpu_model;
  int hardware_threads = 0;
  int torch_threads = 0;
  int interop_threads = 0;
  // Numerics: what the run's settings left in LibTorch's global context when the record was taken
  // (`deterministic: true`, the default, means deterministic algorithms and, on CUDA, NaN-filled
  // `empty` tensors; fp32 precision `ieee` means no TF32), so a number says how it was computed.
  bool deterministic_algorithms = false;
  bool deterministic_warn_only = false;
  bool cudnn_deterministic = false;
  bool cudnn_benchmark = false;
  std::string cuda_matmul_fp32;  // "ieee", "tf32", ... (LibTorch's float32 precision names)
  std::string cuda_conv_fp32;
  // Run.
  std::string date_utc;  // ISO 8601, e.g. 2026-11-29T11:38:18Z
  std::string hostname;
  std::vector<std::string> command_line;
  std::string config_yaml;                // the full resolved config (empty when there is none)
  std::map<std::string, int64_t> counts;  // warmup, measure, pairs, ...
};

// Fills everything but config_yaml and counts from the build, the runtime and the system.
// `device` is a LibTorch device string.
RunRecord collect_run_record(const std::string& device);

// Revision and dirty flag of the git tree that holds `dir` (nullopt without git or a tree).
std::optional<std::string> git_revision_of(const std::string& dir);
std::optional<bool> git_dirty_of(const std::string& dir);

// Now as "YYYY-MM-DDTHH:MM:SSZ".
std::string utc_now_iso8601();

Json record_to_json(const RunRecord& record);

struct Summary;
// {median, min, max, count}: how every benchmark report writes a summary.
Json summary_json(const Summary& summary);

// The keys record_to_json() always writes; missing_fields(j, keys) lists those absent from `j`
// (the schema check used by tests and by the ABBA parent on each child's output).
const std::vector<std::string>& record_json_keys();
std::vector<std::string> missing_fields(const Json& object, const std::vector<std::string>& keys);

}  // namespace trainer::bench
