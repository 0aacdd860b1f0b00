// What val and predict take from the weights' run: data, imgsz and single_cls, each only where
// the user did not set it, with the list of what was taken; a reference checkpoint's train_args.
#include <doctest/doctest.h>

#include "engine/checkpoint/recorded_arguments.h"
#include "test_support.h"

using namespace trainer;

TEST_CASE("recorded arguments: taken where not given, in a fixed order, and only when different") {
  trainer::test::TempDir dir;
  trainer::test::write_text(dir / "d.yaml", "names: [a]\n");
  engine::WeightsSource source;
  source.architecture_source = dir / "args.yaml";
  core::TrainConfig run;
  run.data.data = (dir / "d.yaml").string();
  run.data.imgsz = 64;
  run.data.single_cls = true;
  source.run_config = run;
  const engine::RecordedArguments recorded = engine::recorded_arguments(source);
  CHECK(recorded.data == (dir / "d.yaml").string());
  CHECK(recorded.imgsz == 64);
  CHECK(recorded.single_cls == true);
  CHECK(recorded.source == (dir / "args.yaml").string());

  core::TrainConfig config;
  CHECK(
      engine::adopt_recorded_arguments(recorded, {}, config) ==
      std::vector<std::string>{"data=" + (dir / "d.yaml").string(), "imgsz=64", "single_cls=true"});
  CHECK(config.data.imgsz == 64);
  // Given on the command line (or in the config file): kept.
  core::TrainConfig mine;
  mine.data.imgsz = 320;
  mine.data.data = "mine.yaml";
  CHECK(engine::adopt_recorded_arguments(recorded, {"imgsz", "data", "single_cls"}, mine).empty());
  CHECK(mine.data.imgsz == 320);
  CHECK(mine.data.data == "mine.yaml");
  // Equal values are not reported as taken.
  core::TrainConfig same = config;
  CHECK(engine::adopt_recorded_arguments(recorded, {}, same).empty());
}

TEST_CASE(
    "recorded arguments: a dataset yaml that is gone is not taken; nothing from plain weights") {
  engine::WeightsSource source;
  core::TrainConfig run;
  run.data.data = "/surely/not/here/d.yaml";
  source.run_config = run;
  CHECK(engine::recorded_arguments(source).data.empty());
  CHECK(engine::recorded_arguments(source).imgsz == 640);
  const engine::RecordedArguments none = engine::recorded_arguments(engine::WeightsSource{});
  CHECK(none.data.empty());
  CHECK_FALSE(none.imgsz);
  CHECK_FALSE(none.single_cls);
}

TEST_CASE("recorded arguments: a reference checkpoint's train_args") {
  trainer::test::TempDir dir;
  trainer::test::write_text(dir / "coco8.yaml", "names: [a]\n");
  engine::WeightsSource source;
  source.reference = model::ReferenceInfo{};
  source.reference->train_args_yaml =
      "{data: " + (dir / "coco8.yaml").string() + ", imgsz: 320, single_cls: false}";
  const engine::RecordedArguments recorded = engine::recorded_arguments(source);
  CHECK(recorded.data == (dir / "coco8.yaml").string());
  CHECK(recorded.imgsz == 320);
  CHECK(recorded.single_cls == false);
  // Written on another machine: the data path is not a file here, the size still counts.
  source.reference->train_args_yaml = "{data: /their/machine/coco.yaml, imgsz: 1280}";
  CHECK(engine::recorded_arguments(source).data.empty());
  CHECK(engine::recorded_arguments(source).imgsz == 1280);
  source.reference->train_args_yaml = "{imgsz: [not, a, size]";  // malformed: nothing taken
  CHECK_FALSE(engine::recorded_arguments(source).imgsz);
}
