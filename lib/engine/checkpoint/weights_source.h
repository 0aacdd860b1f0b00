// One way in for a weights file: what model it holds, for which classes, and its tensors, from one
// read of the file.
//
// Why: every command that takes weights (fit model=/pretrained=, val weights=, predict weights=,
// info model=, export) needs the same answers, and the data path must agree with the model: a pose
// model's keypoint shape, an OBB or segment head's task, the class names. Reading them in one
// place, once, keeps a command from building the default head for another task's weights. The file
// kinds:
//   - our checkpoint (.ckpt): its run's config names the architecture; its EMA weights are used;
//   - our weights (.pt) in RUN/weights/: RUN/args.yaml names the architecture;
//   - a reference (Ultralytics) checkpoint (.pt): it records its yaml, task and class names;
//   - any other .pt (a plain state dict): tensors only; the command must be told the model.
// For our files the class names and keypoint shape come from the dataset yaml the run trained on,
// when it is still readable.
#pragma once

#include <array>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "core/config.h"
#include "data/dataset_yaml.h"
#include "model/model_name.h"
#include "model/reference_pickle.h"
#include "model/weights_io.h"

namespace trainer::engine {

enum class WeightsKind {
  kCheckpoint,  // our .ckpt
  kRunWeights,  // our .pt with RUN/args.yaml beside its folder
  kReference,   // a reference checkpoint
  kPlain,       // a .pt that records no architecture
};

struct WeightsSource {
  std::filesystem::path path;
  WeightsKind kind = WeightsKind::kPlain;
  // The architecture (family, scale, task) with the class widths the tensors have; nullopt for a
  // plain .pt.
  std::optional<model::ModelName> architecture;
  std::filesystem::path architecture_source;    // the .ckpt, RUN/args.yaml or the reference .pt
  model::NamedTensorList weights;               // a .ckpt's EMA weights
  std::vector<std::string> names;               // the classes; empty when nothing says
  std::string names_source;                     // where the names were read ("" for none)
  std::optional<std::array<int, 2>> kpt_shape;  // pose: as the names' source says
  std::optional<core::TrainConfig> run_config;  // ours: the config the run recorded
  std::optional<model::ReferenceInfo> reference;

  // "PATH (EMA weights)" or "weights file PATH", for messages about its tensors.
  std::string describe() const;
  // The classes and keypoint shape as a dataset spec, for building a model without a dataset
  // yaml. Throws core::ConfigError naming the file when it records no class names.
  data::DatasetSpec dataset() const;
};

// Reads `path` (.pt or .ckpt) once (a fine-tuned run's recorded weights file is followed for its
// architecture only). Throws core::ConfigError for a missing file, a loop of fine-tuned runs, or a
// recorded config that does not load; core::InputError (naming the file) for one that is not a
// weights file or checkpoint. The low-level readers log each read at debug level ("reading
// weights file PATH"), which the CLI tests count.
WeightsSource read_weights_source(const std::filesystem::path& path);

// Whether `model` (a config's model: value) names a weights file rather than an architecture.
bool is_weights_file(const std::string& model);

}  // namespace trainer::engine
