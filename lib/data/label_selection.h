// Which images and labels a run trains on: the reference's `fraction`, `classes` and `single_cls`.
//
// Why: these three keys shape the dataset before the loader sees it, the same way for training and
// validation (the reference applies `classes` and `single_cls` to both splits and `fraction` to the
// training split only). They act on the parsed split (data/image_labels.h), so the label cache is
// shared by runs with different selections.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "data/image_labels.h"

namespace trainer::data {

struct LabelSelection {
  std::vector<int> classes{};  // keep only these class ids (empty = all)
  bool single_cls = false;     // every kept label becomes class 0 of one class named "item"
};

// The class ids `classes` names: "" none (all classes), "N", or "[i, j, ...]" (the config's text
// form). Throws core::ConfigError for an id outside 0..nc-1, naming it and nc.
std::vector<int> parse_class_list(const std::string& classes, int nc);

// Applies `selection` to `split` in place: labels (and their keypoints, and crowd boxes) of other
// classes are removed, images left without labels stay as backgrounds (as the reference does);
// with single_cls every class becomes 0 and the names become {"item"}. Updates the box count.
void select_labels(DatasetIndex& split, const LabelSelection& selection);

// The names a run trains with: {"item"} under single_cls, else `names`.
std::vector<std::string> selected_names(const std::vector<std::string>& names, bool single_cls);

// How many of `images` the reference's `fraction` keeps: a ratio in (0, 1] keeps
// max(1, round(images * fraction)) (Python's round: halves to even); a whole number above 1 is an
// image count (capped at images). Throws core::ConfigError for a fraction <= 0 or a non-integral
// value above 1.
size_t fraction_count(size_t images, double fraction);

// Keeps the first fraction_count() images of `split` (the reference keeps the first of its sorted
// image list), logging how many of how many when some are dropped.
void take_fraction(DatasetIndex& split, double fraction);

}  // namespace trainer::data
