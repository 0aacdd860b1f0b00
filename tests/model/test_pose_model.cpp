// The pose models: parameter counts of all ten (reference-tasks.md 2.3), state-dict keys, their
// order and shapes (2.4), the training/eval forward fields, the one-to-one copies, the flow and
// the weights round trip.
#include <doctest/doctest.h>
#include <torch/torch.h>

#include <map>
#include <set>

#include "model/weights_io.h"
#include "model/yolo_model.h"
#include "task_model_checks.h"
#include "test_support.h"

using namespace trainer;
using namespace trainer::model;
using trainer::test::head_attribute_order;
using trainer::test::parameter_count;

namespace {

std::map<std::string, std::vector<int64_t>> pose_shapes_of(const torch::nn::Module& m) {
  std::map<std::string, std::vector<int64_t>> out;
  for (const auto& [k, t] : state_dict(m)) out[k] = t.sizes().vec();
  return out;
}

}  // namespace

TEST_CASE(
    "pose parameter counts equal the reference's for all ten models (nc=1 and nc=80) (slow)") {
  struct Case {
    const char* name;
    int64_t nc1, nc80;
  };
  const Case cases[] = {
      {"yolo26n-pose", 3679464, 3747554},   {"yolo26s-pose", 11809352, 11870498},
      {"yolo26m-pose", 24222664, 24344482}, {"yolo26l-pose", 28626120, 28747938},
      {"yolo26x-pose", 62731860, 62914350}, {"yolo11n-pose", 2874462, 2908507},
      {"yolo11s-pose", 9918238, 9948811},   {"yolo11m-pose", 20912364, 20973273},
      {"yolo11l-pose", 26169836, 26230745}, {"yolo11x-pose", 58798636, 58889881},
  };
  for (const auto& c : cases) {
    CAPTURE(c.name);
    const auto name = parse_model_name(c.name);
    CHECK(parameter_count(*build_yolo_model(name, 1)) == c.nc1);
    CHECK(parameter_count(*build_yolo_model(name, 80)) == c.nc80);
  }
}

TEST_CASE("yolo26n-pose keys: 879 in all, 411 in the head, the reference's order and shapes") {
  auto model = build_yolo_model(parse_model_name("yolo26n-pose"), 1);
  const auto sd = state_dict(*model);
  CHECK(sd.size() == 879);
  int64_t head = 0;
  for (const auto& [k, t] : sd) head += k.rfind("model.23.", 0) == 0 ? 1 : 0;
  CHECK(head == 411);
  CHECK(head_attribute_order(*model) ==
        std::vector<std::string>{"cv2", "cv3", "one2one_cv2", "one2one_cv3", "cv4", "one2one_cv4",
                                 "flow_model", "cv4_kpts", "cv4_sigma", "one2one_cv4_kpts",
                                 "one2one_cv4_sigma"});
  const auto got = pose_shapes_of(*model);
  const std::map<std::string, std::vector<int64_t>> expected = {
      {"model.23.cv2.0.0.conv.weight", {16, 64, 3, 3}},
      {"model.23.cv2.0.1.conv.weight", {16, 16, 3, 3}},
      {"model.23.cv2.0.2.weight", {4, 16, 1, 1}},
      {"model.23.cv2.0.2.bias", {4}},
      {"model.23.cv3.0.0.0.conv.weight", {64, 1, 3, 3}},
      {"model.23.cv3.0.0.1.conv.weight", {64, 64, 1, 1}},
      {"model.23.cv3.0.1.0.conv.weight", {64, 1, 3, 3}},
      {"model.23.cv3.0.1.1.conv.weight", {64, 64, 1, 1}},
      {"model.23.cv3.0.2.weight", {1, 64, 1, 1}},
      {"model.23.cv3.0.2.bias", {1}},
      {"model.23.cv4.0.0.conv.weight", {85, 64, 3, 3}},
      {"model.23.cv4.0.0.bn.running_var", {85}},
      {"model.23.cv4.0.1.conv.weight", {85, 85, 3, 3}},
      {"model.23.cv4.2.0.conv.weight", {85, 256, 3, 3}},
      {"model.23.cv4_kpts.0.weight", {51, 85, 1, 1}},
      {"model.23.cv4_kpts.0.bias", {51}},
      {"model.23.cv4_sigma.0.weight", {34, 85, 1, 1}},
      {"model.23.cv4_sigma.0.bias", {34}},
      {"model.23.one2one_cv4.1.1.conv.weight", {85, 85, 3, 3}},
      {"model.23.one2one_cv4_kpts.2.weight", {51, 85, 1, 1}},
      {"model.23.one2one_cv4_sigma.2.bias", {34}},
      {"model.23.flow_model.loc", {2}},
      {"model.23.flow_model.cov", {2, 2}},
      {"model.23.flow_model.mask", {6, 2}},
      {"model.23.flow_model.s.0.0.weight", {64, 2}},
      {"model.23.flow_model.s.5.2.weight", {64, 64}},
      {"model.23.flow_model.t.3.4.weight", {2, 64}},
      {"model.23.flow_model.t.3.4.bias", {2}},
  };
  for (const auto& [key, shape] : expected) {
    CAPTURE(key);
    REQUIRE(got.count(key) == 1);
    CHECK(got.at(key) == shape);
  }
  CHECK(got.count("model.23.cv4.0.2.weight") == 0);  // Pose26's trunk has no output conv
  CHECK(got.count("model.23.dfl.conv.weight") == 0);
}

