#include "core/config_loader.h"

#include <spdlog/spdlog.h>
#include <yaml-cpp/yaml.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "core/ascii_case.h"
#include "core/config_schema.h"
#include "core/yaml_document.h"

namespace fs = std::filesystem;

namespace trainer::core {
namespace {

constexpr const char* kBaseKey = "base";

SourceLocation location_of(const YAML::Node& node, const std::string& file) {
  const YAML::Mark mark = node.Mark();
  return SourceLocation{file, mark.line >= 0 ? mark.line + 1 : 0};
}

std::string shown(const YAML::Node& node) {
  if (node.IsScalar()) return "'" + node.Scalar() + "'";
  if (node.IsSequence()) return "a list";
  if (node.IsMap()) return "a mapping";
  return "nothing";
}

[[noreturn]] void fail_value(const FieldSpec& field, const YAML::Node& node,
                             const SourceLocation& where) {
  if (node.IsScalar()) {
    const std::string value = ascii_lowercase(node.Scalar());
    for (const auto& [refused, why] : field.refused_values) {
      if (value == refused) {
        throw ConfigError(where, "key '" + field.key + "': " + refused + " " + why);
      }
    }
  }
  throw ConfigError(
      where, "key '" + field.key + "' expects " + field.expectation() + ", got " + shown(node));
}

std::optional<bool> as_bool(const YAML::Node& node) {
  if (!node.IsScalar()) return std::nullopt;
  bool value = false;
  if (YAML::convert<bool>::decode(node, value)) return value;
  return std::nullopt;
}

// Integers must be written as integers: "16" yes, "16.5" or "1e3" no.
std::optional<int64_t> as_int(const YAML::Node& node) {
  if (!node.IsScalar()) return std::nullopt;
  const std::string& text = node.Scalar();
  if (text.empty()) return std::nullopt;
  size_t used = 0;
  try {
    const long long v = std::stoll(text, &used, 10);
    if (used != text.size()) return std::nullopt;
    return static_cast<int64_t>(v);
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

std::optional<double> as_double(const YAML::Node& node) {
  if (!node.IsScalar()) return std::nullopt;
  double value = 0;
  if (YAML::convert<double>::decode(node, value)) return value;
  return std::nullopt;
}

bool looks_like_path(const std::string& value) {
  const auto ext = fs::path(value).extension().string();
  return value.find('/') != std::string::npos || ext == ".yaml" || ext == ".yml";
}

std::string resolve_path(const std::string& value, const fs::path& base_dir) {
  if (value.empty()) return value;
  fs::path p(value);
  if (p.is_relative()) p = base_dir / p;
  return fs::absolute(p).lexically_normal().string();
}

// `N` or `[i, j, ...]` (non-negative integers) as canonical text "N" / "[i, j]".
std::string int_or_int_list_text(const FieldSpec& field, const YAML::Node& node,
                                 const SourceLocation& where) {
  if (node.IsScalar()) {
    const auto i = as_int(node);
    if (!i || *i < 0) fail_value(field, node, where);
    return std::to_string(*i);
  }
  if (!node.IsSequence()) fail_value(field, node, where);
  std::string text = "[";
  for (size_t k = 0; k < node.size(); ++k) {
    const auto i = as_int(node[k]);
    if (!i || *i < 0) fail_value(field, node, where);
    text += (k ? ", " : "") + std::to_string(*i);
  }
  return text + "]";
}

// Converts `node` to the field's value, checking type and range. `base_dir` resolves paths.
FieldValue parse_value(const FieldSpec& field, const YAML::Node& node, const SourceLocation& where,
                       const fs::path& base_dir) {
  if (!node.IsDefined() || node.IsNull())
    return field.null_value.value_or(field.get(TrainConfig{}));
  switch (field.type) {
    case FieldType::kBool: {
      if (auto b = as_bool(node)) return *b;
      fail_value(field, node, where);
    }
    case FieldType::kInt: {
      auto i = as_int(node);
      if (!i || (field.range && !field.range->contains(static_cast<double>(*i)))) {
        fail_value(field, node, where);
      }
      return *i;
    }
    case FieldType::kFloat: {
      if (field.float_from_bool && !as_double(node)) {
        if (auto b = as_bool(node)) return (*field.float_from_bool)[*b ? 1 : 0];
      }
      auto d = as_double(node);
      if (!d || (field.range && !field.range->contains(*d))) fail_value(field, node, where);
      return *d;
    }
    case FieldType::kString:
    case FieldType::kPath: {
      if (field.int_or_int_list) return int_or_int_list_text(field, node, where);
      if (!node.IsScalar()) fail_value(field, node, where);
      const std::string& text = node.Scalar();
      const bool is_path =
          field.type == FieldType::kPath || (field.path_like && looks_like_path(text));
      return is_path ? resolve_path(text, base_dir) : text;
    }
    case FieldType::kChoice: {
      if (!node.IsScalar()) fail_value(field, node, where);
      const std::string wanted = ascii_lowercase(node.Scalar());
      for (const auto& choice : field.choices) {
        if (ascii_lowercase(choice) == wanted) return choice;
      }
      if (field.yaml_true_choice || field.yaml_false_choice) {
        if (auto b = as_bool(node)) {
          const auto& pick = *b ? field.yaml_true_choice : field.yaml_false_choice;
          if (pick) return *pick;
        }
      }
      fail_value(field, node, where);
    }
    case FieldType::kFloatList: {
      if (!node.IsSequence() || node.size() != field.list_size) fail_value(field, node, where);
      std::vector<double> values;
      for (const auto& item : node) {
        auto d = as_double(item);
        if (!d || (field.range && !field.range->contains(*d))) fail_value(field, node, where);
        values.push_back(*d);
      }
      return values;
    }
  }
  fail_value(field, node, where);
}

[[noreturn]] void fail_unknown_key(const std::string& key, const SourceLocation& where) {
  throw ConfigError(where, "unknown key '" + key + "'; did you mean '" + closest_key(key) +
                               "'? (`trainer config --keys` lists them all)");
}

// Sets one key from a YAML node; notes reference-only keys.
void apply_key(TrainConfig& config, const std::string& key, const YAML::Node& value,
               const SourceLocation& where, const fs::path& base_dir,
               std::vector<ConfigNote>* notes) {
  if (const FieldSpec* field = find_field(key)) {
    field->set(config, parse_value(*field, value, where, base_dir));
    return;
  }
  if (is_reference_only_key(key)) {
    if (notes) notes->push_back({where, "reference key '" + key + "' is accepted and not used"});
    return;
  }
  fail_unknown_key(key, where);
}

std::string read_file(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) throw ConfigError("config file not found: " + file.string());
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

class Loader {
 public:
  LoadedConfig result;

  void load_file(const fs::path& file) {
    if (!fs::is_regular_file(file)) {
      throw ConfigError("config file not found: " + file.string());
    }
    const fs::path canonical = fs::weakly_canonical(file);
    if (!visiting_.insert(canonical).second) {
      throw ConfigError(SourceLocation{file.string(), 0},
                        "base configs form a cycle through this file");
    }
    load_text(read_file(file), file.string(), fs::absolute(file).parent_path());
    visiting_.erase(canonical);
  }

  void load_text(const std::string& text, const std::string& name, const fs::path& dir) {
    const YAML::Node root = parse_yaml_document(text, name);
    if (root.IsNull()) {
      result.files.emplace_back(name);
      return;  // an empty file is a valid, empty config
    }
    if (!root.IsMap()) {
      throw ConfigError(location_of(root, name), "a config must be a mapping of key: value");
    }
    if (const YAML::Node base = root[kBaseKey]) {
      if (!base.IsScalar()) {
        throw ConfigError(location_of(base, name), "key 'base' expects a file path");
      }
      fs::path base_path(base.Scalar());
      if (base_path.is_relative()) base_path = dir / base_path;
      if (!fs::is_regular_file(base_path)) {
        throw ConfigError(location_of(base, name),
                          fs::is_directory(base_path)
                              ? "base config: " + base_path.string() + " is a folder, not a file"
                              : "base config not found: " + base_path.string());
      }
      load_file(base_path);
    }
    result.files.emplace_back(name);
    for (const auto& entry : root) {
      const std::string key = entry.first.Scalar();
      if (key == kBaseKey) continue;
      apply_key(result.config, key, entry.second, location_of(entry.first, name), dir,
                &result.notes);
    }
  }

 private:
  std::set<fs::path> visiting_;
};

// The reference's check_imgsz: an imgsz that is not a multiple of the largest stride (32 for
// every built-in model) is rounded up to the next one, with a note saying so.
void round_imgsz_to_stride(LoadedConfig& loaded) {
  constexpr int64_t kStride = 32;
  int64_t& imgsz = loaded.config.data.imgsz;
  if (imgsz % kStride == 0) return;
  const int64_t rounded = (imgsz + kStride - 1) / kStride * kStride;
  const std::string message = "imgsz " + std::to_string(imgsz) +
                              " is not a multiple of the stride 32; using " +
                              std::to_string(rounded);
  spdlog::warn("{}", message);
  loaded.notes.push_back({SourceLocation{}, message});
  imgsz = rounded;
}

// The task from the `task` key and the model name (a contradiction is a ConfigError naming both),
// stored so that the loaded config, its table and its args.yaml all name the run's task.
// A weights file's task is the one it was trained for, which only the engine can read
// (engine::resolved_task); it stays unset here unless the `task` key names it.
void resolve_config_task(LoadedConfig& loaded) {
  const std::string ext = std::filesystem::path(loaded.config.model.model).extension().string();
  if (!loaded.config.run.task && (ext == ".pt" || ext == ".ckpt")) return;
  loaded.config.run.task = resolve_task(loaded.config.run.task, loaded.config.model.model);
}

}  // namespace

void apply_override(TrainConfig& config, const std::string& key_equals_value,
                    std::vector<ConfigNote>* notes) {
  const SourceLocation where{};
  const auto eq = key_equals_value.find('=');
  if (eq == std::string::npos || eq == 0) {
    throw ConfigError(where, "override '" + key_equals_value + "' is not of the form key=value");
  }
  const std::string key = key_equals_value.substr(0, eq);
  const std::string text = key_equals_value.substr(eq + 1);
  YAML::Node value;
  try {
    value = text.empty() ? YAML::Node(YAML::NodeType::Null) : YAML::Load(text);
  } catch (const YAML::ParserException& e) {
    throw ConfigError(where, "override '" + key_equals_value + "': malformed value: " + e.msg);
  }
  if (key == kBaseKey) throw ConfigError(where, "'base' can only be set inside a config file");
  apply_key(config, key, value, where, fs::current_path(), notes);
}

LoadedConfig load_config(const fs::path& file, const std::vector<std::string>& overrides) {
  Loader loader;
  if (!file.empty()) loader.load_file(file);
  for (const auto& o : overrides) apply_override(loader.result.config, o, &loader.result.notes);
  round_imgsz_to_stride(loader.result);
  resolve_config_task(loader.result);
  return loader.result;
}

LoadedConfig load_config_text(const std::string& yaml_text, const std::string& display_name,
                              const fs::path& base_dir, const std::vector<std::string>& overrides) {
  Loader loader;
  loader.load_text(yaml_text, display_name, base_dir);
  for (const auto& o : overrides) apply_override(loader.result.config, o, &loader.result.notes);
  round_imgsz_to_stride(loader.result);
  resolve_config_task(loader.result);
  return loader.result;
}

}  // namespace trainer::core
