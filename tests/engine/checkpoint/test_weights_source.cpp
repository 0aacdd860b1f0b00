// The one reader of weights files: what our .pt (with its run's args.yaml), our .ckpt and a plain
// .pt say about their model, from one read. Reference checkpoints: tests/parity/
// test_reference_checkpoint_parity.cpp (the oracle writes them).
#include <doctest/doctest.h>
#include <torch/torch.h>

#include <filesystem>

#include "core/error.h"
#include "engine/checkpoint/checkpoint.h"
#include "engine/checkpoint/weights_source.h"
#include "model/model_name.h"
#include "model/weights_io.h"
#include "model/yolo_model.h"
#include "test_support.h"

using namespace trainer;
namespace fs = std::filesystem;

namespace {

// A dataset yaml whose paths need not exist (the reader never checks them).
fs::path write_dataset(const fs::path& dir, const std::string& extra) {
  const fs::path yaml = dir / "data.yaml";
  test::write_text(yaml, "path: " + dir.string() +
                             "\ntrain: images/train\nval: images/val\nnames: [cat, dog]\n" + extra);
  return yaml;
}

// RUN/weights/best.pt holding `tensors`, with RUN/args.yaml as `args`.
fs::path write_run(const fs::path& run, const torch::nn::Module& tensors, const std::string& args) {
  fs::create_directories(run / "weights");
  model::save_weights(tensors, run / "weights" / "best.pt");
  test::write_text(run / "args.yaml", args);
  return run / "weights" / "best.pt";
}

}  // namespace

TEST_CASE(
    "weights source: our .pt takes its architecture, task, classes and keypoints from its run") {
  test::TempDir dir;
  const fs::path data = write_dataset(dir.path(), "kpt_shape: [7, 3]\n");
  torch::nn::Linear tensors(2, 2);
  const fs::path pt =
      write_run(dir / "run", *tensors, "model: yolo26t\ntask: pose\ndata: " + data.string() + "\n");
  const engine::WeightsSource source = engine::read_weights_source(pt);
  CHECK(source.kind == engine::WeightsKind::kRunWeights);
  REQUIRE(source.architecture.has_value());
  CHECK(source.architecture->display() == "yolo26t-pose");  // the recorded task wins
  CHECK(source.architecture_source == fs::absolute(dir / "run" / "args.yaml"));
  CHECK(source.names == std::vector<std::string>{"cat", "dog"});
  CHECK(source.names_source == data.string());
  REQUIRE(source.kpt_shape.has_value());
  CHECK((*source.kpt_shape == std::array<int, 2>{7, 3}));
  CHECK(source.weights.size() == 2);  // the Linear's weight and bias
  CHECK(source.describe() == "weights file " + pt.string());
  const data::DatasetSpec spec = source.dataset();
  CHECK(spec.nc() == 2);
  CHECK(spec.kpt_shape == source.kpt_shape);
  // Its dataset yaml gone: the architecture stays, the classes are unknown (data= gives them).
  fs::remove(data);
  const engine::WeightsSource without = engine::read_weights_source(pt);
  CHECK(without.architecture.has_value());
  CHECK(without.names.empty());
  CHECK_THROWS_WITH_AS(without.dataset(), doctest::Contains("pass data=DATA_YAML"),
                       core::ConfigError);
}

TEST_CASE(
    "weights source: class widths are the tensors' own, a fine-tuned run's model is followed") {
  test::TempDir dir;
  model::ModelName name = model::parse_model_name("yolo26t");
  name.cls_width = model::parse_class_widths("48");
  const model::YoloModel net = model::build_yolo_model(name, 2);
  const fs::path base = write_run(dir / "base", *net, "model: yolo26t\n");
  // A run that started from base's best.pt records that file as its model.
  const fs::path tuned = write_run(dir / "tuned", *net, "model: " + base.string() + "\n");
  const engine::WeightsSource source = engine::read_weights_source(tuned);
  REQUIRE(source.architecture.has_value());
  CHECK(source.architecture->display() == "yolo26t");
  CHECK(source.architecture->cls_width.one2many == 48);
  CHECK(source.architecture->cls_width.one2one == 48);
  // Two runs naming each other's weights: a loop, said as one.
  test::write_text(dir / "base" / "args.yaml", "model: " + tuned.string() + "\n");
  CHECK_THROWS_WITH_AS(engine::read_weights_source(tuned), doctest::Contains("form a loop"),
                       core::ConfigError);
}

TEST_CASE("weights source: a .ckpt is read once for its run's config and EMA weights") {
  test::TempDir dir;
  const fs::path data = write_dataset(dir.path(), "");
  engine::Checkpoint ckpt;
  ckpt.config_yaml = "model: yolo11n\ntask: obb\ndata: " + data.string() + "\n";
  ckpt.ema = {{"ema.updates", torch::tensor(3)}, {"ema.a", torch::ones({2})}};
  const fs::path path = dir / "best.ckpt";
  engine::save_checkpoint(ckpt, path);
  const int64_t before = engine::checkpoint_loads();
  const engine::WeightsSource source = engine::read_weights_source(path);
  CHECK(engine::checkpoint_loads() - before == 1);
  CHECK(source.kind == engine::WeightsKind::kCheckpoint);
  REQUIRE(source.architecture.has_value());
  CHECK(source.architecture->display() == "yolo11n-obb");
  CHECK(source.architecture_source == path);
  REQUIRE(source.run_config.has_value());
  CHECK(source.names == std::vector<std::string>{"cat", "dog"});
  REQUIRE(source.weights.size() == 1);
  CHECK(source.weights.front().first == "a");  // EMA weights under the model's keys
  CHECK(source.describe() == path.string() + " (EMA weights)");
}

TEST_CASE("weights source: a plain .pt records no model, a missing or foreign file is named") {
  test::TempDir dir;
  torch::nn::Linear tensors(2, 2);
  model::save_weights(*tensors, dir / "loose.pt");
  const engine::WeightsSource source = engine::read_weights_source(dir / "loose.pt");
  CHECK(source.kind == engine::WeightsKind::kPlain);
  CHECK_FALSE(source.architecture.has_value());
  CHECK(source.names.empty());
  CHECK(source.weights.size() == 2);
  CHECK_THROWS_WITH_AS(engine::read_weights_source(dir / "nope.pt"),
                       doctest::Contains("weights file not found"), core::ConfigError);
  test::write_text(dir / "text.pt", "not a torch.save file");
  CHECK_THROWS_AS(engine::read_weights_source(dir / "text.pt"), core::InputError);
  CHECK(engine::is_weights_file("runs/x/weights/best.pt"));
  CHECK(engine::is_weights_file("last.ckpt"));
  CHECK_FALSE(engine::is_weights_file("yolo26n.yaml"));
}
