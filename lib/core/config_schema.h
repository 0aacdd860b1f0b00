// The registry of configuration keys: name, section, type, default, allowed range or choices.
//
// Why: loading, validating, printing, writing and comparing a config all walk this one table, so a
// new key (a field of core::TrainConfig plus its row here) can never be printed but not loaded,
// or the reverse.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "core/config.h"

namespace trainer::core {

enum class FieldType { kBool, kInt, kFloat, kString, kPath, kChoice, kFloatList };

using FieldValue = std::variant<bool, int64_t, double, std::string, std::vector<double>>;

// A closed or open interval for numeric fields.
struct Range {
  double min = 0;
  double max = 0;
  bool min_open = false;
  bool max_open = false;
  bool contains(double v) const;
  std::string describe() const;  // "[0, 1)"
};

struct FieldSpec {
  std::string key;
  std::string section;
  FieldType type = FieldType::kFloat;
  std::string help;
  std::optional<Range> range;                    // numeric fields (and each element of a list)
  std::vector<std::string> choices;              // kChoice, canonical spellings
  size_t list_size = 0;                          // kFloatList
  std::optional<std::string> yaml_true_choice;   // kChoice: the choice a YAML `true` selects
  std::optional<std::string> yaml_false_choice;  // kChoice: the choice a YAML `false` selects
  bool path_like = false;  // kString: resolved like a path when the value looks like one
  // kString: an integer or a list of integers (`freeze`), held as text "N" or "[i, j]"; written
  // unquoted like `raw_yaml`.
  bool int_or_int_list = false;
  bool raw_yaml = false;  // kString: true/false written unquoted (`pretrained: true`, a YAML bool)
  // kFloat: the values a YAML false / true stand for (`multi_scale`, a bool before 8.4).
  std::optional<std::array<double, 2>> float_from_bool;
  // Values refused with a reason rather than the generic "expects ..." (lower-case value, why).
  std::vector<std::pair<std::string, std::string>> refused_values;
  bool alias = false;  // an alternative spelling of another field: loaded, never printed or written
  // What a YAML null sets when the default is not one fixed value (`task`: from the model name);
  // without it a null sets the default config's value.
  std::optional<FieldValue> null_value;
  std::function<FieldValue(const TrainConfig&)> get;
  std::function<void(TrainConfig&, const FieldValue&)> set;

  std::string expectation()
      const;  // "an integer in [1, 100000]", "one of: auto, MuSGD, SGD, AdamW"
};

// Every key, in the order they are printed and written.
const std::vector<FieldSpec>& config_fields();

// The field for `key`, or nullptr.
const FieldSpec* find_field(std::string_view key);

// Keys of the reference trainer's default.yaml that this trainer accepts (so a user's args.yaml
// loads) but does not use; loading one logs a note naming it.
bool is_reference_only_key(std::string_view key);
std::vector<std::string_view> reference_only_keys();  // all of them, in registry order

// The valid key closest to `key` by edit distance (our keys and reference keys).
std::string closest_key(std::string_view key);

// Text form used in tables and YAML: floats as the shortest text (6 to 17 significant digits) that
// reads back to the same double, lists as [a, b, c].
std::string format_value(const FieldValue& value);

}  // namespace trainer::core
