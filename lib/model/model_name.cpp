#include "model/model_name.h"

#include <algorithm>
#include <stdexcept>

#include "core/ascii_case.h"
#include "core/error.h"
#include "core/task.h"

namespace trainer::model {
namespace {

constexpr const char kScales[] = "nsmlx";

}  // namespace

std::string ModelName::display() const {
  const std::string suffix = core::task_row(task).model_suffix;
  switch (family) {
    case ModelFamily::kYolo26:
      return std::string("yolo26") + scale + suffix;
    case ModelFamily::kYolo11:
      return std::string("yolo11") + scale + suffix;
    case ModelFamily::kCustomYaml:
      return yaml_file.string();
  }
  return "?";
}

void require_builtin_model(const ModelName& name) {
  if (name.family != ModelFamily::kCustomYaml) return;
  throw core::ConfigError("model yaml files are not supported yet (" + name.display() +
                          "); use a built-in name such as yolo26n, yolo11s-pose or yolo26n-seg");
}

std::vector<std::string> builtin_model_names() {
  std::vector<std::string> names;
  for (const char* family : {"yolo26", "yolo11"}) {
    for (const char* s = kScales; *s; ++s) names.push_back(std::string(family) + *s);
  }
  return names;
}

ModelName parse_model_name(const std::string& text) {
  // yolo26n-pose, yolo11s-obb, yolo26m-seg: the detection name plus a task head.
  if (const auto task = core::task_from_model_name(text)) {
    const std::string stem = std::filesystem::path(text).stem().string();
    const auto dash = stem.rfind('-');
    if (dash == std::string::npos) {
      throw core::ConfigError("unknown model '" + text + "'; " + core::task_name(*task) +
                              " models are named like yolo26n" +
                              std::string(core::task_row(*task).model_suffix));
    }
    const std::string suffix = std::string(core::task_row(*task).model_suffix);
    if (core::ascii_lowercase(stem.substr(dash)) != suffix) {
      throw core::ConfigError("unknown model '" + text + "'; " + core::task_name(*task) +
                              " models are named like yolo26n" + suffix);
    }
    ModelName name = parse_model_name(stem.substr(0, dash));
    if (name.family == ModelFamily::kCustomYaml) {
      throw core::ConfigError("model '" + text + "': " + core::task_name(*task) +
                              " models are built-in names only");
    }
    name.task = *task;
    return name;
  }
  const std::filesystem::path path(text);
  const auto ext = path.extension().string();
  const auto names = builtin_model_names();
  const bool builtin_stem =
      std::find(names.begin(), names.end(), path.stem().string()) != names.end();
  // The reference spells built-ins as yaml names (`model: yolo26n.yaml` in args.yaml).
  if ((ext == ".yaml" || ext == ".yml") && builtin_stem && !std::filesystem::exists(path)) {
    return parse_model_name(path.stem().string());
  }
  if (ext == ".yaml" || ext == ".yml") {
    if (!std::filesystem::is_regular_file(text)) {
      throw core::ConfigError("model yaml not found: " + text);
    }
    return ModelName{ModelFamily::kCustomYaml, 'n', text, core::Task::kDetect, {}};
  }
  const std::string lower = core::ascii_lowercase(text);
  // "t" (tiny: width 0.0625, depth 0.33) is our addition for tests and the CPU demo.
  const bool tiny = lower == "yolo26t" || lower == "yolo11t";
  if (!tiny && std::find(names.begin(), names.end(), lower) == names.end()) {
    std::string list;
    for (const auto& n : names) list += (list.empty() ? "" : ", ") + n;
    throw core::ConfigError("unknown model '" + text + "'; valid names: " + list +
                            ", yolo26t/yolo11t (tiny test models), or a model .yaml path");
  }
  ModelName name;
  name.family = lower.rfind("yolo26", 0) == 0 ? ModelFamily::kYolo26 : ModelFamily::kYolo11;
  name.scale = lower.back();
  return name;
}

}  // namespace trainer::model
