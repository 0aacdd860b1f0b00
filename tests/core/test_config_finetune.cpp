// The fine-tuning keys: `pretrained` (true, false or a path) and `freeze` (N or a list), loaded,
// checked and written back so that args.yaml reloads to the same config.
#include <doctest/doctest.h>

#include "core/config_loader.h"
#include "core/config_writer.h"
#include "core/error.h"
#include "test_support.h"

using namespace trainer::core;

TEST_CASE("pretrained: true by default, false, or a path resolved like other paths") {
  CHECK(TrainConfig{}.model.pretrained == "true");
  CHECK(load_config_text("pretrained: False\n", "t.yaml", "/tmp").config.model.pretrained ==
        "false");
  CHECK(load_config_text("pretrained: True\n", "t.yaml", "/tmp").config.model.pretrained == "true");
  CHECK(load_config_text("pretrained: runs/a/weights/best.pt\n", "t.yaml", "/tmp")
            .config.model.pretrained == "/tmp/runs/a/weights/best.pt");
  CHECK(
      load_config_text("", "t.yaml", "/tmp", {"pretrained=/w/last.ckpt"}).config.model.pretrained ==
      "/w/last.ckpt");
}

TEST_CASE("freeze: an integer or a list of integers, anything else is an error") {
  CHECK(TrainConfig{}.model.freeze.empty());
  CHECK(load_config_text("freeze: 10\n", "t.yaml", ".").config.model.freeze == "10");
  CHECK(load_config_text("freeze: [0,3, 5]\n", "t.yaml", ".").config.model.freeze == "[0, 3, 5]");
  CHECK(load_config_text("freeze: null\n", "t.yaml", ".").config.model.freeze.empty());
  CHECK(load_config_text("", "t.yaml", ".", {"freeze=[1,2]"}).config.model.freeze == "[1, 2]");
  CHECK_THROWS_AS(load_config_text("freeze: abc\n", "t.yaml", "."), ConfigError);
  CHECK_THROWS_AS(load_config_text("freeze: -1\n", "t.yaml", "."), ConfigError);
  CHECK_THROWS_AS(load_config_text("freeze: [0, x]\n", "t.yaml", "."), ConfigError);
}

TEST_CASE("pretrained and freeze are written as YAML the reference reads, and reload equal") {
  for (const std::string text :
       {"freeze: [0, 2]\npretrained: false\n", "freeze: 3\n", "pretrained: /w/best.pt\n", ""}) {
    CAPTURE(text);
    const auto loaded = load_config_text(text, "t.yaml", "/tmp").config;
    const std::string yaml = config_to_yaml(loaded);
    CHECK(load_config_text(yaml, "args.yaml", "/tmp").config == loaded);
  }
  const std::string yaml = config_to_yaml(
      load_config_text("freeze: [0, 2]\npretrained: true\n", "t.yaml", "/tmp").config);
  CHECK(yaml.find("freeze: [0, 2]\n") != std::string::npos);
  CHECK(yaml.find("pretrained: true\n") != std::string::npos);
  CHECK(yaml.find("freeze: null\n") == std::string::npos);
}
