// See model_source.h.
#include "engine/checkpoint/model_source.h"

#include <fmt/format.h>

#include <utility>

#include "core/error.h"
#include "core/task.h"

namespace trainer::engine {
namespace {

namespace fs = std::filesystem;

// The architecture of `model:` a weights file (`read`), or the way out when it records none.
model::ModelName architecture_of_model(const WeightsSource& read) {
  if (read.architecture) return *read.architecture;
  const fs::path args = fs::absolute(read.path).parent_path().parent_path() / "args.yaml";
  throw core::ConfigError(fmt::format(
      "model: {}: a {} file holds weights only and {} records its architecture; name the "
      "architecture and transfer the weights instead: model=yolo26n pretrained={}",
      read.path.string(), read.path.extension().string(),
      read.kind == WeightsKind::kCheckpoint ? "no run config in it" : "no " + args.string(),
      read.path.string()));
}

ModelSource source_of(const core::TrainConfig& config, bool read_transferred) {
  ModelSource source;
  const std::string& model = config.model.model;
  const std::string& pretrained = config.model.pretrained;
  const bool transfers = read_transferred && config.run.resume.empty();
  if (is_weights_file(model)) {
    WeightsSource read = read_weights_source(model);
    source.name = architecture_of_model(read);
    source.architecture = model;
    if (pretrained == "true") {
      source.weights = model;
      if (transfers) source.pretrained = std::move(read);  // its tensors, from the same read
    }
  } else {
    source.name = model::parse_model_name(model);
  }
  if (pretrained != "true" && pretrained != "false") {
    source.weights = pretrained;
    if (transfers) source.pretrained = read_weights_source(pretrained);
  }
  // The run's own widths (a weights file's run was for its classes; fine-tuning rebuilds them).
  source.name.cls_width = model::parse_class_widths(config.model.cls_width);
  return source;
}

}  // namespace

ModelSource resolve_model_source(const core::TrainConfig& config) {
  return source_of(config, /*read_transferred=*/false);
}

ModelSource read_model_source(const core::TrainConfig& config) {
  return source_of(config, /*read_transferred=*/true);
}

core::Task resolved_task(const core::TrainConfig& config, const ModelSource& source) {
  if (!config.run.task && is_weights_file(config.model.model)) return source.name.task;
  return core::resolve_task(config.run.task, config.model.model);
}

}  // namespace trainer::engine
