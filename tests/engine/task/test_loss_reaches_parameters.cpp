// Each task's TaskDefinition::loss_reaches_every_parameter() is true to its loss: the loss of a
// batch with objects reaches every trainable parameter, and so does the same batch without objects
// exactly when the task says so (pose: its keypoint-sigma branch goes without a gradient, as in
// the reference).
//
// Why: data-parallel training decides unused-parameter detection once per epoch for the tasks
// that say yes (distributed/gradient_reducer.h, UnusedParameters::kDecide); a task that says yes
// wrongly would hang a job at the first all-reduce after a batch without objects.
#include <doctest/doctest.h>
#include <torch/torch.h>

#include "data/dataset_yaml.h"
#include "data/loader.h"
#include "data/loader_options.h"
#include "demo/synthetic_dataset.h"
#include "demo/synthetic_obb_dataset.h"
#include "demo/synthetic_pose_dataset.h"
#include "distributed/gradient_reducer.h"
#include "engine/run_dataset.h"
#include "engine/task/task_definition.h"
#include "integration/coco8_seg_subset.h"
#include "model/model_name.h"
#include "test_support.h"

using namespace trainer;

namespace {

// The parameters of `model` that the loss of `targets` does not reach (names).
std::vector<std::string> unreached(model::YoloModelImpl& model, loss::YoloLoss& criterion,
                                   const at::Tensor& images, const loss::LossTargets& targets) {
  const auto result = criterion(model.forward_for_loss(images), targets, images.size(0));
  std::vector<at::Tensor> params;
  std::vector<std::string> names;
  for (const auto& p : model.named_parameters()) {
    if (!p.value().requires_grad()) continue;
    params.push_back(p.value());
    names.push_back(p.key());
  }
  const auto reached = distributed::parameters_reached(result.total, params);
  std::vector<std::string> missing;
  for (size_t i = 0; i < reached.size(); ++i) {
    if (!reached[i]) missing.push_back(names[i]);
  }
  return missing;
}

void check_every_parameter_reached(core::Task task, const std::string& model_name,
                                   const std::filesystem::path& yaml) {
  CAPTURE(model_name);
  core::TrainConfig config;
  config.model.model = model_name;
  config.run.task = task;
  config.data.data = yaml.string();
  config.data.imgsz = 128;
  config.data.batch = 2;
  config.data.workers = 0;
  const auto yaml_spec = data::load_dataset_yaml(yaml);
  const auto val_set = engine::load_run_split(config, yaml_spec, data::Split::kVal);
  const auto spec = engine::run_dataset_spec(config, yaml_spec);
  auto options = data::val_loader_options(config, /*standalone=*/true);
  options.show_progress = false;
  data::Loader loader(val_set, options);
  loader.start_epoch(0, false);
  const auto batch = loader.next();
  REQUIRE(batch);
  REQUIRE(batch->labels.size(0) > 0);
  const auto definition = engine::make_task_definition(config);
  torch::manual_seed(3);
  auto model = definition->build_model(model::parse_model_name(model_name), spec);
  model->train();
  auto criterion = definition->build_loss(config.loss, *model, spec);
  const auto images = batch->images.contiguous().to(torch::kFloat) / 255.0;
  const loss::LossTargets with{batch->labels, batch->keypoints, batch->rboxes, batch->masks,
                               batch->overlap_masks};
  CHECK(unreached(*model, *criterion, images, with) == std::vector<std::string>{});
  loss::LossTargets none = with;
  none.labels = batch->labels.slice(0, 0, 0);
  if (batch->keypoints.defined()) none.keypoints = batch->keypoints.slice(0, 0, 0);
  if (batch->rboxes.defined()) none.rboxes = batch->rboxes.slice(0, 0, 0);
  if (batch->masks.defined()) {
    none.masks =
        batch->overlap_masks ? torch::zeros_like(batch->masks) : batch->masks.slice(0, 0, 0);
  }
  const auto missing = unreached(*model, *criterion, images, none);
  if (definition->loss_reaches_every_parameter()) {
    CHECK(missing == std::vector<std::string>{});
  } else {
    CHECK_FALSE(missing.empty());
    for (const auto& name : missing) {
      CAPTURE(name);
      CHECK(name.find("sigma") != std::string::npos);  // the RLE loss's branch, nothing else
    }
  }
}

demo::SyntheticOptions small() {
  demo::SyntheticOptions o;
  o.train_images = 1;
  o.val_images = 2;
  o.image_size = 128;
  o.min_object_size = 24;
  o.max_object_size = 96;
  o.max_objects = 3;
  o.seed = 2;
  return o;
}

}  // namespace

TEST_CASE("losses reach every parameter as their task says, with objects and without") {
  test::TempDir dir;
  check_every_parameter_reached(
      core::Task::kDetect, "yolo26t",
      demo::generate_synthetic_dataset(dir / "det", small()).dataset_yaml);
  check_every_parameter_reached(
      core::Task::kPose, "yolo26t-pose",
      demo::generate_synthetic_pose_dataset(dir / "pose", small()).dataset_yaml);
  check_every_parameter_reached(
      core::Task::kObb, "yolo26t-obb",
      demo::generate_synthetic_obb_dataset(dir / "obb", small()).dataset_yaml);
}

TEST_CASE("losses reach every parameter as their task says: segmentation") {
  TRAINER_SKIP_IF_NO_SHARED_DATA(coco128, "coco128");
  test::TempDir dir;
  check_every_parameter_reached(core::Task::kSegment, "yolo26t-seg",
                                test::write_coco8_seg_subset(*coco128, dir / "seg"));
}
