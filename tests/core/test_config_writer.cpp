// Writing: YAML that loads back to the same struct; the table marks changed values.
#include <doctest/doctest.h>

#include "core/config_loader.h"
#include "core/config_writer.h"
#include "test_support.h"

using namespace trainer::core;
using trainer::test::TempDir;

TEST_CASE("YAML round trip: load, write, load gives the same struct") {
  TempDir dir;
  TrainConfig c;
  c.schedule.epochs = 7;
  c.optim.lr0 = 0.0123456789;
  c.optim.optimizer = "AdamW";
  c.optim.ns_coefficients = {1.5, -0.1, 3.0};
  c.run.device = "0";      // numeric-looking string
  c.run.name = "exp: #1";  // needs quoting
  c.run.project = "";      // empty string
  c.data.data = "/data/coco.yaml";
  c.run.precision = Precision::kFP32;
  c.data.cache = CacheMode::kRam;
  c.augment.perspective = 0.0001;
  write_config_yaml(c, dir / "args.yaml");
  const auto loaded = load_config(dir / "args.yaml");
  CHECK(loaded.config == c);
  CHECK(loaded.notes.empty());
  CHECK_FALSE(std::filesystem::exists(dir / "args.yaml.tmp"));
  // And the defaults survive a round trip too.
  write_config_yaml(TrainConfig{}, dir / "defaults.yaml");
  CHECK(load_config(dir / "defaults.yaml").config == TrainConfig{});
}

TEST_CASE("the YAML text is plain where it can be") {
  const std::string yaml = config_to_yaml(TrainConfig{});
  CHECK(yaml.find("\nlr0: 0.01\n") != std::string::npos);
  CHECK(yaml.find("\noptimizer: auto\n") != std::string::npos);
  CHECK(yaml.find("\nns_coefficients: [3.4445, -4.775, 2.0315]\n") != std::string::npos);
  CHECK(yaml.find("\ndevice: \"\"\n") != std::string::npos);
  CHECK(yaml.find("\namp:") == std::string::npos);  // aliases are never written
}

TEST_CASE("the table is aligned and marks values changed from the default") {
  TrainConfig c;
  c.optim.lr0 = 0.02;
  const std::string table = config_table(c);
  // Keys padded to the longest (dist_join_timeout, 17 characters) plus 2.
  CHECK(table.find("  optim     lr0                0.02  *\n") != std::string::npos);
  CHECK(table.find("  optim     momentum           0.937\n") != std::string::npos);
}
