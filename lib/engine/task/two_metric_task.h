// What tasks scored twice share (pose: boxes and keypoints; segmentation: boxes and masks): the
// results.csv columns, a validation's values in their order, and the validation table with the
// reference's four metrics of each side by side, one "all" row and one per class.
//
// Why shared: the pose and segmentation definitions differ only in the second metric's letter
// (P, M), where its values come from, and the notes under the table.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "engine/log/epoch_record.h"
#include "engine/validation_result.h"

namespace trainer::engine {

// The loss items of `loss_names`, the reference's four (B) and four (<tag>) metrics, then
// trainer's COCO box AP, AP50 and the second protocol's AP, AP50 ("metrics/coco/AP(<tag>)").
EpochColumns two_metric_columns(const std::vector<std::string>& loss_names, const std::string& tag);

// A validation's values in two_metric_columns' order: `second` (the task's metric) and
// `second_coco` (its COCO protocol) may be absent (zeros, NaN).
EpochValidation two_metric_epoch_validation(
    const ValidationResult& result, const std::optional<eval::ReferenceMetric::Result>& second,
    const std::optional<eval::CocoStats>& second_coco);

// The header ("Box(P ... mAP50-95)" then "<second>(P ... mAP50-95)") and the rows of `box` and
// `second` (per class when `per_class`, classes named by `names`).
std::string format_two_metric_table(const ValidationResult& result,
                                    const eval::ReferenceMetric::Result& second,
                                    const std::string& second_name,
                                    const std::vector<std::string>& names, bool per_class);

}  // namespace trainer::engine
