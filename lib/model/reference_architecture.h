// The built-in architecture a reference checkpoint's model is: family, scale and task from the
// yaml it was built from and its head's class.
//
// Why: the reference records `yaml_file` ("yolo26n-pose.yaml", or "yolo26-pose.yaml" with
// `scale: n`) and its last layer is a Detect / Pose(26) / Segment(26) / OBB(26) module; trainer
// builds the same model from that name, and the weights then fit key for key (load_weights checks
// every key and shape, so a modified yaml is refused there with the keys named).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model/model_name.h"
#include "model/reference_pickle.h"

namespace trainer::model {

// Throws core::ConfigError naming `file` when the yaml is not one of the yolo26 / yolo11 families
// or names no scale.
ModelName reference_model_name(const ReferenceInfo& info, const std::string& file);

// The class names a reference checkpoint's model has: model.names by index, "0", "1", ... where
// it names none (up to the yaml's nc). Empty when it records no class at all or more than
// kMaxReferenceClasses.
std::vector<std::string> reference_class_names(const ReferenceInfo& info);
inline constexpr int64_t kMaxReferenceClasses = 100000;

}  // namespace trainer::model
