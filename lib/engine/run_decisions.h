// What a fit decides about itself after reading the user's config, as values: the task (from a
// weights file or the model name), the architecture a weights file held, the class widths a
// fine-tune rebuilt, the precision `auto` chose.
//
// Why: the config a user gave stays as given, and every config the run uses is derived from it and
// these decisions in one place: this rank's (its own device) and the one the run records in
// args.yaml and in every checkpoint (the user's device list). Writing the decisions back into
// shared config copies made those copies disagree in ways only their readers knew.
#pragma once

#include <optional>
#include <string>

#include "core/config.h"
#include "model/class_widths.h"

namespace trainer::engine {

struct RunDecisions {
  std::optional<core::Task> task;                  // the run's task (a weights file's own)
  std::string architecture;                        // set when the model comes from a weights file
  std::optional<model::ClassWidths> class_widths;  // the built model's, once it is built
  std::string precision_used;                      // "bf16" / "fp32" once the context decided
};

// The config this rank trains with: the user's, its decisions, and `rank_device` (this rank's
// own device out of the user's list).
core::TrainConfig rank_config(const core::TrainConfig& user, const RunDecisions& decisions,
                              const std::string& rank_device);

// The config args.yaml and the checkpoints record: the user's (its device list) with the
// decisions. The class widths are written only where they differ from the user's `cls_width`
// (a fine-tune rebuilt them): an equal width keeps the user's spelling.
core::TrainConfig recorded_config(const core::TrainConfig& user, const RunDecisions& decisions);

}  // namespace trainer::engine