TEST_CASE("yolo11n-pose keys: 163 in the head, cv4 ends in the 51-channel conv, DFL kept") {
  auto model = build_yolo_model(parse_model_name("yolo11n-pose"), 1);
  int64_t head = 0;
  for (const auto& [k, t] : state_dict(*model)) head += k.rfind("model.23.", 0) == 0 ? 1 : 0;
  CHECK(head == 163);
  CHECK(head_attribute_order(*model) == std::vector<std::string>{"cv2", "cv3", "dfl", "cv4"});
  const auto got = pose_shapes_of(*model);
  CHECK(got.at("model.23.cv2.0.0.conv.weight") == std::vector<int64_t>{64, 64, 3, 3});
  CHECK(got.at("model.23.cv4.0.0.conv.weight") == std::vector<int64_t>{51, 64, 3, 3});
  CHECK(got.at("model.23.cv4.0.2.weight") == std::vector<int64_t>{51, 51, 1, 1});
  CHECK(got.at("model.23.cv4.0.2.bias") == std::vector<int64_t>{51});
  CHECK(got.at("model.23.dfl.conv.weight") == std::vector<int64_t>{1, 16, 1, 1});
  CHECK(model->flow().is_empty());
}

TEST_CASE("pose accessors: keypoint shape, head kind, flow (detection models report none)") {
  auto p26 = build_tiny_yolo_model(ModelFamily::kYolo26, 2, core::Task::kPose);
  CHECK(p26->keypoint_shape().count == 17);
  CHECK(p26->keypoint_shape().dims == 3);
  REQUIRE(p26->pose_head() != nullptr);
  CHECK(p26->pose_head()->kind() == PoseHeadKind::kPose26);
  CHECK(p26->head()->extra_channels() == 51);
  REQUIRE_FALSE(p26->flow().is_empty());
  CHECK(p26->flow()->log_prob(torch::zeros({4, 2})).sizes() == torch::IntArrayRef{4});
  auto p11 = build_tiny_yolo_model(ModelFamily::kYolo11, 2, core::Task::kPose, {5, 2});
  CHECK(p11->keypoint_shape().channels() == 10);
  CHECK(p11->pose_head()->kind() == PoseHeadKind::kPose);
  CHECK(p11->flow().is_empty());
  auto det = build_tiny_yolo_model(ModelFamily::kYolo26, 2);
  CHECK(det->keypoint_shape().count == 0);
  CHECK(det->pose_head() == nullptr);
  CHECK(det->flow().is_empty());
  CHECK(det->head()->extra_channels() == 0);
  // A keypoint shape given with a detection name builds the detection model.
  CHECK(build_yolo_model(parse_model_name("yolo26t"), 2, {5, 2})->keypoint_shape().count == 0);
  CHECK_THROWS(build_tiny_yolo_model(ModelFamily::kYolo26, 2, core::Task::kPose, {5, 4}));
}

TEST_CASE("pose forward: kpts per level and branch, sigmas in training mode only (slow)") {
  torch::manual_seed(0);
  auto model = build_tiny_yolo_model(ModelFamily::kYolo26, 2, core::Task::kPose);
  const auto images = torch::rand({2, 3, 64, 96});
  model->train();
  auto out = model->forward_for_loss(images);
  REQUIRE(out.one2many_kpts.size() == 3);
  REQUIRE(out.one2one_kpts.size() == 3);
  REQUIRE(out.one2many_sigma.size() == 3);
  REQUIRE(out.one2one_sigma.size() == 3);
  CHECK(out.one2many_kpts[0].sizes() == torch::IntArrayRef{2, 51, 8, 12});
  CHECK(out.one2many_sigma[2].sizes() == torch::IntArrayRef{2, 34, 2, 3});
  // The one-to-one branch runs on detached features: no gradient reaches the backbone from it.
  CHECK(out.one2many_kpts[0].requires_grad());
  out.one2one_kpts[0].sum().backward();
  CHECK_FALSE(model->named_parameters()["model.0.conv.weight"].grad().defined());
  model->eval();
  torch::NoGradGuard no_grad;
  out = model->forward_for_loss(images);
  CHECK(out.one2many_kpts.size() == 3);
  CHECK(out.one2many_sigma.empty());
  CHECK(out.one2one_sigma.empty());
  // Equal weights at construction: both branches give equal keypoints.
  for (size_t i = 0; i < 3; ++i) CHECK(torch::equal(out.one2many_kpts[i], out.one2one_kpts[i]));

  auto v8 = build_tiny_yolo_model(ModelFamily::kYolo11, 2, core::Task::kPose);
  v8->train();
  const auto o = v8->forward_for_loss(images);
  CHECK(o.one2many_kpts.size() == 3);
  CHECK(o.one2many_kpts[1].sizes() == torch::IntArrayRef{2, 51, 4, 6});
  CHECK(o.one2many_sigma.empty());
  CHECK(o.one2one_kpts.empty());
}

TEST_CASE("pose weights: save then load is equal to the bit (yolo26t-pose, yolo11t-pose)") {
  test::check_task_weights_round_trip(core::Task::kPose, [](YoloModelImpl& model) {
    torch::NoGradGuard no_grad;
    model.forward_for_loss(torch::rand({2, 3, 64, 64}));
  });
}
