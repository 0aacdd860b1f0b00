// The pose overfit golden `train_oks_ap`: a fixed config on coco8-pose's train images reaches the
// stored keypoint mAP50-95 band (the reference system's own gate for pose, floor about 0.30).
//
// Why: the unit and parity tests check the pose head, decode, loss and metric one by one; this
// checks that together they make a model that learns keypoints (a decode off by a stride, a
// keypoint loss that does not reach the head, or OKS scored in the wrong space all drop it to ~0).
#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <cstdlib>
#include <fstream>

#include "core/config_loader.h"
#include "engine/trainer.h"
#include "test_support.h"

using namespace trainer;

TEST_CASE("fit: the coco8-pose overfit recipe reaches its golden keypoint mAP band") {
  TRAINER_SKIP_IF_NO_SHARED_DATA(coco8_pose, "coco8-pose");
  ::setenv("TRAINER_SHARED_DATA", coco8_pose->parent_path().c_str(), 1);

  const std::filesystem::path root = TRAINER_SOURCE_DIR;
  std::ifstream golden_file(root / "tests/goldens/coco8_pose_overfit.json");
  REQUIRE(golden_file.good());
  const auto golden = nlohmann::json::parse(golden_file);

  test::TempDir dir;
  auto loaded = core::load_config(root / golden["config"].get<std::string>(),
                                  {"project=" + dir.path().string(), "name=pose_overfit"});
  REQUIRE(loaded.config.schedule.epochs == golden["epochs"].get<int>());
  const auto result = engine::fit(loaded.config);
  REQUIRE(result.last_validation);
  const auto& val = *result.last_validation;
  REQUIRE(val.second_metric);
  CHECK(val.second_name == "pose");  // the summary line's names
  CHECK(val.second_coco_name == "keypoint");
  const double pose_map = val.second_metric->map50_95;
  const double box_map = val.metric.map50_95;
  const auto pose_band = golden["band"]["pose_map50_95"];
  const auto box_band = golden["band"]["box_map50_95"];
  MESSAGE("pose mAP50-95 " << pose_map << " (band " << pose_band.dump() << "), box mAP50-95 "
                           << box_map << " (band " << box_band.dump() << ")");
  CHECK(pose_map >= pose_band[0].get<double>());
  CHECK(pose_map <= pose_band[1].get<double>());
  CHECK(box_map >= box_band[0].get<double>());
  CHECK(box_map <= box_band[1].get<double>());
}
