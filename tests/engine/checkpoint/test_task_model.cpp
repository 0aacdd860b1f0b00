// build_task_model: the head follows the name's task row (keypoints sized by the dataset's
// kpt_shape, angles, masks), the classes the dataset's; a keypoint head without a kpt_shape is a
// config error naming the model and the yaml.
#include <doctest/doctest.h>
#include <torch/torch.h>

#include "core/error.h"
#include "engine/checkpoint/task_model.h"
#include "model/model_name.h"

using namespace trainer;

namespace {

data::DatasetSpec spec_of(int classes, std::optional<std::array<int, 2>> kpt_shape = {}) {
  data::DatasetSpec spec;
  spec.yaml_file = "d.yaml";
  for (int c = 0; c < classes; ++c) spec.names.push_back("c" + std::to_string(c));
  spec.kpt_shape = kpt_shape;
  return spec;
}

}  // namespace

TEST_CASE("build_task_model: each task's head, the dataset's classes and keypoint shape") {
  const auto pose =
      engine::build_task_model(model::parse_model_name("yolo26t-pose"), spec_of(2, {{{7, 3}}}));
  CHECK(pose->num_classes() == 2);
  CHECK(pose->keypoint_shape().count == 7);
  CHECK(pose->keypoint_shape().dims == 3);
  CHECK_FALSE(pose->oriented());
  const auto detect = engine::build_task_model(model::parse_model_name("yolo26t"), spec_of(5));
  CHECK(detect->num_classes() == 5);
  CHECK(detect->keypoint_shape().count == 0);
  CHECK_FALSE(detect->segments());
  // A detection dataset's kpt_shape does not give a detection head keypoints.
  CHECK(engine::build_task_model(model::parse_model_name("yolo26t"), spec_of(1, {{{4, 2}}}))
            ->keypoint_shape()
            .count == 0);
  CHECK(engine::build_task_model(model::parse_model_name("yolo26t-obb"), spec_of(3))->oriented());
  CHECK(engine::build_task_model(model::parse_model_name("yolo26t-seg"), spec_of(3))->segments());
}

TEST_CASE("build_task_model: a keypoint head needs the dataset's kpt_shape") {
  CHECK_THROWS_WITH_AS(
      engine::build_task_model(model::parse_model_name("yolo26t-pose"), spec_of(1)),
      doctest::Contains("pose model yolo26t-pose needs a dataset with kpt_shape"),
      core::ConfigError);
}
