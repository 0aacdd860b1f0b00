#include "core/config_writer.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <fstream>
#include <sstream>

#include "core/atomic_file.h"
#include "core/config_schema.h"
#include "core/error.h"

namespace trainer::core {
namespace {

// Strings are written plain when YAML reads them back as the same string, else double-quoted
// (an empty device, a numeric-looking name such as "0", text with ':' or '#').
bool plain_scalar_ok(const std::string& text) {
  if (text.empty() || text.front() == ' ' || text.back() == ' ') return false;
  if (text.find_first_of(":#{}[],&*!|>'\"%@`") != std::string::npos) return false;
  const YAML::Node probe = YAML::Load(text);
  double as_number = 0;
  bool as_flag = false;
  return probe.IsScalar() && probe.Scalar() == text &&
         !YAML::convert<double>::decode(probe, as_number) &&
         !YAML::convert<bool>::decode(probe, as_flag) && text != "null" && text != "~";
}

std::string yaml_scalar(const FieldValue& value) {
  if (!std::holds_alternative<std::string>(value)) return format_value(value);
  const std::string& text = std::get<std::string>(value);
  if (plain_scalar_ok(text)) return text;
  YAML::Emitter out;
  out << YAML::DoubleQuoted << text;
  return out.c_str();
}

}  // namespace

std::string config_to_yaml(const TrainConfig& config) {
  std::ostringstream out;
  out << "# trainer configuration (resolved). Load with: trainer config THIS_FILE\n";
  std::string section;
  for (const auto& field : config_fields()) {
    if (field.alias) continue;
    if (field.section != section) {
      section = field.section;
      out << "# " << section << "\n";
    }
    const FieldValue value = field.get(config);
    const std::string* s = std::get_if<std::string>(&value);
    const bool raw =
        s && (field.int_or_int_list || (field.raw_yaml && (*s == "true" || *s == "false")));
    std::string text = raw ? *s : yaml_scalar(value);
    if (raw && text.empty()) text = "null";
    out << field.key << ": " << text << "\n";
  }
  return out.str();
}

void write_config_yaml(const TrainConfig& config, const std::filesystem::path& file) {
  write_file_atomically(file, config_to_yaml(config));
}

std::string config_table(const TrainConfig& config) {
  const TrainConfig defaults;
  size_t section_width = 7;
  size_t key_width = 3;
  for (const auto& field : config_fields()) {
    section_width = std::max(section_width, field.section.size());
    key_width = std::max(key_width, field.key.size());
  }
  std::ostringstream out;
  auto row = [&](const std::string& section, const std::string& key, const std::string& value) {
    out << "  " << section << std::string(section_width - section.size() + 2, ' ') << key
        << std::string(key_width - key.size() + 2, ' ') << value << "\n";
  };
  row("section", "key", "value  (* = changed from default)");
  for (const auto& field : config_fields()) {
    if (field.alias) continue;
    const FieldValue value = field.get(config);
    const bool changed = value != field.get(defaults);
    std::string text = format_value(value);
    if (text.empty()) text = "''";
    row(field.section, field.key, text + (changed ? "  *" : ""));
  }
  return out.str();
}

}  // namespace trainer::core
