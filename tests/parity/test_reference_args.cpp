// Every args.yaml the reference writes loads: the installed reference's own cfg/default.yaml (found
// by asking the oracle's python, never a copy) and the args.yaml of a real 1-epoch reference
// training run both load with our loader, each key used or listed as a note that names it. A
// reference version that adds a key fails here with the key named.
#include <doctest/doctest.h>

#include <regex>
#include <set>
#include <sstream>
#include <string>

#include "core/config_loader.h"
#include "core/config_schema.h"
#include "core/config_writer.h"
#include "parity_oracle.h"
#include "test_support.h"

using namespace trainer;
namespace fs = std::filesystem;

namespace {

// The top-level keys of a flat YAML file, in order (the reference writes one `key: value` a line).
std::vector<std::string> top_level_keys(const fs::path& file) {
  std::vector<std::string> keys;
  std::istringstream in(test::read_text(file));
  const std::regex key(R"(^([A-Za-z_][A-Za-z0-9_]*):)");
  std::smatch m;
  for (std::string line; std::getline(in, line);) {
    if (std::regex_search(line, m, key)) keys.push_back(m[1]);
  }
  return keys;
}

// Loads `file`: every key is ours or a reference-only key, and each reference-only key is a note.
core::LoadedConfig load_every_key(const fs::path& file) {
  const auto keys = top_level_keys(file);
  REQUIRE(keys.size() > 100);
  for (const auto& key : keys) {
    CAPTURE(key);
    CHECK_MESSAGE((core::find_field(key) != nullptr || core::is_reference_only_key(key)),
                  "a reference key trainer does not accept");
  }
  const core::LoadedConfig loaded = core::load_config(file);
  std::set<std::string> noted;
  for (const auto& note : loaded.notes) noted.insert(note.message);
  for (const auto& key : keys) {
    if (!core::is_reference_only_key(key)) continue;
    CAPTURE(key);
    CHECK(noted.count("reference key '" + key + "' is accepted and not used") == 1);
  }
  return loaded;
}

}  // namespace

TEST_CASE("reference args: the installed cfg/default.yaml loads, every key used or noted") {
  TRAINER_REQUIRE_ORACLE(python);
  const std::string out = test::run_oracle(*python, "default_cfg");
  std::smatch m;
  REQUIRE(std::regex_search(out, m, std::regex(R"(default_cfg: (\S+))")));
  const fs::path default_cfg = m[1].str();
  CAPTURE(default_cfg);
  REQUIRE(fs::is_regular_file(default_cfg));
  const auto loaded = load_every_key(default_cfg);
  // Its values are our defaults where we share the key (model and data are null there).
  core::TrainConfig expected;
  expected.run.task = core::Task::kDetect;
  CHECK(loaded.config == expected);
  CHECK(loaded.config.model.cls_remap);
}

TEST_CASE("reference args: the args.yaml of a reference training run loads and round-trips") {
  TRAINER_REQUIRE_ORACLE(python);
  TRAINER_REQUIRE_SHARED_DATA(coco8, "coco8");
  test::TempDir dir;
  const auto data = test::reference_data_yaml(dir.path(), "coco8.yaml", *coco8);
  // 2 of coco8's 4 training images at 32 px, 1 epoch: the reference writes args.yaml at the start.
  test::run_oracle(*python, "train_args '" + (dir / "ref").string() + "' '" + data.string() +
                                "' fraction=0.5 cls_remap=False");
  const fs::path args = dir / "ref" / "train" / "args.yaml";
  REQUIRE(fs::is_regular_file(args));
  const auto loaded = load_every_key(args);
  const core::TrainConfig& c = loaded.config;
  CHECK(c.data.data == data.string());
  // Stored absolute like any model path; no such file there means the built-in yolo26n.
  CHECK(fs::path(c.model.model).filename() == "yolo26n.yaml");
  CHECK(c.schedule.epochs == 1);
  CHECK(c.data.imgsz == 32);
  CHECK(c.data.batch == 2);
  CHECK(c.data.workers == 0);
  CHECK(c.data.fraction == 0.5);
  CHECK_FALSE(c.model.cls_remap);
  CHECK_FALSE(c.run.val);
  CHECK_FALSE(c.run.plots);
  CHECK(c.run.device == "cpu");
  CHECK(c.run.project == (dir / "ref").string());
  CHECK(c.run.name == "train");
  CHECK(c.run.precision == core::Precision::kFP32);  // amp: false
  // What we write back for it loads to the same config.
  CHECK(core::load_config_text(core::config_to_yaml(c), "args.yaml", dir.path()).config == c);
}
