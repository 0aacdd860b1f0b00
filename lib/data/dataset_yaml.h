// The Ultralytics dataset yaml: where the images are and what the classes are called.
//
// Why: the config names a dataset by one file (`data: coco8.yaml`); everything that reads images or
// labels starts from the resolved, checked form here, so path rules live in one place.
// Rules: `path` is the dataset root, relative to the yaml's folder (or absolute); `${VAR}` and
// `${VAR:-default}` expand from the environment (so configs can point at ../shared/data or a
// mounted COCO); `train`/`val`/`test` are folders, .txt image lists, or lists of those, relative to
// the root; `names` is a list or an {id: name} map with ids 0..nc-1; `kpt_shape` is optional.
// COCO json labels (our addition; the reference converts json to txt first): `train_json`,
// `val_json`, `test_json` name an `instances_*.json` (relative to the root) whose `file_name`s are
// relative to that split's image folder, e.g.
//   path: demo
//   train: images/train
//   train_json: annotations/instances_train.json
// A split with a json reads its labels only from the json (no .txt files needed).
#pragma once

#include <array>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace trainer::data {

struct DatasetSpec {
  std::filesystem::path yaml_file;
  std::filesystem::path root;
  std::vector<std::filesystem::path> train;
  std::vector<std::filesystem::path> val;
  std::vector<std::filesystem::path> test;
  std::optional<std::filesystem::path> train_json;  // COCO annotations for the split, if any
  std::optional<std::filesystem::path> val_json;
  std::optional<std::filesystem::path> test_json;
  std::vector<std::string> names;  // index = class id
  std::optional<std::array<int, 2>> kpt_shape;
  std::vector<int> flip_idx;
  std::vector<double> kpt_oks_sigmas;  // per keypoint (OKS in the loss, assigner and metric);
                                       // empty: COCO's for kpt_shape [17, 3], else 1/K

  int nc() const { return static_cast<int>(names.size()); }
};

// Loads and checks `file`. With `check_paths`, every split path must exist. Throws
// core::ConfigError naming the file, line and key.
DatasetSpec load_dataset_yaml(const std::filesystem::path& file, bool check_paths = true);

// How many times load_dataset_yaml ran in this process (tests count a fit's reads: one).
int64_t dataset_yaml_loads();

// Expands ${VAR} and ${VAR:-default} from the environment; an unset ${VAR} without a default is an
// error (std::runtime_error naming the variable).
std::string expand_env(const std::string& text);

}  // namespace trainer::data
