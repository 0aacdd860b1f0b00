// The overfit golden: a fixed CPU recipe on coco8's train images reaches a stored mAP50-95 band.
// The band and how it was measured: tests/goldens/coco8_overfit.md (values in
// tests/goldens/coco8_overfit.band: "min max").
#include <doctest/doctest.h>

#include <fstream>

#include "core/config_loader.h"
#include "engine/trainer.h"
#include "test_support.h"

using namespace trainer;

TEST_CASE("golden: coco8 overfit reaches its stored mAP50-95 band") {
  TRAINER_SKIP_IF_NO_SHARED_DATA(root, "coco8");
  test::TempDir dir;
  const std::string source = TRAINER_SOURCE_DIR;
  auto config = core::load_config(source + "/configs/coco8_overfit.yaml",
                                  {"project=" + dir.path().string(), "name=golden"})
                    .config;
  const auto result = engine::fit(config);
  REQUIRE(result.last_validation);
  const double map = result.last_validation->metric.map50_95;
  double lo = 0, hi = 0;
  std::ifstream band(source + "/tests/goldens/coco8_overfit.band");
  const bool read = static_cast<bool>(band >> lo >> hi);
  REQUIRE(read);
  MESSAGE("coco8 overfit mAP50-95 " << map << " (band " << lo << " .. " << hi << ")");
  CHECK(map >= lo);
  CHECK(map <= hi);
}
