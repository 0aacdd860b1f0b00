// What the run behind a weights file recorded that `val` and `predict` take when their command
// line does not say: the dataset yaml, the image size and single_cls (the task comes with the
// architecture, weights_source.h).
//
// Why: the reference keeps data, imgsz, task and single_cls from a checkpoint's arguments. Without
// them `val weights=best.pt` was refused for want of data=, and a model trained at 64 px predicted
// at 640 x 640.
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/config.h"
#include "engine/checkpoint/weights_source.h"

namespace trainer::engine {

struct RecordedArguments {
  std::string data;  // the dataset yaml the run trained on; "" when none or no longer there
  std::optional<int64_t> imgsz;
  std::optional<bool> single_cls;
  std::string source;  // where they were read: the .ckpt, RUN/args.yaml or the reference .pt
};

// Our checkpoint's or run's recorded config, or a reference checkpoint's train_args.
RecordedArguments recorded_arguments(const WeightsSource& source);

// Sets `config`'s data, imgsz and single_cls from `recorded` where the user did not (`given`: the
// keys the command line or config file set). Returns what was taken ("imgsz=64", ...), in that
// order, for the one line that says so.
std::vector<std::string> adopt_recorded_arguments(const RecordedArguments& recorded,
                                                  const std::set<std::string>& given,
                                                  core::TrainConfig& config);

}  // namespace trainer::engine
