#include "data/dataset_yaml.h"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>
#include <atomic>
#include <cmath>

#include <cstdlib>
#include <map>
#include <stdexcept>
#include <utility>

#include "core/error.h"
#include "core/file_checks.h"
#include "core/yaml_document.h"

namespace fs = std::filesystem;
using trainer::core::ConfigError;
using trainer::core::SourceLocation;

namespace trainer::data {
namespace {

SourceLocation at(const YAML::Node& node, const fs::path& file) {
  return SourceLocation{file.string(), node.Mark().line >= 0 ? node.Mark().line + 1 : 0};
}

std::vector<fs::path> split_paths(const YAML::Node& node, const fs::path& root,
                                  const fs::path& file, const char* key, bool check) {
  std::vector<fs::path> paths;
  if (!node || node.IsNull()) return paths;
  std::vector<YAML::Node> items;
  if (node.IsScalar()) {
    items.push_back(node);
  } else if (node.IsSequence()) {
    for (const auto& item : node) items.push_back(item);
  } else {
    throw ConfigError(at(node, file),
                      std::string("'") + key + "' must be a path or a list of paths");
  }
  for (const auto& item : items) {
    if (!item.IsScalar()) {
      throw ConfigError(at(item, file), std::string("'") + key + "' entries must be paths");
    }
    fs::path p = expand_env(item.Scalar());
    if (p.is_relative()) p = root / p;
    p = p.lexically_normal();
    if (check && !fs::exists(p)) {
      throw ConfigError(at(item, file),
                        std::string("dataset '") + key + "' path not found: " + p.string());
    }
    paths.push_back(p);
  }
  return paths;
}

std::vector<std::string> parse_names(const YAML::Node& node, const fs::path& file) {
  std::vector<std::string> names;
  if (node.IsSequence()) {
    for (const auto& item : node) names.push_back(item.as<std::string>());
  } else if (node.IsMap()) {
    std::map<long, std::string> by_id;
    for (const auto& entry : node) {
      long id = -1;
      try {
        id = entry.first.as<long>();
      } catch (const YAML::Exception&) {
        throw ConfigError(at(entry.first, file), "'names' keys must be class ids 0..nc-1");
      }
      by_id[id] = entry.second.as<std::string>();
    }
    long expected = 0;
    for (const auto& [id, name] : by_id) {
      if (id != expected++) {
        throw ConfigError(at(node, file), "'names' ids must be 0..nc-1 without gaps; missing id " +
                                              std::to_string(expected - 1));
      }
      names.push_back(name);
    }
  } else {
    throw ConfigError(at(node, file), "'names' must be a list or an {id: name} mapping");
  }
  if (names.empty()) throw ConfigError(at(node, file), "'names' is empty");
  return names;
}

}  // namespace

std::string expand_env(const std::string& text) {
  std::string out;
  size_t i = 0;
  while (i < text.size()) {
    if (text.compare(i, 2, "${") != 0) {
      out += text[i++];
      continue;
    }
    const size_t close = text.find('}', i);
    if (close == std::string::npos) throw std::runtime_error("unterminated ${ in '" + text + "'");
    const std::string inner = text.substr(i + 2, close - i - 2);
    const size_t dash = inner.find(":-");
    const std::string name = inner.substr(0, dash);
    const char* value = std::getenv(name.c_str());
    if (value != nullptr && *value != '\0') {
      out += value;
    } else if (dash != std::string::npos) {
      out += inner.substr(dash + 2);
    } else {
      throw std::runtime_error("environment variable " + name + " is not set (used in '" + text +
                               "')");
    }
    i = close + 1;
  }
  return out;
}

namespace {

DatasetSpec parse_dataset(const fs::path& file, bool check_paths) {
  core::require_file(file, "dataset yaml");
  const YAML::Node root = core::load_yaml_file(file);
  if (!root.IsMap()) {
    throw ConfigError(SourceLocation{file.string(), 1},
                      root.IsNull()
                          ? "the dataset yaml is empty (it needs path, train, val and names)"
                          : "a dataset yaml must be a mapping of key: value (path, train, "
                            "val, names)");
  }

  DatasetSpec spec;
  spec.yaml_file = fs::absolute(file).lexically_normal();
  const fs::path dir = spec.yaml_file.parent_path();
  try {
    fs::path base = root["path"] ? fs::path(expand_env(root["path"].as<std::string>())) : dir;
    spec.root = (base.is_relative() ? dir / base : base).lexically_normal();
  } catch (const std::runtime_error& e) {
    throw ConfigError(at(root["path"], file), e.what());
  }
  if (!root["names"]) throw ConfigError(SourceLocation{file.string(), 0}, "missing key 'names'");
  spec.names = parse_names(root["names"], file);
  if (root["nc"] && root["nc"].as<int>() != spec.nc()) {
    throw ConfigError(at(root["nc"], file), "'nc' is " + root["nc"].as<std::string>() +
                                                " but 'names' has " + std::to_string(spec.nc()));
  }
  if (!root["train"] && !root["val"]) {
    throw ConfigError(SourceLocation{file.string(), 0}, "missing keys 'train' and 'val'");
  }
  try {
    spec.train = split_paths(root["train"], spec.root, file, "train", check_paths);
    spec.val = split_paths(root["val"], spec.root, file, "val", check_paths);
    spec.test = split_paths(root["test"], spec.root, file, "test", check_paths);
  } catch (const ConfigError&) {
    throw;
  } catch (const std::runtime_error& e) {
    throw ConfigError(SourceLocation{file.string(), 0}, e.what());
  }
  for (const auto& [key, target] :
       {std::pair<const char*, std::optional<fs::path>*>{"train_json", &spec.train_json},
        {"val_json", &spec.val_json},
        {"test_json", &spec.test_json}}) {
    const YAML::Node node = root[key];
    if (!node || node.IsNull()) continue;
    std::vector<fs::path> paths;
    try {
      paths = split_paths(node, spec.root, file, key, check_paths);
    } catch (const ConfigError&) {
      throw;
    } catch (const std::runtime_error& e) {
      throw ConfigError(at(node, file), e.what());
    }
    if (paths.size() != 1) {
      throw ConfigError(at(node, file), std::string("'") + key + "' must be one json file");
    }
    *target = paths[0];
  }
  if (spec.train_json && spec.train.size() != 1) {
    throw ConfigError(at(root["train_json"], file),
                      "'train_json' needs 'train' to be one image folder");
  }
  if (spec.val_json && spec.val.size() != 1) {
    throw ConfigError(at(root["val_json"], file), "'val_json' needs 'val' to be one image folder");
  }
  if (spec.test_json && spec.test.size() != 1) {
    throw ConfigError(at(root["test_json"], file),
                      "'test_json' needs 'test' to be one image folder");
  }
  if (const YAML::Node kpt = root["kpt_shape"]) {
    if (!kpt.IsSequence() || kpt.size() != 2) {
      throw ConfigError(at(kpt, file), "'kpt_shape' must be [keypoints, dims]");
    }
    spec.kpt_shape = std::array<int, 2>{kpt[0].as<int>(), kpt[1].as<int>()};
    if ((*spec.kpt_shape)[0] < 1 || ((*spec.kpt_shape)[1] != 2 && (*spec.kpt_shape)[1] != 3)) {
      throw ConfigError(at(kpt, file),
                        "'kpt_shape' must be [keypoints >= 1, dims 2 (x y) or 3 (x y visibility)]");
    }
  }
  if (const YAML::Node flip = root["flip_idx"]) {
    spec.flip_idx = flip.as<std::vector<int>>();
    // A permutation of the keypoints: anything else would move points to the wrong body part.
    const int k = spec.kpt_shape ? (*spec.kpt_shape)[0] : 0;
    std::vector<bool> seen(static_cast<size_t>(k), false);
    bool permutation = static_cast<int>(spec.flip_idx.size()) == k;
    for (int i : spec.flip_idx) {
      permutation = permutation && i >= 0 && i < k && !seen[static_cast<size_t>(i)];
      if (permutation) seen[static_cast<size_t>(i)] = true;
    }
    if (!permutation) {
      throw ConfigError(at(flip, file),
                        fmt::format("'flip_idx' must be a permutation of 0..{} (one entry per "
                                    "keypoint of kpt_shape)",
                                    k - 1));
    }
  }
  if (const YAML::Node sigmas = root["kpt_oks_sigmas"]) {
    const int k = spec.kpt_shape ? (*spec.kpt_shape)[0] : 0;
    if (!sigmas.IsSequence() || static_cast<int>(sigmas.size()) != k) {
      throw ConfigError(at(sigmas, file),
                        fmt::format("'kpt_oks_sigmas' must list {} positive values (one per "
                                    "keypoint of kpt_shape)",
                                    k));
    }
    for (const auto& v : sigmas) {
      const double sigma = v.as<double>();
      if (!(sigma > 0) || !std::isfinite(sigma)) {
        throw ConfigError(at(v, file), "'kpt_oks_sigmas' values must be positive and finite");
      }
      spec.kpt_oks_sigmas.push_back(sigma);
    }
  }
  return spec;
}

}  // namespace

namespace {

std::atomic<int64_t> dataset_yaml_load_count{0};

// yaml-cpp's "bad conversion" knows only the line; the message names the key, what it expects and
// the value given.
ConfigError wrong_value_type(const fs::path& file, const YAML::Mark& mark) {
  const YAML::Node root = core::load_yaml_file(file);
  const std::string key = core::top_level_key_at_line(root, mark.line + 1);
  static const std::map<std::string, std::string> kExpected = {
      {"nc", "must be an integer (the number of classes)"},
      {"names", "must be class names: a list or an {id: name} mapping"},
      {"kpt_shape", "must be [keypoints, dims] of integers, e.g. 'kpt_shape: [17, 3]'"},
      {"flip_idx", "must be a list of keypoint indices (integers)"},
      {"kpt_oks_sigmas", "must be a list of positive numbers"},
      {"path", "must be a path"},
  };
  const auto it = kExpected.find(key);
  const std::string expected = it != kExpected.end() ? it->second : "has a value of the wrong type";
  const std::string got = core::scalar_at_mark(root, mark);
  return ConfigError(SourceLocation{file.string(), mark.line + 1},
                     fmt::format("'{}' {}{}", key.empty() ? "this value" : key, expected,
                                 got.empty() ? std::string() : fmt::format(", got '{}'", got)));
}

}  // namespace

int64_t dataset_yaml_loads() {
  return dataset_yaml_load_count.load();
}

DatasetSpec load_dataset_yaml(const fs::path& file, bool check_paths) {
  ++dataset_yaml_load_count;
  try {
    return parse_dataset(file, check_paths);
  } catch (const YAML::Exception& e) {  // a value of the wrong shape (a list where a name belongs)
    throw wrong_value_type(file, e.mark);
  }
}

}  // namespace trainer::data
