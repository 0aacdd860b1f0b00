// See reference_architecture.h.
// Tested by tests/parity/test_reference_checkpoint_parity.cpp: reference_model_name and class names
//   of 13 reference checkpoints match the oracle's listing (needs the reference).
#include "model/reference_architecture.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "core/ascii_case.h"
#include "core/error.h"
#include "core/task.h"

namespace trainer::model {
namespace {

std::optional<core::Task> task_from_args(const ReferenceInfo& info) {
  return info.task.empty() ? std::nullopt : core::task_from_name(info.task);
}

}  // namespace

ModelName reference_model_name(const ReferenceInfo& info, const std::string& file) {
  const std::string stem =
      core::ascii_lowercase(std::filesystem::path(info.yaml_file).stem().string());
  ModelName name;
  std::string rest;
  if (stem.rfind("yolo26", 0) == 0) {
    name.family = ModelFamily::kYolo26;
    rest = stem.substr(6);
  } else if (stem.rfind("yolo11", 0) == 0) {
    name.family = ModelFamily::kYolo11;
    rest = stem.substr(6);
  } else {
    throw core::ConfigError(fmt::format(
        "{}: the reference built this model from '{}'; trainer builds the yolo26 and yolo11 "
        "families (n, s, m, l, x; detect, pose, segment, obb)",
        file, info.yaml_file.empty() ? std::string("an unnamed yaml") : info.yaml_file));
  }
  // "yolo26n-pose": the scale follows the family; "yolo26-pose" with `scale: n` in the yaml.
  std::string scale = info.scale;
  if (scale.empty() && !rest.empty() && rest[0] != '-') scale = rest.substr(0, 1);
  if (scale.size() != 1 || std::string("nsmlx").find(scale[0]) == std::string::npos) {
    throw core::ConfigError(
        fmt::format("{}: its yaml '{}' names no scale n, s, m, l or x", file, info.yaml_file));
  }
  name.scale = scale[0];
  if (const auto task = core::task_from_head_class(info.head_class)) {
    name.task = *task;
  } else if (const auto named = task_from_args(info); info.head_class.empty() && named) {
    name.task = *named;
  } else {
    std::vector<std::string> heads;
    for (const core::TaskRow& row : core::kTasks) heads.emplace_back(row.head_class);
    throw core::ConfigError(
        fmt::format("{}: its head is {}; trainer builds these heads: {}", file,
                    info.head_class.empty() ? std::string("missing") : info.head_class,
                    fmt::join(heads, ", ")));
  }
  return name;
}

std::vector<std::string> reference_class_names(const ReferenceInfo& info) {
  int64_t nc = info.nc.value_or(0);
  for (const auto& entry : info.names) nc = std::max(nc, entry.first + 1);
  if (nc <= 0 || nc > kMaxReferenceClasses) return {};
  std::vector<std::string> names(static_cast<size_t>(nc));
  for (int64_t i = 0; i < nc; ++i) names[static_cast<size_t>(i)] = std::to_string(i);
  for (const auto& [index, name] : info.names) {
    if (index >= 0) names[static_cast<size_t>(index)] = name;
  }
  return names;
}

}  // namespace trainer::model
