// See run_record.h.
#include "bench/run_record.h"

#include <ATen/Context.h>
#include <ATen/Parallel.h>
#include <c10/core/Device.h>
#include <unistd.h>
#include <nlohmann/json.hpp>

#include <array>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>

#include "bench/stats.h"
#include "core/build_info.h"
#include "core/runtime_info.h"

namespace trainer::bench {
namespace {

// stdout of `command` (stderr discarded) and whether it exited 0.
std::optional<std::string> shell_output(const std::string& command) {
  FILE* pipe = ::popen((command + " 2>/dev/null").c_str(), "r");
  if (pipe == nullptr) return std::nullopt;
  std::array<char, 4096> buffer{};
  std::string text;
  size_t n = 0;
  while ((n = std::fread(buffer.data(), 1, buffer.size(), pipe)) > 0) text.append(buffer.data(), n);
  if (::pclose(pipe) != 0) return std::nullopt;
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
  return text;
}

std::string shell_quote(const std::string& text) {
  std::string out = "'";
  for (char c : text) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::vector<std::string> read_command_line() {
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  std::vector<std::string> args;
  std::string arg;
  while (std::getline(in, arg, '\0')) args.push_back(arg);
  return args;
}

// The folder of the running executable: the build folder lives inside the source tree, so git
// finds the tree from there; elsewhere (an installed binary) git finds none and we record null.
std::string executable_dir() {
  std::error_code ec;
  const auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::string(".") : exe.parent_path().string();
}

}  // namespace

std::optional<std::string> git_revision_of(const std::string& dir) {
  return shell_output("git -C " + shell_quote(dir) + " rev-parse --short=12 HEAD");
}

std::optional<bool> git_dirty_of(const std::string& dir) {
  const auto status =
      shell_output("git -C " + shell_quote(dir) + " status --porcelain --untracked-files=no");
  if (!status) return std::nullopt;
  return !status->empty();
}

std::string utc_now_iso8601() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  std::array<char, 32> text{};
  std::strftime(text.data(), text.size(), "%Y-%m-%dT%H:%M:%SZ", &tm);
  return text.data();
}

RunRecord collect_run_record(const std::string& device) {
  RunRecord r;
  const core::BuildInfo& build = core::build_info();
  r.trainer_version = build.version;
  r.build_revision = build.git_revision;
  r.build_dirty = build.git_dirty;
  r.build_type = build.build_type;
  const std::string dir = executable_dir();
  r.worktree_revision = git_revision_of(dir);
  if (r.worktree_revision) r.worktree_dirty = git_dirty_of(dir);

  const core::RuntimeInfo info = core::query_runtime_info();
  r.libtorch_version = info.libtorch_version;
  r.cuda_compiled = info.cuda_compiled;
  r.cuda_available = info.cuda_available;
  r.cuda_runtime_version = info.cuda_runtime_version;
  r.cudnn_version = info.cudnn_version;
  r.driver_version = info.driver_version;
  r.gpu_names = info.gpu_names;
  r.cpu_model = info.cpu_model;
  r.hardware_threads = info.hardware_threads;
  r.torch_threads = info.torch_threads;
  r.interop_threads = at::get_num_interop_threads();
  at::Context& context = at::globalContext();
  r.deterministic_algorithms = context.deterministicAlgorithms();
  r.deterministic_warn_only = context.deterministicAlgorithmsWarnOnly();
  r.cudnn_deterministic = context.deterministicCuDNN();
  r.cudnn_benchmark = context.benchmarkCuDNN();
  r.cuda_matmul_fp32 =
      at::precision2str(context.float32Precision(at::Float32Backend::CUDA, at::Float32Op::MATMUL));
  r.cuda_conv_fp32 =
      at::precision2str(context.float32Precision(at::Float32Backend::CUDA, at::Float32Op::CONV));

  const c10::Device dev(device);
  r.device = dev.str();
  if (dev.is_cuda()) {
    const size_t index = dev.has_index() ? static_cast<size_t>(dev.index()) : 0;
    if (index < r.gpu_names.size()) r.device_name = r.gpu_names[index];
    if (!dev.has_index()) r.device = "cuda:0";
  } else {
    r.device_name = r.cpu_model;
  }
  r.date_utc = utc_now_iso8601();
  std::array<char, 256> host{};
  if (::gethostname(host.data(), host.size() - 1) == 0) r.hostname = host.data();
  r.command_line = read_command_line();
  return r;
}

Json summary_json(const Summary& s) {
  Json j;
  j["median"] = s.median;
  j["min"] = s.min;
  j["max"] = s.max;
  j["count"] = s.count;
  return j;
}

Json record_to_json(const RunRecord& r) {
  Json j;
  j["trainer_version"] = r.trainer_version;
  j["git_revision"] = r.build_revision;
  j["git_dirty"] = r.build_dirty;
  j["build_type"] = r.build_type;
  j["worktree_revision"] = r.worktree_revision ? Json(*r.worktree_revision) : Json(nullptr);
  j["worktree_dirty"] = r.worktree_dirty ? Json(*r.worktree_dirty) : Json(nullptr);
  j["libtorch_version"] = r.libtorch_version;
  j["cuda_compiled"] = r.cuda_compiled;
  j["cuda_available"] = r.cuda_available;
  j["cuda_runtime_version"] = r.cuda_runtime_version;
  j["cudnn_version"] = r.cudnn_version;
  j["driver_version"] = r.driver_version;
  j["gpu_names"] = r.gpu_names;
  j["device"] = r.device;
  j["device_name"] = r.device_name;
  j["cpu_model"] = r.cpu_model;
  j["hardware_threads"] = r.hardware_threads;
  j["torch_threads"] = r.torch_threads;
  j["interop_threads"] = r.interop_threads;
  j["numerics"] = {{"deterministic_algorithms", r.deterministic_algorithms},
                   {"deterministic_warn_only", r.deterministic_warn_only},
                   {"cudnn_deterministic", r.cudnn_deterministic},
                   {"cudnn_benchmark", r.cudnn_benchmark},
                   {"cuda_matmul_fp32", r.cuda_matmul_fp32},
                   {"cuda_conv_fp32", r.cuda_conv_fp32}};
  j["date_utc"] = r.date_utc;
  j["hostname"] = r.hostname;
  j["command_line"] = r.command_line;
  j["config_yaml"] = r.config_yaml;
  j["counts"] = Json::object();
  for (const auto& [key, value] : r.counts) j["counts"][key] = value;
  return j;
}

const std::vector<std::string>& record_json_keys() {
  static const std::vector<std::string> keys = {"trainer_version",
                                                "git_revision",
                                                "git_dirty",
                                                "build_type",
                                                "worktree_revision",
                                                "worktree_dirty",
                                                "libtorch_version",
                                                "cuda_compiled",
                                                "cuda_available",
                                                "cuda_runtime_version",
                                                "cudnn_version",
                                                "driver_version",
                                                "gpu_names",
                                                "device",
                                                "device_name",
                                                "cpu_model",
                                                "hardware_threads",
                                                "torch_threads",
                                                "interop_threads",
                                                "numerics",
                                                "date_utc",
                                                "hostname",
                                                "command_line",
                                                "config_yaml",
                                                "counts"};
  return keys;
}

std::vector<std::string> missing_fields(const Json& object, const std::vector<std::string>& keys) {
  std::vector<std::string> missing;
  for (const auto& key : keys) {
    if (!object.is_object() || !object.contains(key)) missing.push_back(key);
  }
  return missing;
}

}  // namespace trainer::bench
