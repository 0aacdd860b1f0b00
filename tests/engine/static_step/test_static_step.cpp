// The static training step (static_shapes: true): whatever a batch holds, a training step runs the
// same ATen ops on the same shapes and nothing that sizes a tensor by its values or reads a device
// value on the host; and the configurations that cannot have static shapes are refused.
#include <doctest/doctest.h>
#include <torch/torch.h>

#include <string>
#include <vector>

#include "core/error.h"
#include "demo/synthetic_obb_dataset.h"
#include "demo/synthetic_pose_dataset.h"
#include "engine/static_step/op_shape_trace.h"
#include "engine/train_step.h"
#include "engine/training_context.h"
#include "integration/coco8_seg_subset.h"
#include "integration/fit_fixture.h"
#include "test_support.h"

using namespace trainer;
using namespace trainer::test;

namespace {

engine::TrainingContext static_context(const std::filesystem::path& project, bool static_shapes,
                                       const std::string& model = "yolo26t",
                                       core::Task task = core::Task::kDetect,
                                       const std::filesystem::path& data = {}) {
  core::TrainConfig config = test::tiny_fit_config(project, "static", 2);
  config.model.model = model;
  config.run.task = task;
  if (!data.empty()) config.data.data = data.string();
  config.run.static_shapes = static_shapes;
  config.data.max_instances = 12;
  engine::ContextOptions options;
  options.need_val = false;
  options.show_progress = false;
  return engine::build_training_context(config, options);
}

// The batch with only its first `objects` label rows and their keypoints or rotated boxes.
data::Batch with_objects(const data::Batch& batch, int64_t objects) {
  data::Batch b = batch;
  const int64_t n = std::min<int64_t>(objects, batch.labels.size(0));
  b.labels = batch.labels.narrow(0, 0, n);
  if (batch.keypoints.defined() && batch.keypoints.size(0) == batch.labels.size(0)) {
    b.keypoints = batch.keypoints.narrow(0, 0, n);
  }
  if (batch.rboxes.defined() && batch.rboxes.size(0) == batch.labels.size(0)) {
    b.rboxes = batch.rboxes.narrow(0, 0, n);
  }
  if (batch.masks.defined() && batch.overlap_masks) {
    // Index images: pixel j + 1 is the image's row j; the rows dropped lose their pixels.
    b.masks = batch.masks.clone();
    const auto image = b.labels.select(1, 0).to(torch::kLong);
    for (int64_t img = 0; img < b.masks.size(0); ++img) {
      const int64_t kept = image.eq(img).sum().item<int64_t>();
      b.masks[img].masked_fill_(b.masks[img].gt(kept), 0);
    }
  } else if (batch.masks.defined()) {
    b.masks = batch.masks.narrow(0, 0, n);
  }
  return b;
}

demo::SyntheticOptions small_task_data() {
  demo::SyntheticOptions o;
  o.train_images = 4;
  o.val_images = 1;
  o.image_size = 128;
  o.min_object_size = 24;
  o.max_object_size = 64;
  o.max_objects = 4;
  o.seed = 3;
  return o;
}

// The first entry where two traces differ, for the failure message.
std::string first_difference(const std::vector<std::string>& a, const std::vector<std::string>& b) {
  for (size_t i = 0; i < std::min(a.size(), b.size()); ++i) {
    if (a[i] != b[i]) return "op " + std::to_string(i) + ": " + a[i] + " vs " + b[i];
  }
  return a.size() == b.size()
             ? ""
             : "lengths " + std::to_string(a.size()) + " vs " + std::to_string(b.size());
}

struct Traced {
  std::vector<std::vector<std::string>> traces;  // one per step
};

// Steps with 0, 1 and all of the batch's objects (after one untraced step that creates the
// optimizer's state), each traced whole: forward, loss, backward, clip, optimizer, EMA.
Traced trace_steps(engine::TrainingContext& ctx) {
  engine::TrainStep step(ctx);
  ctx.inputs.train_loader->start_epoch(0, /*mosaic=*/true);
  const auto batch = ctx.inputs.train_loader->next();
  REQUIRE(batch.has_value());
  REQUIRE(batch->labels.size(0) >= 3);
  int64_t ni = 10;  // past warmup (1 epoch of 2 batches): accumulate 1
  step.apply_schedule(ni);
  step.run(*batch, ni++);
  Traced out;
  for (const int64_t objects : {int64_t{0}, int64_t{1}, batch->labels.size(0)}) {
    step.apply_schedule(ni);
    const data::Batch b = with_objects(*batch, objects);
    engine::OpShapeTrace trace;
    step.run(b, ni++);
    out.traces.push_back(trace.ops());
  }
  CHECK_FALSE(step.saw_non_finite());
  return out;
}

// Whole steps with 0, 1 and many objects: the same ops on the same shapes, none data-sized.
void check_static_traces(engine::TrainingContext& ctx) {
  const Traced t = trace_steps(ctx);
  REQUIRE(t.traces[0].size() > 500);  // a whole step was recorded
  CHECK(first_difference(t.traces[0], t.traces[1]) == "");
  CHECK(first_difference(t.traces[0], t.traces[2]) == "");
  CHECK(engine::data_dependent_ops(t.traces[2]) == std::vector<std::string>{});
}

}  // namespace

