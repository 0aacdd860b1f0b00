// What a reference (Ultralytics) checkpoint's pickle holds, found in the records the restricted
// unpickler built: the module tree's parameters and buffers under their state-dict keys, and the
// model's own description (its yaml, class names) and the training run's arguments.
//
// Why: the reference saves `{'model': DetectionModel, 'ema': DetectionModel, 'train_args': {...},
// 'epoch': ..., ...}` with the modules pickled as objects (protocol 2: NEWOBJ then BUILD with the
// module's __dict__). A module's state is `_parameters`, `_buffers` (less the names in
// `_non_persistent_buffers_set`) and `_modules`, and PyTorch's state_dict() lists them in that
// order, children after their parent, keys joined by '.'. Reading that from the records needs no
// Python and runs nothing; this part needs no LibTorch either (model/reference_checkpoint.h makes
// the tensors).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "model/restricted_unpickler.h"

namespace trainer::model {

// What the checkpoint says about its model and its run.
struct ReferenceInfo {
  std::string source;       // "ema" or "model": the checkpoint entry the weights come from
  std::string model_class;  // "ultralytics.nn.tasks.DetectionModel", "...PoseModel", ...
  std::string head_class;   // the last layer's class: "ultralytics.nn.modules.head.Detect", ...
  // The model's yaml (DetectionModel.yaml): what it was built from.
  std::string yaml_file;           // "yolo26n.yaml", "yolo11s-pose.yaml", ...
  std::string scale;               // "n", "s", ... (empty when the yaml names none)
  std::optional<int64_t> nc;       // classes the model was built for
  std::vector<int64_t> kpt_shape;  // pose: [keypoints, 2 or 3]
  std::vector<std::pair<int64_t, std::string>> names;  // class index -> name (model.names)
  std::string task;             // train_args' task ("detect", "pose", ...), or ""
  std::string train_args_yaml;  // train_args as a YAML mapping (flow values), or ""
  int64_t epoch = -1;           // -1: a finished (stripped) checkpoint
  std::string date;
  std::string version;         // the reference's version that wrote it
  bool has_optimizer = false;  // a mid-training checkpoint (resumable by the reference)
};

struct ReferenceRecord {
  ReferenceInfo info;
  std::vector<std::pair<std::string, const PyValue*>> state;  // state-dict key -> kTensor value
};

// Whether `root` is a reference checkpoint: a dict whose 'ema' or 'model' is a pickled module.
bool is_reference_checkpoint(const PyValue& root);

// The record of a reference checkpoint (the EMA when present, else the model, as the reference
// loads them). Throws PickleError when the module tree is not one (a parameter that is no
// tensor, a module nested deeper than 64 or inside itself, more keys than the pickle has tensors
// to give them).
ReferenceRecord read_reference_record(const PickleDocument& doc);

}  // namespace trainer::model
