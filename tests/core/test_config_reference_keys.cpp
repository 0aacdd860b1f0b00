// The reference's training keys that shape a run (time, single_cls, classes, fraction, rect,
// multi_scale, dropout, save_json, cache): loaded with the reference's spellings and ranges,
// written back so args.yaml reloads equal, and the ones we refuse refused with the reason. Also
// cls_remap, and the exact list of reference keys accepted and not used.
#include <doctest/doctest.h>

#include <set>
#include <string>

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

TEST_CASE("reference keys accepted and not used: exactly this list") {
  // A key added here, or one that gains a meaning, changes this list on purpose; a reference
  // version with new keys fails tests/parity/test_reference_args.cpp, naming the key.
  const std::set<std::string> expected = {
      "agnostic_nms",  "augment",   "auto_augment", "bgr",
      "cfg",           "cls_pw",    "compile",      "crop_fraction",
      "cutmix",        "dgrad",     "dis",          "distill_model",
      "dlam",          "dlog",      "dnn",          "dynamic",
      "embed",         "end2end",   "erasing",      "format",
      "half",          "int8",      "keras",        "label_smoothing",
      "line_width",    "mode",      "opset",        "optimize",
      "profile",       "quantize",  "retina_masks", "save",
      "save_conf",     "save_crop", "save_dir",     "save_frames",
      "save_txt",      "show",      "show_boxes",   "show_conf",
      "show_labels",   "simplify",  "source",       "split",
      "stream_buffer", "tracker",   "verbose",      "vid_stride",
      "visualize",     "workspace",
  };
  std::set<std::string> actual;
  for (auto key : reference_only_keys()) actual.emplace(key);
  for (const auto& key : actual) {
    CAPTURE(key);
    CHECK_MESSAGE(expected.count(key) == 1, "accepted and not used, but not in the list");
    CHECK(is_reference_only_key(key));
    CHECK(find_field(key) == nullptr);
  }
  for (const auto& key : expected) {
    CAPTURE(key);
    CHECK_MESSAGE(actual.count(key) == 1, "in the list, but not accepted as a reference key");
  }
  // Each one loads, whatever its value, and is reported as a note naming it.
  const auto loaded = load_config_text("quantize: 8\ndis: 6.0\ndlog: 1.0\n", "t.yaml", "/tmp");
  CHECK(loaded.config == TrainConfig{});
  REQUIRE(loaded.notes.size() == 3);
  CHECK(loaded.notes[0].message == "reference key 'quantize' is accepted and not used");
  CHECK(loaded.notes[0].where.describe() == "t.yaml:1");
}

TEST_CASE("cls_remap: a bool of the model section, true by default as in 8.4.190") {
  CHECK(TrainConfig{}.model.cls_remap);
  CHECK_FALSE(is_reference_only_key("cls_remap"));
  const FieldSpec* f = find_field("cls_remap");
  REQUIRE(f != nullptr);
  CHECK(f->section == "model");
  CHECK(f->type == FieldType::kBool);
  const auto c = load("cls_remap: false\n");
  CHECK_FALSE(c.model.cls_remap);
  CHECK(load(config_to_yaml(c)) == c);
  CHECK(load("cls_remap: true\n") == TrainConfig{});
  CHECK_THROWS_WITH_AS(load("cls_remap: 3\n"), doctest::Contains("cls_remap"), ConfigError);
}