TEST_CASE(
    "static step: the same ops on the same shapes for 0, 1 and many objects, none data-sized") {
  for (const std::string model : {"yolo26t", "yolo11t"}) {
    CAPTURE(model);
    TempDir dir;
    engine::TrainingContext ctx = static_context(dir.path(), true, model);
    check_static_traces(ctx);
  }
}

TEST_CASE("static step: pose and OBB steps are static too (YOLO26 and YOLO11 heads)") {
  TempDir dir;
  const auto pose = demo::generate_synthetic_pose_dataset(dir.path() / "pose", small_task_data());
  const auto obb = demo::generate_synthetic_obb_dataset(dir.path() / "obb", small_task_data());
  struct Case {
    std::string model;
    core::Task task;
    std::filesystem::path data;
  };
  for (const Case& c : {Case{"yolo26t-pose", core::Task::kPose, pose.dataset_yaml},
                        Case{"yolo11t-pose", core::Task::kPose, pose.dataset_yaml},
                        Case{"yolo26t-obb", core::Task::kObb, obb.dataset_yaml}}) {
    CAPTURE(c.model);
    TempDir project;
    engine::TrainingContext ctx = static_context(project.path(), true, c.model, c.task, c.data);
    check_static_traces(ctx);
  }
}

TEST_CASE("static step: segmentation steps are static too (coco8's polygons)") {
  TRAINER_SKIP_IF_NO_SHARED_DATA(coco128, "coco128");
  TempDir dir;
  const auto yaml = test::write_coco8_seg_subset(*coco128, dir.path() / "seg");
  for (const std::string model : {"yolo26t-seg", "yolo11t-seg"}) {
    CAPTURE(model);
    TempDir project;
    engine::TrainingContext ctx =
        static_context(project.path(), true, model, core::Task::kSegment, yaml);
    check_static_traces(ctx);
  }
}

TEST_CASE("static step: the trace tells the selecting step apart (it would catch a regression)") {
  TempDir dir;
  engine::TrainingContext ctx = static_context(dir.path(), false);
  const Traced t = trace_steps(ctx);
  CHECK(first_difference(t.traces[1], t.traces[2]) != "");
  CHECK_FALSE(engine::data_dependent_ops(t.traces[2]).empty());
}

TEST_CASE("static step: rect and multi_scale are refused") {
  TempDir dir;
  core::TrainConfig config = test::tiny_fit_config(dir.path(), "refused", 1);
  config.run.static_shapes = true;
  engine::ContextOptions options;
  options.need_val = false;
  options.show_progress = false;
  config.data.rect = true;
  CHECK_THROWS_WITH_AS(engine::build_training_context(config, options),
                       doctest::Contains("static_shapes: rect: true gives batches"),
                       core::ConfigError);
  config.data.rect = false;
  config.augment.multi_scale = 0.5;
  CHECK_THROWS_WITH_AS(engine::build_training_context(config, options),
                       doctest::Contains("static_shapes: multi_scale gives batches"),
                       core::ConfigError);
}
