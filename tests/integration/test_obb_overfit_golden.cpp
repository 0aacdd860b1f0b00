// The OBB overfit golden `overfit_micro_obb`: a fixed config on 4 images of the project's
// synthetic rotated shapes reaches the stored OBB mAP50-95 band (the reference system's own gate
// for OBB is an overfit golden of this kind).
//
// Why: the unit tests check the OBB head, decode, loss, rotated NMS and ProbIoU matching one by
// one; this checks that together they make a model that learns rotated boxes (an angle decode with
// the wrong rule, a rotated box in the wrong frame, targets in the wrong units or a polygon lost in
// the data pipeline all drop it to about 0).
#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <fstream>

#include "core/config_loader.h"
#include "demo/synthetic_obb_dataset.h"
#include "engine/trainer.h"
#include "test_support.h"

using namespace trainer;

TEST_CASE("fit: the synthetic OBB overfit recipe reaches its golden mAP band") {
  const std::filesystem::path root = TRAINER_SOURCE_DIR;
  std::ifstream golden_file(root / "tests/goldens/obb_overfit.json");
  REQUIRE(golden_file.good());
  const auto golden = nlohmann::json::parse(golden_file);

  test::TempDir dir;
  demo::SyntheticOptions options;
  options.train_images = 4;
  options.val_images = 1;
  options.image_size = 256;
  options.max_objects = 4;
  options.min_object_size = 24;  // what `trainer synth --size 256 --task obb` uses
  options.max_object_size = 128;
  options.seed = 0;
  demo::generate_synthetic_obb_dataset(dir / "obb_micro", options);
  // Validate on the training images themselves.
  std::ofstream yaml(dir / "obb_micro" / "overfit.yaml");
  yaml << "path: " << (dir / "obb_micro").string() << "\ntrain: images/train\nval: images/train\n"
       << "names:\n";
  for (size_t c = 0; c < demo::obb_class_names().size(); ++c) {
    yaml << "  " << c << ": " << demo::obb_class_names()[c] << "\n";
  }
  yaml.close();

  auto loaded = core::load_config(root / golden["config"].get<std::string>(),
                                  {"data=" + (dir / "obb_micro" / "overfit.yaml").string(),
                                   "project=" + dir.path().string(), "name=obb_overfit"});
  REQUIRE(loaded.config.schedule.epochs == golden["epochs"].get<int>());
  const auto result = engine::fit(loaded.config);
  REQUIRE(result.last_validation);
  const double map = result.last_validation->metric.map50_95;
  const double map50 = result.last_validation->metric.map50;
  const auto band = golden["band"]["map50_95"];
  MESSAGE("OBB mAP50-95 " << map << " (band " << band.dump() << "), mAP50 " << map50);
  CHECK(map >= band[0].get<double>());
  CHECK(map <= band[1].get<double>());
}
