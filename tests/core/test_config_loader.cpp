// Loading: files, base inheritance, overrides, null, path resolution, the reference's args.yaml.
#include <doctest/doctest.h>

#include "core/config_loader.h"
#include "test_support.h"

using namespace trainer::core;
using trainer::test::TempDir;
using trainer::test::write_text;

TEST_CASE("a config file sets keys and leaves the rest at their defaults") {
  TempDir dir;
  write_text(dir / "a.yaml", "epochs: 3\nlr0: 0.02\ncos_lr: true\noptimizer: musgd\n");
  const auto loaded = load_config(dir / "a.yaml");
  CHECK(loaded.config.schedule.epochs == 3);
  CHECK(loaded.config.optim.lr0 == 0.02);
  CHECK(loaded.config.schedule.cos_lr);
  CHECK(loaded.config.optim.optimizer == "MuSGD");  // case-insensitive choice, canonical spelling
  CHECK(loaded.config.optim.momentum == 0.937);
}

TEST_CASE("key=value overrides come after the file, parsed as YAML scalars and lists") {
  TempDir dir;
  write_text(dir / "a.yaml", "epochs: 3\nbatch: 8\n");
  const auto loaded = load_config(
      dir / "a.yaml", {"epochs=5", "name=exp", "ns_coefficients=[1, -2, 0.5]", "device=0"});
  CHECK(loaded.config.schedule.epochs == 5);
  CHECK(loaded.config.data.batch == 8);
  CHECK(loaded.config.run.name == "exp");
  CHECK(loaded.config.optim.ns_coefficients == std::vector<double>{1, -2, 0.5});
  CHECK(loaded.config.run.device == "0");
}

TEST_CASE("a config extends its base, the child wins, chains resolve relative to each file") {
  TempDir dir;
  write_text(dir / "bases/root.yaml", "epochs: 10\nbatch: 4\nimgsz: 320\n");
  write_text(dir / "bases/mid.yaml", "base: root.yaml\nbatch: 8\n");
  write_text(dir / "child.yaml", "base: bases/mid.yaml\nimgsz: 416\n");
  const auto loaded = load_config(dir / "child.yaml", {"epochs=2"});
  CHECK(loaded.config.schedule.epochs == 2);
  CHECK(loaded.config.data.batch == 8);
  CHECK(loaded.config.data.imgsz == 416);
  REQUIRE(loaded.files.size() == 3);
  CHECK(loaded.files[0].filename() == "root.yaml");
  CHECK(loaded.files[2].filename() == "child.yaml");
}

TEST_CASE("null means the default value") {
  const auto loaded = load_config_text("name: null\nproject: ~\nepochs:\n", "t.yaml", ".");
  CHECK(loaded.config.run.name == "train");
  CHECK(loaded.config.run.project.empty());
  CHECK(loaded.config.schedule.epochs == 100);
}

TEST_CASE("paths in a file are relative to that file and stored absolute") {
  TempDir dir;
  write_text(dir / "configs/run.yaml", "data: data/set.yaml\nmodel: models/m.yaml\n");
  const auto loaded = load_config(dir / "configs/run.yaml");
  CHECK(loaded.config.data.data == (dir.path() / "configs/data/set.yaml").string());
  CHECK(loaded.config.model.model == (dir.path() / "configs/models/m.yaml").string());
  const auto named = load_config_text("model: yolo11s\n", "t.yaml", dir.path());
  CHECK(named.config.model.model == "yolo11s");  // a built-in name is not a path
}

