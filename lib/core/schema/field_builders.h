// lib/core internal: the builders the configuration table's rows are written with (schema/*.cpp
// only). Each row is one expression: key, section, an accessor lambda, range or choices, help.
#pragma once

#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/config_schema.h"

namespace trainer::core::schema {

inline constexpr double kInf = std::numeric_limits<double>::infinity();

inline Range closed(double lo, double hi) {
  return Range{lo, hi, false, false};
}
inline Range half_open(double lo, double hi) {
  return Range{lo, hi, false, true};
}
inline Range open_closed(double lo, double hi) {
  return Range{lo, hi, true, false};
}

// `access` is a generic lambda `[](auto& c) -> auto& { return c.section.member; }`, usable on const
// and non-const configs, so one expression gives both getter and setter.
template <class T, class Access>
FieldSpec field(std::string key, std::string section, FieldType type, Access access,
                std::string help, std::optional<Range> range = std::nullopt) {
  FieldSpec f;
  f.key = std::move(key);
  f.section = std::move(section);
  f.type = type;
  f.help = std::move(help);
  f.range = range;
  f.get = [access](const TrainConfig& c) -> FieldValue { return FieldValue(T(access(c))); };
  f.set = [access](TrainConfig& c, const FieldValue& v) { access(c) = std::get<T>(v); };
  return f;
}

template <class Access>
FieldSpec float_field(std::string key, std::string section, Access access, Range range,
                      std::string help) {
  return field<double>(std::move(key), std::move(section), FieldType::kFloat, access,
                       std::move(help), range);
}

template <class Access>
FieldSpec int_field(std::string key, std::string section, Access access, Range range,
                    std::string help) {
  return field<int64_t>(std::move(key), std::move(section), FieldType::kInt, access,
                        std::move(help), range);
}

template <class Access>
FieldSpec bool_field(std::string key, std::string section, Access access, std::string help) {
  return field<bool>(std::move(key), std::move(section), FieldType::kBool, access, std::move(help));
}

template <class Access>
FieldSpec string_field(std::string key, std::string section, Access access, std::string help,
                       FieldType type = FieldType::kString) {
  return field<std::string>(std::move(key), std::move(section), type, access, std::move(help));
}

// An enum stored in the struct, spelled as one of `names` in YAML (matched case-insensitively).
template <class Enum, class Access>
FieldSpec choice_field(std::string key, std::string section, Access access,
                       std::vector<std::pair<std::string, Enum>> names, std::string help) {
  FieldSpec f;
  f.key = std::move(key);
  f.section = std::move(section);
  f.type = FieldType::kChoice;
  f.help = std::move(help);
  for (const auto& [name, value] : names) f.choices.push_back(name);
  f.get = [access, names](const TrainConfig& c) -> FieldValue {
    for (const auto& [name, value] : names) {
      if (access(c) == value) return name;
    }
    return std::string("?");
  };
  f.set = [access, names](TrainConfig& c, const FieldValue& v) {
    const auto& text = std::get<std::string>(v);
    for (const auto& [name, value] : names) {
      if (name == text) access(c) = value;
    }
  };
  return f;
}

// The table's rows, in the order they are printed and written: model, data, optimizer, schedule,
// EMA, loss and augmentation (training_fields.cpp), then the run's own (run_fields.cpp).
std::vector<FieldSpec> training_fields();
std::vector<FieldSpec> run_fields();

}  // namespace trainer::core::schema
