// The reference's training keys that shape a run (time, single_cls, classes, fraction, rect,
// multi_scale, dropout, save_json, cache): loaded with the reference's spellings and ranges,
// written back so args.yaml reloads equal, and the ones we refuse refused with the reason.
#include <doctest/doctest.h>

#include "core/config_loader.h"
#include "core/config_schema.h"
#include "core/config_writer.h"
#include "core/error.h"

using namespace trainer::core;

namespace {

TrainConfig load(const std::string& text) {
  return load_config_text(text, "t.yaml", "/tmp").config;
}

}  // namespace

TEST_CASE("reference keys: defaults as the reference's default.yaml, nulls mean the default") {
  const TrainConfig c;
  CHECK(c.schedule.time == 0.0);
  CHECK_FALSE(c.data.single_cls);
  CHECK(c.data.classes.empty());
  CHECK(c.data.fraction == 1.0);
  CHECK_FALSE(c.data.rect);
  CHECK(c.augment.multi_scale == 0.0);
  CHECK(c.model.dropout == 0.0);
  CHECK_FALSE(c.run.save_json);
  // A reference args.yaml writes these as null / false.
  const auto r = load(
      "time: null\nclasses: null\nsingle_cls: false\nrect: false\nfraction: 1.0\n"
      "multi_scale: 0.0\ndropout: 0.0\nsave_json: false\ncache: false\n");
  CHECK(r == TrainConfig{});
  // None of them is a reference-only key any more: each is used.
  for (const char* key : {"time", "single_cls", "classes", "fraction", "rect", "multi_scale",
                          "dropout", "save_json"}) {
    CAPTURE(key);
    CHECK_FALSE(is_reference_only_key(key));
    CHECK(find_field(key) != nullptr);
  }
}

TEST_CASE("reference keys: values and ranges") {
  const auto c = load(
      "time: 0.25\nsingle_cls: true\nclasses: [0, 2]\nfraction: 0.5\nrect: true\n"
      "multi_scale: 0.25\nsave_json: true\n");
  CHECK(c.schedule.time == 0.25);
  CHECK(c.data.single_cls);
  CHECK(c.data.classes == "[0, 2]");
  CHECK(c.data.fraction == 0.5);
  CHECK(c.data.rect);
  CHECK(c.augment.multi_scale == 0.25);
  CHECK(c.run.save_json);
  CHECK(load("classes: 3\n").data.classes == "3");
  CHECK(load("fraction: 20\n").data.fraction == 20.0);  // an image count
  CHECK_THROWS_AS(load("fraction: 0\n"), ConfigError);
  CHECK_THROWS_AS(load("time: -1\n"), ConfigError);
  CHECK_THROWS_AS(load("multi_scale: 1.0\n"), ConfigError);  // the smallest size would be 0
  CHECK_THROWS_AS(load("classes: [a]\n"), ConfigError);
  CHECK_THROWS_AS(load("dropout: 1.0\n"), ConfigError);
}

TEST_CASE("multi_scale: the bool of older reference versions means 0 or +-50%") {
  CHECK(load("multi_scale: false\n").augment.multi_scale == 0.0);
  CHECK(load("multi_scale: true\n").augment.multi_scale == 0.5);
  CHECK(load_config_text("", "t.yaml", ".", {"multi_scale=True"}).config.augment.multi_scale ==
        0.5);
}

TEST_CASE("cache: none, ram (true) or disk, with a RAM budget and a disk folder") {
  CHECK(load("cache: disk\n").data.cache == CacheMode::kDisk);
  CHECK(load("cache: ram\n").data.cache == CacheMode::kRam);
  CHECK(load("cache: true\n").data.cache == CacheMode::kRam);
  CHECK(load("cache: false\n").data.cache == CacheMode::kNone);
  CHECK_THROWS_AS(load("cache: tape\n"), ConfigError);
  const auto c = load("cache: ram\ncache_gb: 12.5\ncache_dir: /tmp/x\n");
  CHECK(c.data.cache_gb == 12.5);
  CHECK(c.data.cache_dir == "/tmp/x");
  CHECK(load("{}\n").data.cache_gb == 0.0);  // auto
  CHECK_THROWS_WITH_AS(load("cache_gb: -1\n"), doctest::Contains("cache_gb"), ConfigError);
  CHECK(load(config_to_yaml(c)) == c);
}

TEST_CASE("reference keys round-trip through args.yaml") {
  const auto c = load(
      "time: 1.5\nsingle_cls: true\nclasses: [1, 4]\nfraction: 0.3\nrect: true\n"
      "multi_scale: 0.5\nsave_json: true\n");
  CHECK(load(config_to_yaml(c)) == c);
}
