// The overfit golden: a fixed config on coco8's train images reaches the stored mAP50-95 band.
//
// Why: unit tests check each rule; this checks that they add up to a detector that learns. It
// catches the failures a unit test cannot see (a head trained but not the one decoded, EMA or
// BatchNorm state not carried to validation, a box decode off by a stride).
#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "core/config_loader.h"
#include "engine/trainer.h"
#include "test_support.h"

using namespace trainer;

namespace {

// The recipe with `overrides` reaches the golden's bands (mAP50-95 and COCO AP) under `band_key`.
void check_golden_band(const std::filesystem::path& coco8, const std::string& band_key,
                       const std::vector<std::string>& extra_overrides) {
  // The dataset yaml reads ${TRAINER_SHARED_DATA}; point it at the folder the test found.
  ::setenv("TRAINER_SHARED_DATA", coco8.parent_path().c_str(), 1);

  const std::filesystem::path root = TRAINER_SOURCE_DIR;
  std::ifstream golden_file(root / "tests/goldens/coco8_overfit.json");
  REQUIRE(golden_file.good());
  const auto golden = nlohmann::json::parse(golden_file);

  test::TempDir dir;
  std::vector<std::string> overrides = {"project=" + dir.path().string(), "name=overfit"};
  overrides.insert(overrides.end(), extra_overrides.begin(), extra_overrides.end());
  auto loaded = core::load_config(root / golden["config"].get<std::string>(), overrides);
  REQUIRE(loaded.config.schedule.epochs == golden["epochs"].get<int>());
  const auto result = engine::fit(loaded.config);
  REQUIRE(result.last_validation);
  const auto& val = *result.last_validation;
  REQUIRE(val.coco);
  const double map = val.metric.map50_95;
  const double coco_ap = val.coco->stats[0];
  REQUIRE(golden.contains(band_key));
  const auto band = golden[band_key]["map50_95"];
  const auto coco_band = golden[band_key]["coco_ap"];
  MESSAGE("mAP50-95 " << map << " (band " << band.dump() << "), COCO AP " << coco_ap << " (band "
                      << coco_band.dump() << ")");
  CHECK(map >= band[0].get<double>());
  CHECK(map <= band[1].get<double>());
  CHECK(coco_ap >= coco_band[0].get<double>());
  CHECK(coco_ap <= coco_band[1].get<double>());
}

}  // namespace

TEST_CASE("fit: the coco8 overfit recipe reaches its golden mAP band") {
  TRAINER_SKIP_IF_NO_SHARED_DATA(coco8, "coco8");
  check_golden_band(*coco8, "band", {});
}

// Static shapes change how the step computes (padded targets, masked losses), not what it learns;
// the float sums run in another order, so one seed's end point is another draw from the same
// spread: its own, wider band, measured over seeds (the golden's static_shapes_measured).
TEST_CASE("fit: the coco8 overfit recipe with static_shapes reaches its golden band") {
  TRAINER_SKIP_IF_NO_SHARED_DATA(coco8, "coco8");
  check_golden_band(*coco8, "static_shapes_band", {"static_shapes=true"});
}
