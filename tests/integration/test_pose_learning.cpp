// The pose learning test: a tiny YOLO26 pose model overfits one fixed batch of coco8-pose (the
// loader's letterboxed validation batch, no augmentation) with AdamW; the total loss and the
// keypoint term must fall to under half their first values within 150 steps, with every gradient
// finite. YOLO11-pose (the v8 pose loss) is checked the same way.
//
// Why: the loss's unit and parity tests check values on fixed inputs; this checks that those
// values drive learning through the pose head (decode, assigner, keypoint loss, RLE flow).
#include <doctest/doctest.h>
#include <torch/torch.h>

#include <cstdlib>

#include "core/config.h"
#include "data/dataset.h"
#include "data/dataset_yaml.h"
#include "data/loader.h"
#include "data/loader_options.h"
#include "engine/task/pose_task.h"
#include "model/model_name.h"
#include "test_support.h"

using namespace trainer;

namespace {

void check_learns(const std::string& model_name) {
  TRAINER_SKIP_IF_NO_SHARED_DATA(coco8_pose, "coco8-pose");
  ::setenv("TRAINER_SHARED_DATA", coco8_pose->parent_path().c_str(), 1);
  torch::manual_seed(0);
  const std::filesystem::path root = TRAINER_SOURCE_DIR;
  const auto spec = data::load_dataset_yaml(root / "configs/data/coco8-pose.yaml");
  const data::DatasetIndex train = data::load_split(spec, data::Split::kTrain);
  core::TrainConfig config;
  config.data.imgsz = 160;
  config.data.batch = 2;  // validation batches are 2 x batch: all 4 images in one batch
  config.data.workers = 1;
  auto options = data::val_loader_options(config);
  options.show_progress = false;
  data::Loader loader(train, options);
  loader.start_epoch(0, /*mosaic=*/false);
  const auto batch = loader.next();
  REQUIRE(batch);
  REQUIRE(batch->keypoints.size(1) == 17);
  const auto images = batch->images.contiguous().to(torch::kFloat).div(255.0);

  engine::PoseTask task;
  auto model = task.build_model(model::parse_model_name(model_name), spec);
  auto criterion = task.build_loss(core::LossConfig{}, *model, spec);
  model->train();
  torch::optim::AdamW optimizer(model->parameters(), torch::optim::AdamWOptions(0.002));
  double first_total = 0, first_pose = 0, last_total = 0, last_pose = 0;
  for (int step = 0; step < 150; ++step) {
    optimizer.zero_grad();
    const auto result =
        (*criterion)(model->forward_for_loss(images),
                     loss::LossTargets{batch->labels, batch->keypoints, batch->rboxes, batch->masks,
                                       batch->overlap_masks},
                     images.size(0));
    result.total.backward();
    for (const auto& p : model->parameters()) {
      if (p.grad().defined()) REQUIRE(torch::isfinite(p.grad()).all().item<bool>());
    }
    optimizer.step();
    const double total = result.total.item<double>();
    const double pose = result.items[1].item<double>();  // [box, pose, ...]
    if (step == 0) first_total = total, first_pose = pose;
    last_total = total, last_pose = pose;
  }
  MESSAGE(model_name << ": total " << first_total << " -> " << last_total << ", pose " << first_pose
                     << " -> " << last_pose);
  CHECK(last_total < 0.5 * first_total);
  CHECK(last_pose < 0.5 * first_pose);
}

}  // namespace

TEST_CASE("yolo26t-pose overfits a coco8-pose batch: loss and keypoint loss halve") {
  check_learns("yolo26t-pose");
}

TEST_CASE("yolo11t-pose overfits a coco8-pose batch: loss and keypoint loss halve") {
  check_learns("yolo11t-pose");
}