TEST_CASE("an Ultralytics args.yaml loads: reference keys are accepted and noted, amp maps") {
  const std::string args =
      "task: detect\nmode: train\nmodel: yolo26n.yaml\ndata: coco8.yaml\nepochs: 3\ntime: null\n"
      "patience: 100\nbatch: 16\nimgsz: 640\nsave: true\nsave_period: -1\ncache: false\n"
      "device: null\nworkers: 8\nproject: null\nname: train\nexist_ok: false\npretrained: true\n"
      "optimizer: auto\nverbose: true\nseed: 0\ndeterministic: true\nsingle_cls: false\n"
      "rect: false\ncos_lr: false\nclose_mosaic: 10\nresume: false\namp: true\nfraction: 1.0\n"
      "conf: null\niou: 0.7\nmax_det: 300\nlr0: 0.01\nlrf: 0.01\nmomentum: 0.937\n"
      "weight_decay: 0.0005\nwarmup_epochs: 3.0\nwarmup_momentum: 0.8\nwarmup_bias_lr: 0.1\n"
      "box: 7.5\ncls: 0.5\ndfl: 1.5\nnbs: 64\nhsv_h: 0.015\nhsv_s: 0.7\nhsv_v: 0.4\n"
      "degrees: 0.0\ntranslate: 0.1\nscale: 0.5\nshear: 0.0\nperspective: 0.0\nflipud: 0.0\n"
      "fliplr: 0.5\nbgr: 0.0\nmosaic: 1.0\nmixup: 0.0\ncutmix: 0.0\ncopy_paste: 0.0\n"
      "copy_paste_mode: flip\nauto_augment: randaugment\nerasing: 0.4\ncfg: null\n"
      "tracker: botsort.yaml\nsave_dir: runs/detect/train\n";
  const auto loaded = load_config_text(args, "args.yaml", "/tmp");
  CHECK(loaded.config == [] {
    TrainConfig expected;
    expected.model.model = "/tmp/yolo26n.yaml";
    expected.data.data = "/tmp/coco8.yaml";
    expected.schedule.epochs = 3;
    return expected;
  }());
  // mode, save, verbose, bgr, cutmix, auto_augment, erasing, cfg, tracker, save_dir (time,
  // single_cls, rect, fraction, pretrained, copy_paste, copy_paste_mode are used keys now).
  CHECK(loaded.notes.size() == 10);
  CHECK(loaded.config.run.precision == Precision::kAuto);  // amp: true
  const auto fp32 = load_config_text("amp: false\n", "args.yaml", "/tmp");
  CHECK(fp32.config.run.precision == Precision::kFP32);
  const auto ram = load_config_text("cache: true\n", "args.yaml", "/tmp");
  CHECK(ram.config.data.cache == CacheMode::kRam);
}

TEST_CASE("an empty file is an empty config") {
  TempDir dir;
  write_text(dir / "empty.yaml", "");
  CHECK(load_config(dir / "empty.yaml").config == TrainConfig{});
}

TEST_CASE("every config shipped in configs/ loads") {
  int count = 0;
  for (const auto& entry : std::filesystem::directory_iterator(TRAINER_SOURCE_DIR "/configs")) {
    if (entry.path().extension() != ".yaml") continue;
    INFO(entry.path().string());
    CHECK_NOTHROW(load_config(entry.path()));
    ++count;
  }
  CHECK(count >= 3);
}

TEST_CASE(
    "imgsz not a multiple of the stride 32 is rounded up, with a note (the reference's rule)") {
  const auto loaded = load_config(std::filesystem::path{}, {"imgsz=100"});
  CHECK(loaded.config.data.imgsz == 128);
  REQUIRE(loaded.notes.size() == 1);
  CHECK(loaded.notes[0].message == "imgsz 100 is not a multiple of the stride 32; using 128");
  CHECK(load_config(std::filesystem::path{}, {"imgsz=640"}).config.data.imgsz == 640);
  CHECK(load_config(std::filesystem::path{}, {"imgsz=641"}).config.data.imgsz == 672);
  CHECK(load_config(std::filesystem::path{}, {"imgsz=640"}).notes.empty());
}

TEST_CASE("the pose loss gains: reference defaults 12, 1, 1 and settable") {
  const auto defaults = load_config("", {}).config.loss;
  CHECK(defaults.pose == 12.0);
  CHECK(defaults.kobj == 1.0);
  CHECK(defaults.rle == 1.0);
  const auto set = load_config("", {"pose=6", "kobj=0.5", "rle=0"}).config.loss;
  CHECK(set.pose == 6.0);
  CHECK(set.kobj == 0.5);
  CHECK(set.rle == 0.0);
}

TEST_CASE("the OBB angle loss gain: reference default 1, settable, range-checked") {
  CHECK(load_config("", {}).config.loss.angle == 1.0);
  CHECK(load_config("", {"angle=2.5"}).config.loss.angle == 2.5);
  CHECK_THROWS_AS(load_config("", {"angle=-1"}), trainer::core::ConfigError);
}
