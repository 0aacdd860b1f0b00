// Tested by tests/core/test_config_reference_keys.cpp: reference-only key list, find_field lookups,
//   is_reference_only_key; Range/expectation text via test_config_errors.
// See config_schema.h. The table's rows are in core/schema/ (training_fields.cpp, run_fields.cpp);
// here: the ranges and expectations they are checked against, lookup, the reference-only keys, and
// the text form of a value.
#include "core/config_schema.h"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <limits>
#include <sstream>
#include <utility>

#include "core/edit_distance.h"
#include "core/schema/field_builders.h"

namespace trainer::core {
namespace {

// Keys of the reference's default.yaml that we accept so that its args.yaml loads, but do not use:
// predict/export/track settings, classification and depth tasks, distillation, quantization. Those
// of 8.4.190, `save_dir` (which its args.yaml adds), and older versions' half, int8, keras,
// crop_fraction, label_smoothing, end2end. tests/core/test_config_reference_keys.cpp lists them.
constexpr std::string_view kReferenceOnlyKeys[] = {
    "mode",        "save",          "verbose",
    "profile",     "compile",       "split",
    "half",        "dnn",           "source",
    "vid_stride",  "stream_buffer", "visualize",
    "augment",     "agnostic_nms",  "retina_masks",
    "embed",       "show",          "save_frames",
    "save_txt",    "save_conf",     "save_crop",
    "show_labels", "show_conf",     "show_boxes",
    "line_width",  "format",        "keras",
    "optimize",    "int8",          "dynamic",
    "simplify",    "opset",         "workspace",
    "bgr",         "cutmix",        "auto_augment",
    "erasing",     "cfg",           "tracker",
    "save_dir",    "crop_fraction", "label_smoothing",
    "cls_pw",      "end2end",       "distill_model",
    "dis",         "quantize",      "dlog",
    "dgrad",       "dlam",
};

}  // namespace

bool Range::contains(double v) const {
  if (std::isnan(v)) return false;
  const bool above = min_open ? v > min : v >= min;
  const bool below = max_open ? v < max : v <= max;
  return above && below;
}

std::string Range::describe() const {
  auto num = [](double v) {
    if (std::isinf(v)) return std::string(v > 0 ? "inf" : "-inf");
    return format_value(FieldValue(v));
  };
  return std::string(min_open ? "(" : "[") + num(min) + ", " + num(max) + (max_open ? ")" : "]");
}

std::string FieldSpec::expectation() const {
  const std::string in = range ? " in " + range->describe() : "";
  switch (type) {
    case FieldType::kBool:
      return "true or false";
    case FieldType::kInt:
      return "an integer" + in;
    case FieldType::kFloat:
      return "a number" + in;
    case FieldType::kString:
      return int_or_int_list ? "an integer or a list of integers" : "a string";
    case FieldType::kPath:
      return "a file path";
    case FieldType::kFloatList:
      return "a list of " + std::to_string(list_size) + " numbers" + (range ? ", each" + in : "");
    case FieldType::kChoice: {
      std::string s = "one of: ";
      for (size_t i = 0; i < choices.size(); ++i) s += (i ? ", " : "") + choices[i];
      if (yaml_true_choice) s += " (true = " + *yaml_true_choice + ")";
      if (yaml_false_choice) s += " (false = " + *yaml_false_choice + ")";
      return s;
    }
  }
  return "a value";
}

const std::vector<FieldSpec>& config_fields() {
  static const std::vector<FieldSpec> fields = [] {
    std::vector<FieldSpec> all = schema::training_fields();
    for (auto& field : schema::run_fields()) all.push_back(std::move(field));
    return all;
  }();
  return fields;
}

const FieldSpec* find_field(std::string_view key) {
  for (const auto& f : config_fields()) {
    if (f.key == key) return &f;
  }
  return nullptr;
}

std::vector<std::string_view> reference_only_keys() {
  return {std::begin(kReferenceOnlyKeys), std::end(kReferenceOnlyKeys)};
}

bool is_reference_only_key(std::string_view key) {
  return std::find(std::begin(kReferenceOnlyKeys), std::end(kReferenceOnlyKeys), key) !=
         std::end(kReferenceOnlyKeys);
}

std::string closest_key(std::string_view key) {
  std::string best;
  size_t best_distance = std::numeric_limits<size_t>::max();
  auto consider = [&](std::string_view candidate) {
    const size_t d = edit_distance(key, candidate);
    if (d < best_distance) {
      best_distance = d;
      best = std::string(candidate);
    }
  };
  for (const auto& f : config_fields()) consider(f.key);
  for (auto k : kReferenceOnlyKeys) consider(k);
  return best;
}

std::string format_value(const FieldValue& value) {
  struct Visitor {
    std::string operator()(bool b) const { return b ? "true" : "false"; }
    std::string operator()(int64_t i) const { return std::to_string(i); }
    std::string operator()(double d) const {
      if (std::isinf(d)) return d > 0 ? ".inf" : "-.inf";
      std::ostringstream os;
      os.precision(17);
      // Shortest text that reads back to the same double.
      for (int p = 6; p <= 17; ++p) {
        std::ostringstream t;
        t.precision(p);
        t << d;
        if (std::stod(t.str()) == d) return t.str();
      }
      os << d;
      return os.str();
    }
    std::string operator()(const std::string& s) const { return s; }
    std::string operator()(const std::vector<double>& v) const {
      std::string s = "[";
      for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + (*this)(v[i]);
      return s + "]";
    }
  };
  return std::visit(Visitor{}, value);
}

bool operator==(const TrainConfig& a, const TrainConfig& b) {
  for (const auto& f : config_fields()) {
    if (f.get(a) != f.get(b)) return false;
  }
  return true;
}

}  // namespace trainer::core
