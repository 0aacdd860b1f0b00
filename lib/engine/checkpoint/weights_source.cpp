// See weights_source.h.
#include "engine/checkpoint/weights_source.h"

#include <fmt/format.h>

#include <fstream>
#include <sstream>
#include <utility>

#include "core/config_loader.h"
#include "core/error.h"
#include "core/file_checks.h"
#include "engine/checkpoint/checkpoint.h"
#include "engine/run_dataset_spec.h"
#include "model/fine_tune_transfer.h"
#include "model/reference_architecture.h"

namespace trainer::engine {
namespace {

namespace fs = std::filesystem;

constexpr int kMaxFineTuneDepth = 8;

std::string read_text(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

fs::path run_args_of(const fs::path& weights) {
  return fs::absolute(weights).parent_path().parent_path() / "args.yaml";
}

// The config RUN/args.yaml records for RUN/weights/X.pt; nullopt when there is none.
std::optional<core::TrainConfig> recorded_run_config(const fs::path& weights) {
  const fs::path args = run_args_of(weights);
  if (!fs::is_regular_file(args)) return std::nullopt;
  return core::load_config_text(read_text(args), args.string(), args.parent_path()).config;
}

core::TrainConfig checkpoint_config(const Checkpoint& ckpt, const fs::path& path) {
  return core::load_config_text(ckpt.config_yaml, path.string(), path.parent_path()).config;
}

std::optional<model::ModelName> architecture_in(const core::TrainConfig& config,
                                                const fs::path& from, int depth);

// The architecture of a weights file a run started from (`model:` of a fine-tuned run), which is
// read for its record only.
std::optional<model::ModelName> architecture_of_file(const fs::path& path, int depth) {
  if (depth > kMaxFineTuneDepth) {
    throw core::ConfigError("model: " + path.string() + ": weights files form a loop");
  }
  core::require_file(path, "weights file",
                     " (the weights the run started from, which name its architecture)");
  if (path.extension() == ".ckpt") {
    return architecture_in(checkpoint_config(load_checkpoint(path), path), path, depth + 1);
  }
  if (const auto reference = model::reference_info_of(path)) {
    return model::reference_model_name(*reference, path.string());
  }
  const auto recorded = recorded_run_config(path);
  if (!recorded) return std::nullopt;
  return architecture_in(*recorded, path, depth + 1);
}

// The architecture a run's config trained: its `model:` name with the task it recorded (`model:
// yolo26n` with `task: segment` trained the segment head), or that of the weights file it started
// from.
std::optional<model::ModelName> architecture_in(const core::TrainConfig& config,
                                                const fs::path& from, int depth) {
  std::optional<model::ModelName> name;
  if (!config.model.architecture.empty()) {  // recorded by the run: the file is not needed
    name = model::parse_model_name(config.model.architecture);
  } else if (is_weights_file(config.model.model)) {
    name = architecture_of_file(config.model.model, depth);
    if (!name) {
      throw core::ConfigError(
          fmt::format("{}: its run started from {}, which records no architecture", from.string(),
                      config.model.model));
    }
  } else {
    name = model::parse_model_name(config.model.model);
  }
  if (config.run.task) name->task = *config.run.task;
  return name;
}

// The classes and keypoint shape of the dataset a run of ours trained on, when its yaml is still
// readable (the weights stay usable without it: data= gives them).
void adopt_run_dataset(const core::TrainConfig& config, WeightsSource& source) {
  if (config.data.data.empty()) return;
  try {
    const auto spec =
        run_dataset_spec(config, data::load_dataset_yaml(config.data.data, /*check_paths=*/false));
    source.names = spec.names;
    source.names_source = config.data.data;
    source.kpt_shape = spec.kpt_shape;
  } catch (const std::exception&) {
  }
}

void adopt_run_config(core::TrainConfig config, const fs::path& recorded_in,
                      WeightsSource& source) {
  source.architecture = architecture_in(config, source.path, 1);
  source.architecture_source = recorded_in;
  adopt_run_dataset(config, source);
  source.run_config = std::move(config);
}

void adopt_reference(const model::ReferenceInfo& info, WeightsSource& source) {
  source.kind = WeightsKind::kReference;
  source.architecture = model::reference_model_name(info, source.path.string());
  source.architecture_source = source.path;
  source.names = model::reference_class_names(info);
  if (!source.names.empty()) source.names_source = source.path.string();
  if (info.kpt_shape.size() == 2) {
    source.kpt_shape = std::array<int, 2>{static_cast<int>(info.kpt_shape[0]),
                                          static_cast<int>(info.kpt_shape[1])};
  }
  source.reference = info;
}

}  // namespace

bool is_weights_file(const std::string& model) {
  const auto ext = fs::path(model).extension().string();
  return ext == ".pt" || ext == ".ckpt";
}

std::string WeightsSource::describe() const {
  return kind == WeightsKind::kCheckpoint ? path.string() + " (EMA weights)"
                                          : "weights file " + path.string();
}

data::DatasetSpec WeightsSource::dataset() const {
  if (names.empty()) {
    throw core::ConfigError(path.string() +
                            ": the weights do not say which classes they are for (no readable "
                            "dataset yaml in their run's config); pass data=DATA_YAML");
  }
  data::DatasetSpec spec;
  spec.names = names;
  spec.kpt_shape = kpt_shape;
  return spec;
}

WeightsSource read_weights_source(const fs::path& path) {
  core::require_file(path, "weights file");
  WeightsSource source;
  source.path = path;
  if (path.extension() == ".ckpt") {
    source.kind = WeightsKind::kCheckpoint;
    const Checkpoint ckpt = load_checkpoint(path);
    source.weights = ema_weights(ckpt);
    if (!ckpt.config_yaml.empty()) adopt_run_config(checkpoint_config(ckpt, path), path, source);
  } else {
    model::WeightsFile file = model::read_weights(path);
    source.weights = std::move(file.weights);
    if (file.reference) {
      adopt_reference(*file.reference, source);  // its args.yaml, if any, is the reference's
    } else if (auto recorded = recorded_run_config(path)) {
      source.kind = WeightsKind::kRunWeights;
      adopt_run_config(std::move(*recorded), run_args_of(path), source);
    }
  }
  // The class branches' widths as the weights have them (fine-tuning may have rebuilt them).
  if (source.architecture) source.architecture->cls_width = model::class_widths_of(source.weights);
  return source;
}

}  // namespace trainer::engine
