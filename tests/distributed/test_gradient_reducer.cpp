// c10d's reducer over in-process Gloo ranks: 2 ranks x batch 2 give the gradients of 1 rank x
// batch 4 on the same images (within fp32 summation-order tolerance), with gradient accumulation
// over two backward passes and with parameters that get no gradient (YOLO26's one-to-one head is
// not in this loss). The model's BatchNorm layers are in eval mode so batch statistics cannot
// differ between the two set-ups; the loss is a per-image sum, scaled as the trainer does
// (x world_size on each rank), so the single-process gradient is the exact target.
#include <doctest/doctest.h>
#include <torch/torch.h>

#include <map>
#include <mutex>

#include "distributed/gradient_reducer.h"
#include "model/model_name.h"
#include "model/yolo_model.h"
#include "rank_threads.h"

using trainer::distributed::GradientReducer;
using trainer::distributed::Group;

namespace {

trainer::model::YoloModel make_model(uint64_t seed) {
  torch::manual_seed(seed);
  auto m = trainer::model::build_yolo_model(trainer::model::parse_model_name("yolo26t"), 2);
  m->eval();  // BatchNorm uses its running statistics: no batch dependence
  return m;
}

// A per-image additive loss on the one-to-many outputs only (`both_heads`: the one-to-one ones
// too).
at::Tensor image_sum_loss(trainer::model::YoloModelImpl& model, const at::Tensor& images,
                          bool both_heads = false) {
  const auto out = model.forward_for_loss(images);
  at::Tensor loss = torch::zeros({});
  for (const auto& level : out.one2many) loss = loss + level.pow(2).sum() * 1e-3;
  if (both_heads) {
    for (const auto& level : out.one2one) loss = loss + level.pow(2).sum() * 1e-3;
  }
  return loss;
}

std::vector<std::pair<std::string, at::Tensor>> trainable(trainer::model::YoloModelImpl& m) {
  std::vector<std::pair<std::string, at::Tensor>> out;
  for (const auto& p : m.named_parameters()) {
    if (p.value().requires_grad()) out.emplace_back(p.key(), p.value());
  }
  return out;
}

std::map<std::string, at::Tensor> grads_of(trainer::model::YoloModelImpl& m) {
  std::map<std::string, at::Tensor> g;
  for (const auto& [name, p] : trainable(m)) {
    g[name] = p.grad().defined() ? p.grad().clone() : torch::zeros_like(p);
  }
  return g;
}

}  // namespace

TEST_CASE("reducer: 2 ranks x batch 2 equal 1 rank x batch 4, over two accumulated passes") {
  torch::manual_seed(7);
  const auto batch_a = torch::rand({4, 3, 64, 64});
  const auto batch_b = torch::rand({4, 3, 64, 64});

  auto single = make_model(1);
  for (const auto& images : {batch_a, batch_b}) image_sum_loss(*single, images).backward();
  const auto expected = grads_of(*single);

  // Models are built here, not on the rank threads: torch's generator is global, and two threads
  // seeding and drawing from it at once would interleave. Rank 1 starts from other weights; rank
  // 0 from the single model's, which the broadcast spreads.
  std::vector<trainer::model::YoloModel> models{make_model(1), make_model(101)};
  std::mutex m;
  std::vector<std::map<std::string, at::Tensor>> ranks(2);
  std::vector<int> detecting(2, -1);
  trainer::test::run_ranks("reducer", 2, [&](int rank, Group& g) {
    auto& model = models[static_cast<size_t>(rank)];
    std::vector<at::Tensor> state;
    for (const auto& p : model->parameters()) state.push_back(p);
    for (const auto& b : model->buffers()) state.push_back(b);
    g.broadcast(state, 0);
    std::vector<at::Tensor> params;
    std::vector<std::string> names;
    for (const auto& [name, p] : trainable(*model)) {
      params.push_back(p);
      names.push_back(name);
    }
    GradientReducer reducer(g, params, names);
    for (const auto& images : {batch_a, batch_b}) {
      const auto shard = images.narrow(0, 2 * rank, 2);
      reducer.backward(image_sum_loss(*model, shard) * static_cast<double>(g.size()));
    }
    std::lock_guard<std::mutex> lock(m);
    ranks[static_cast<size_t>(rank)] = grads_of(*model);
    detecting[static_cast<size_t>(rank)] = reducer.detects_unused();
  });
  CHECK(detecting == std::vector<int>{1, 1});  // the one-to-one head: decided on
  REQUIRE(ranks[0].size() == expected.size());
  int compared = 0, zero_in_loss = 0;
  for (const auto& [name, want] : expected) {
    CAPTURE(name);
    const auto& a = ranks[0].at(name);
    const auto& b = ranks[1].at(name);
    CHECK(torch::equal(a, b));  // every rank holds the same averaged gradient
    const double scale = want.abs().max().item<double>();
    if (scale == 0.0) {
      ++zero_in_loss;
      CHECK(a.abs().max().item<double>() == 0.0);
      continue;
    }
    CHECK((a - want).abs().max().item<double>() <= 1e-4 * scale + 1e-7);
    ++compared;
  }
  CHECK(compared > 100);
  CHECK(zero_in_loss > 0);  // the one-to-one head: no gradient, and nothing hung
}

TEST_CASE("reducer: with every parameter in the loss, detection is decided off, gradients equal") {
  torch::manual_seed(8);
  const auto images = torch::rand({4, 3, 64, 64});
  auto single = make_model(2);
  image_sum_loss(*single, images, /*both_heads=*/true).backward();
  const auto expected = grads_of(*single);
  std::vector<trainer::model::YoloModel> models{make_model(2), make_model(2)};
  std::mutex m;
  std::vector<std::map<std::string, at::Tensor>> ranks(2);
  std::vector<int> detecting(2, -1);
  trainer::test::run_ranks("reducer-all-used", 2, [&](int rank, Group& g) {
    auto& model = models[static_cast<size_t>(rank)];
    std::vector<at::Tensor> params;
    std::vector<std::string> names;
    for (const auto& [name, p] : trainable(*model)) {
      params.push_back(p);
      names.push_back(name);
    }
    GradientReducer reducer(g, params, names);
    const auto shard = images.narrow(0, 2 * rank, 2);
    reducer.backward(image_sum_loss(*model, shard, true) * static_cast<double>(g.size()));
    std::lock_guard<std::mutex> lock(m);
    ranks[static_cast<size_t>(rank)] = grads_of(*model);
    detecting[static_cast<size_t>(rank)] = reducer.detects_unused();
  });
  CHECK(detecting == std::vector<int>{0, 0});
  for (const auto& [name, want] : expected) {
    CAPTURE(name);
    const double scale = want.abs().max().item<double>();
    CHECK(scale > 0.0);  // every parameter had a gradient
    CHECK((ranks[0].at(name) - want).abs().max().item<double>() <= 1e-4 * scale + 1e-7);
  }
}

TEST_CASE("parameters_reached: the parameters a loss's backward reaches, and only those") {
  auto a = torch::ones({2}, torch::requires_grad());
  auto b = torch::ones({2}, torch::requires_grad());
  auto c = torch::ones({2}, torch::requires_grad());
  (void)(c * 2).sum();  // c has a grad accumulator, but from another graph
  const auto loss = (a * 3).sum() + (a * b).detach().sum();
  CHECK(trainer::distributed::parameters_reached(loss, {a, b, c}) ==
        std::vector<bool>{true, false, false});
}
