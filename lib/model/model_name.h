// Which model a config asks for: a built-in family and scale (yolo26n, yolo11s, ...) or a yaml.
//
// Why: the name is checked when the config loads, long before the model is built, so a typo fails
// in a second with the list of valid names instead of after the dataset cache.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "core/task.h"
#include "model/class_widths.h"

namespace trainer::model {

enum class ModelFamily { kYolo26, kYolo11, kCustomYaml };

struct ModelName {
  ModelFamily family = ModelFamily::kYolo26;
  char scale = 'n';                       // n, s, m, l, x (built-in families)
  std::filesystem::path yaml_file;        // kCustomYaml
  core::Task task = core::Task::kDetect;  // the head: "-pose" names build a pose model
  ClassWidths cls_width;                  // the class branches' hidden widths (config cls_width)

  std::string display() const;  // "yolo26n", "yolo26n-pose" or the yaml path
};

// Parses `text` (case-insensitive built-in name, optionally with the "-pose" suffix, or an
// existing .yaml/.yml path). Throws
// core::ConfigError listing the valid names, or naming a missing yaml.
ModelName parse_model_name(const std::string& text);

// Throws core::ConfigError naming the file when `name` is a model yaml (kCustomYaml): building
// one is not supported yet (issue 57). The one place that says so: fit checks it before its run
// folder exists, and build_yolo_model for every other way in.
void require_builtin_model(const ModelName& name);

// All built-in names, yolo26n..x then yolo11n..x.
std::vector<std::string> builtin_model_names();

}  // namespace trainer::model
