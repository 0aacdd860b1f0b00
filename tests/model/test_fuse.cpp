// The fused inference copy (model/fuse.h): same eval-mode outputs as the model it was copied
// from, for both families and both tasks, with BatchNorm statistics far from their defaults so a
// wrong fold could not hide; the source model keeps its BatchNorms.
#include <doctest/doctest.h>
#include <torch/torch.h>

#include "model/conv.h"
#include "model/fuse.h"
#include "model/yolo_model.h"

using namespace trainer;

namespace {

// Random BN statistics and affine, so that folding them is visible in the outputs.
void randomise_batchnorms(torch::nn::Module& model) {
  torch::NoGradGuard no_grad;
  for (const auto& m : model.modules()) {
    if (auto bn = std::dynamic_pointer_cast<torch::nn::BatchNorm2dImpl>(m)) {
      bn->running_mean.uniform_(-0.5, 0.5);
      bn->running_var.uniform_(0.5, 2.0);
      bn->weight.uniform_(0.5, 1.5);
      bn->bias.uniform_(-0.3, 0.3);
    }
  }
}

int count_batchnorms(const torch::nn::Module& model) {
  int n = 0;
  for (const auto& m : model.modules()) {
    if (std::dynamic_pointer_cast<torch::nn::BatchNorm2dImpl>(m)) ++n;
  }
  return n;
}

void check_outputs_equal(const std::vector<torch::Tensor>& a, const std::vector<torch::Tensor>& b) {
  REQUIRE(a.size() == b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    const double scale = a[i].abs().max().item<double>() + 1e-6;
    const double diff = (a[i] - b[i]).abs().max().item<double>();
    CHECK(diff / scale < 1e-4);
  }
}

void check_fused(model::ModelFamily family, core::Task task) {
  torch::manual_seed(3);
  auto source = model::build_tiny_yolo_model(family, 5, task, {4, 3});
  randomise_batchnorms(*source);
  source->eval();
  const int before = count_batchnorms(*source);
  REQUIRE(before > 0);
  auto fused = model::fused_copy(*source);
  CHECK(count_batchnorms(*fused) == 0);
  CHECK(count_batchnorms(*source) == before);  // the source is untouched
  CHECK_FALSE(fused->is_training());
  torch::NoGradGuard no_grad;
  const auto images = torch::rand({2, 3, 96, 128});
  const auto a = source->forward_for_loss(images);
  const auto b = fused->forward_for_loss(images);
  check_outputs_equal(a.one2many, b.one2many);
  check_outputs_equal(a.one2one, b.one2one);
  check_outputs_equal(a.one2many_kpts, b.one2many_kpts);
  check_outputs_equal(a.one2one_kpts, b.one2one_kpts);
  // And the decoded boxes, scores (and keypoints) the postprocess reads.
  check_outputs_equal({source->head()->decode_output(a, false)},
                      {fused->head()->decode_output(b, false)});
  if (source->end2end()) {
    check_outputs_equal({source->head()->decode_output(a, true)},
                        {fused->head()->decode_output(b, true)});
  }
}

}  // namespace

TEST_CASE("fuse: yolo26t detect gives the unfused outputs") {
  check_fused(model::ModelFamily::kYolo26, core::Task::kDetect);
}
TEST_CASE("fuse: yolo11t detect gives the unfused outputs") {
  check_fused(model::ModelFamily::kYolo11, core::Task::kDetect);
}
TEST_CASE("fuse: yolo26t pose gives the unfused outputs") {
  check_fused(model::ModelFamily::kYolo26, core::Task::kPose);
}
TEST_CASE("fuse: yolo11t pose gives the unfused outputs") {
  check_fused(model::ModelFamily::kYolo11, core::Task::kPose);
}

TEST_CASE("fuse: a Conv's folded weight and bias by hand") {
  model::Conv conv(1, 1, 1, 1, 1, /*act=*/false);
  {
    torch::NoGradGuard no_grad;
    conv->conv->weight.fill_(2.0);
    conv->bn->running_mean.fill_(1.0);
    conv->bn->running_var.fill_(4.0 - model::kBnEps);  // sqrt(var + eps) = 2
    conv->bn->weight.fill_(3.0);
    conv->bn->bias.fill_(0.5);
  }
  conv->eval();
  conv->fuse_batchnorm();
  CHECK(conv->fused());
  // y = 3 (2x - 1) / 2 + 0.5 = 3x - 1: weight 3, bias -1.
  CHECK(conv->conv->weight.item<double>() == doctest::Approx(3.0));
  CHECK(conv->conv->bias.item<double>() == doctest::Approx(-1.0));
  const auto y = conv->forward(torch::full({1, 1, 1, 1}, 2.0));
  CHECK(y.item<double>() == doctest::Approx(5.0));
}
