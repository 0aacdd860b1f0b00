// Parity of validation with identical weights on real images: which head scores YOLO26 (8.4.190's
// default `nms: null` = the one-to-many head with NMS), predictions mapped back to the original
// image with per-axis gains, inverted boxes kept, and the reference metric computed in letterboxed
// input pixels. The weights come from a short trainer fit so that scores and boxes mean something.
#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <fstream>
#include <map>

#include "core/config_loader.h"
#include "data/dataset.h"
#include "data/dataset_yaml.h"
#include "engine/trainer.h"
#include "engine/validator.h"
#include "model/model_name.h"
#include "model/weights_io.h"
#include "model/yolo_model.h"
#include "parity_oracle.h"
#include "prediction_match.h"
#include "test_support.h"

using namespace trainer;
using nlohmann::json;
namespace fs = std::filesystem;

using test::matched;
using test::Prediction;

TEST_CASE("parity: validation predictions and metrics with identical weights (nms default)") {
  TRAINER_REQUIRE_ORACLE(python);
  TRAINER_REQUIRE_SHARED_DATA(coco8, "coco8");
  test::TempDir dir;
  // coco8's train images as both splits (the overfit golden's data).
  const auto data = test::reference_data_yaml(dir.path(), "coco8_overfit.yaml", *coco8);
  const int imgsz = 256;

  // The overfit golden's recipe (configs/coco8_overfit.yaml: yolo26t, 200 steps, ~20 s) gives
  // weights whose scores and boxes mean something (mAP50 ~0.5 on these images). The reference
  // builds the same tiny width from the family's yaml (tests/parity/oracle.py).
  const auto fit_config =
      core::load_config(fs::path(TRAINER_SOURCE_DIR) / "configs/coco8_overfit.yaml",
                        {"data=" + data.string(), "project=" + dir.path().string(), "name=fit"})
          .config;
  REQUIRE(fit_config.data.imgsz == imgsz);
  const auto fitted = engine::fit(fit_config);
  const fs::path weights = fitted.run_dir / "weights" / "last.pt";
  REQUIRE(fs::exists(weights));

  // trainer's validation: default nms (auto), fp32, batch 4 (one rect batch, as the reference's).
  auto config =
      core::load_config(fs::path{}, {"model=yolo26t", "data=" + data.string(), "imgsz=256",
                                     "batch=4", "workers=1", "precision=fp32", "device=cpu"})
          .config;
  REQUIRE(config.run.nms == core::NmsMode::kAuto);
  const auto spec = data::load_dataset_yaml(config.data.data);
  auto val_set = std::make_shared<data::DatasetIndex>(data::load_split(spec, data::Split::kVal));
  auto model = model::build_yolo_model(model::parse_model_name("yolo26t"), spec.nc());
  model::load_weights(*model, weights);
  engine::Validator validator(val_set, spec, config, c10::Device(c10::kCPU), /*standalone=*/true);
  auto options = engine::ValidationOptions::from_config(config);
  CHECK(options.predict.use_one2many);
  options.keep_detections = true;
  const auto ours = validator.run(*model, nullptr, options);

  // The reference's standalone validation on the same weights and images.
  test::run_oracle(*python, "val '" + dir.path().string() + "' yolo26t '" + weights.string() +
                                "' '" + data.string() + "' " + std::to_string(imgsz) + " 4");
  std::ifstream metrics_file(dir / "val.json");
  REQUIRE(metrics_file.good());
  const json ref_metrics = json::parse(metrics_file);
  std::ifstream predictions_file(dir / "val" / "predictions.json");
  REQUIRE(predictions_file.good());
  const json ref_json = json::parse(predictions_file);

  std::map<int64_t, int> class_of_category;
  for (int c = 0; c < spec.nc(); ++c) class_of_category[validator.category_id(c)] = c;
  std::vector<Prediction> mine, theirs;
  for (const auto& d : ours.detections) {
    mine.push_back({d.image_id, class_of_category.at(d.category_id), d.bbox_xywh, d.score});
  }
  int inverted = 0;
  for (const auto& d : ref_json) {
    Prediction p;
    p.image = d["image_id"].get<int64_t>();
    p.cls = d["category_id"].get<int>() - 1;  // not a COCO val list: ids are class + 1
    for (int k = 0; k < 4; ++k) p.xywh[k] = d["bbox"][k].get<double>();
    p.score = d["score"].get<double>();
    if (p.xywh[2] < 0 || p.xywh[3] < 0) ++inverted;
    theirs.push_back(p);
  }
  MESSAGE("predictions: trainer " << mine.size() << ", reference " << theirs.size()
                                  << " (inverted boxes in the reference's: " << inverted << ")");
  REQUIRE(theirs.size() > 20);
  // Near-equal scores may swap one detection at the max_det cut; everything else must agree.
  CHECK(matched(theirs, mine) >= theirs.size() * 99 / 100);
  CHECK(matched(mine, theirs) >= mine.size() * 99 / 100);
  CHECK(std::abs(double(mine.size()) - double(theirs.size())) <= theirs.size() / 100.0 + 1);

  // The reference metric (letterboxed input space) on the same predictions.
  const auto& m = ours.metric;
  MESSAGE("P " << m.precision << " / " << ref_metrics["precision"] << ", R " << m.recall << " / "
               << ref_metrics["recall"] << ", mAP50 " << m.map50 << " / " << ref_metrics["map50"]
               << ", mAP50-95 " << m.map50_95 << " / " << ref_metrics["map50_95"]);
  CHECK(m.map50 > 0);  // a metric of zeros would compare nothing
  CHECK(m.precision == doctest::Approx(ref_metrics["precision"].get<double>()).epsilon(2e-3));
  CHECK(m.recall == doctest::Approx(ref_metrics["recall"].get<double>()).epsilon(2e-3));
  CHECK(m.map50 == doctest::Approx(ref_metrics["map50"].get<double>()).epsilon(2e-3));
  CHECK(m.map50_95 == doctest::Approx(ref_metrics["map50_95"].get<double>()).epsilon(2e-3));
}
