// The validation table of tasks scored twice (pose: boxes and keypoints; segmentation: boxes and
// masks): the reference's four metrics of each side by side, one "all" row and one per class.
//
// Why shared: the pose and segmentation tables differ only in the second metric's name and the
// notes under them.
#pragma once

#include <string>
#include <vector>

#include "engine/validator.h"

namespace trainer::engine {

// The header ("Box(P ... mAP50-95)" then "<second>(P ... mAP50-95)") and the rows of `box` and
// `second` (per class when `per_class`, classes named by `names`).
std::string format_two_metric_table(const ValidationResult& result,
                                    const eval::ReferenceMetric::Result& second,
                                    const std::string& second_name,
                                    const std::vector<std::string>& names, bool per_class);

}  // namespace trainer::engine
