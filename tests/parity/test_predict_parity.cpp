// Parity of `trainer predict` with the reference predictor on identical weights and real images:
// the minimal-padding LetterBox straight from the original image, NMS with one label per box on
// the one-to-many head (8.4.190's default for YOLO26), and scale_boxes back to original pixels.
// The weights come from the overfit golden's short fit so that scores and boxes mean something.
#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <fstream>

#include "core/config_loader.h"
#include "data/image_io.h"
#include "engine/trainer.h"
#include "model/fuse.h"
#include "model/model_name.h"
#include "model/weights_io.h"
#include "model/yolo_model.h"
#include "parity_oracle.h"
#include "predict/predictor.h"
#include "test_support.h"

using namespace trainer;
using nlohmann::json;
namespace fs = std::filesystem;

TEST_CASE("parity: predict boxes, scores and classes with identical weights") {
  TRAINER_REQUIRE_ORACLE(python);
  TRAINER_REQUIRE_SHARED_DATA(coco8, "coco8");
  test::TempDir dir;
  const auto data = test::reference_data_yaml(dir.path(), "coco8_overfit.yaml", *coco8);
  const int imgsz = 256;
  const auto fit_config =
      core::load_config(fs::path(TRAINER_SOURCE_DIR) / "configs/coco8_overfit.yaml",
                        {"data=" + data.string(), "project=" + dir.path().string(), "name=fit"})
          .config;
  const auto fitted = engine::fit(fit_config);
  const fs::path weights = fitted.run_dir / "weights" / "last.pt";
  REQUIRE(fs::exists(weights));

  std::vector<fs::path> images;
  for (const char* split : {"train", "val"}) {
    for (const auto& e : fs::directory_iterator(*coco8 / "images" / split))
      images.push_back(e.path());
  }
  std::sort(images.begin(), images.end());
  REQUIRE(images.size() == 8);

  auto model = model::build_yolo_model(model::parse_model_name("yolo26t"), 80);
  model::load_weights(*model, weights);
  auto fused = model::fused_copy(*model);
  predict::PredictOptions options;
  options.imgsz = imgsz;
  options.conf = 0.001;
  predict::Predictor predictor(*fused, options, c10::Device(c10::kCPU));

  std::string args = "predict '" + dir.path().string() + "' yolo26t '" + weights.string() +
                     "' 80 " + std::to_string(imgsz) + " 0.001";
  for (const auto& f : images) args += " '" + f.string() + "'";
  test::run_oracle(*python, args);
  std::ifstream in(dir / "predict.json");
  REQUIRE(in.good());
  const json reference = json::parse(in);

  size_t theirs = 0, matched = 0, ours = 0;
  for (const auto& file : images) {
    predict::Timing timing;
    const auto mine = predictor.run({data::read_image_bgr(file)}, timing)[0].objects;
    const auto& rows = reference.at(file.string());
    ours += mine.size();
    theirs += rows.size();
    std::vector<bool> used(mine.size(), false);
    for (const auto& row : rows) {
      for (size_t k = 0; k < mine.size(); ++k) {
        const auto& o = mine[k];
        if (used[k] || o.cls != row[5].get<int>() ||
            std::abs(o.score - row[4].get<double>()) > 1e-3) {
          continue;
        }
        bool close = true;
        for (int c = 0; c < 4; ++c)
          close = close && std::abs(o.box[c] - row[c].get<double>()) < 0.1;
        if (close) {
          used[k] = true;
          ++matched;
          break;
        }
      }
    }
  }
  MESSAGE("detections: trainer " << ours << ", reference " << theirs << ", matched " << matched);
  REQUIRE(theirs > 20);
  CHECK(matched >= theirs * 99 / 100);
  CHECK(std::abs(double(ours) - double(theirs)) <= theirs / 100.0 + 1);
}
