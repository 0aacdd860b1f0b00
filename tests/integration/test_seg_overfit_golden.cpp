// The segmentation overfit golden `train_mask_ap`: a fixed config on coco8's train images with
// their coco128 polygons reaches the stored mask mAP50-95 band.
//
// Why: the unit and parity tests check the segment head, loss, assigner, rasterisation and mask
// metric one by one; this checks that together they make a model that learns masks (prototypes
// at the wrong scale, masks out of step with their label rows, a crop in the wrong units or a
// mask loss that does not reach the head all drop the mask metric to about 0).
#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <fstream>

#include "coco8_seg_subset.h"
#include "core/config_loader.h"
#include "engine/trainer.h"
#include "test_support.h"

using namespace trainer;

TEST_CASE("fit: the coco8 segmentation overfit recipe reaches its golden mask mAP band") {
  TRAINER_SKIP_IF_NO_SHARED_DATA(coco128, "coco128");
  const std::filesystem::path root = TRAINER_SOURCE_DIR;
  std::ifstream golden_file(root / "tests/goldens/coco8_seg_overfit.json");
  REQUIRE(golden_file.good());
  const auto golden = nlohmann::json::parse(golden_file);

  test::TempDir dir;
  const auto yaml = test::write_coco8_seg_subset(*coco128, dir / "coco8_seg");
  auto loaded = core::load_config(
      root / golden["config"].get<std::string>(),
      {"data=" + yaml.string(), "project=" + dir.path().string(), "name=seg_overfit"});
  REQUIRE(loaded.config.schedule.epochs == golden["epochs"].get<int>());
  const auto result = engine::fit(loaded.config);
  REQUIRE(result.last_validation);
  const auto& val = *result.last_validation;
  REQUIRE(val.second_metric);
  CHECK(val.second_name == "mask");  // the summary line's names
  CHECK(val.second_coco_name == "mask");
  const double mask_map = val.second_metric->map50_95;
  const double box_map = val.metric.map50_95;
  const auto mask_band = golden["band"]["mask_map50_95"];
  const auto box_band = golden["band"]["box_map50_95"];
  MESSAGE("mask mAP50-95 " << mask_map << " (band " << mask_band.dump() << "), box mAP50-95 "
                           << box_map << " (band " << box_band.dump() << ")");
  CHECK(mask_map >= mask_band[0].get<double>());
  CHECK(mask_map <= mask_band[1].get<double>());
  CHECK(box_map >= box_band[0].get<double>());
  CHECK(box_map <= box_band[1].get<double>());
}
