// Fine-tuning's weight transfer as 8.4.190's DetectionModel.load does it (nn/tasks.py).
//
// Why more than copying keys that fit: the class branch's hidden width follows the class count,
// class rows differ in order between datasets, and a first conv may differ in channels; each
// re-initialises layers that the source could have given. The reference's load, in order:
//  1. rebuilds the head's class branches (cv3, one2one_cv3) at the source's hidden width when the
//     head's input widths match (here: the caller builds the target with rebuilt_class_widths()
//     before transferring, and records them as `cls_width`);
//  2. copies class-logit rows by class name (`cls_remap`, _remap_cls_by_names): names compared
//     case-insensitively without surrounding whitespace, placeholder names ("0", "1", ...) never
//     matched, only the last 1x1 conv of cv3 / one2one_cv3 / proto.semseg;
//  3. copies every other tensor whose key and shape agree (intersect_dicts);
//  4. fills a first conv whose shape differs from the source's filters (a single-channel model
//     takes the sum over the source's input channels).
// The count it reports is the reference's "Transferred N/M items": copied tensors, remapped
// tensors and a filled first conv, out of the target's state-dict entries.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "model/class_widths.h"
#include "model/weights_io.h"

namespace trainer::model {

// The class-branch widths the target (its state dict) is to be rebuilt at so that the source's
// hidden class layers fit: a branch whose hidden width differs from the source's takes the
// source's, when both heads take the same input widths and neither model is fused (fewer than 10
// BatchNorm layers, the reference's is_fused). A branch the source lacks (one2one_cv3 of a YOLO11
// source) keeps its width (0 here). nullopt: nothing to rebuild.
std::optional<ClassWidths> rebuilt_class_widths(const NamedTensorList& target,
                                                const NamedTensorList& source);

// The class branches' hidden widths that a state dict was built with ({0, 0} for none found).
ClassWidths class_widths_of(const NamedTensorList& weights);

struct FineTuneReport {
  int64_t transferred = 0;      // the reference's count (see the file comment)
  int64_t total = 0;            // the target's state-dict entries
  int64_t remapped = 0;         // class-logit tensors whose rows were matched by class name
  int64_t matched_classes = 0;  // target classes found among the source's (when remapped)
  bool first_conv_filled = false;
  std::vector<std::string> kept_initialised;  // target keys the source gave nothing to
};

// Names that say nothing: empty, or "0", "1", ... (a yaml-built model's placeholders).
bool placeholder_names(const std::vector<std::string>& names);

// Transfers `source` (a state dict, any float dtype) into `target`. `target_names` and
// `source_names` are the class names; pass empty target names to skip the remap (cls_remap off).
FineTuneReport fine_tune_transfer(torch::nn::Module& target,
                                  const std::vector<std::string>& target_names,
                                  const NamedTensorList& source,
                                  const std::vector<std::string>& source_names);

}  // namespace trainer::model
