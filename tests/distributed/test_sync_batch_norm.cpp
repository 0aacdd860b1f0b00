// sync_bn: 2 ranks x batch 2 with BatchNorm in training mode and synchronised statistics give one
// process's BatchNorm over batch 4: the same outputs, running statistics and (with the gradient
// reducer, losses x world_size) the same gradients.
#include <doctest/doctest.h>
#include <torch/torch.h>

#include <mutex>

#include "distributed/gradient_reducer.h"
#include "distributed/sync_batch_norm.h"
#include "model/conv.h"
#include "rank_threads.h"

using trainer::distributed::Group;

namespace {

// Two Conv+BN+SiLU blocks; BN momentum 0.5 so the running statistics move visibly.
torch::nn::Sequential make_net() {
  torch::manual_seed(3);
  torch::nn::Sequential net(trainer::model::Conv(3, 8, 3, 1), trainer::model::Conv(8, 4, 1, 1));
  for (auto& m : net->modules()) {
    if (auto* bn = dynamic_cast<torch::nn::BatchNorm2dImpl*>(m.get())) bn->options.momentum(0.5);
  }
  net->train();
  return net;
}

struct Observed {
  at::Tensor output;
  std::vector<at::Tensor> grads, buffers;
};

Observed observe(torch::nn::Sequential& net, const at::Tensor& out) {
  Observed o;
  o.output = out.detach().clone();
  for (const auto& p : net->parameters()) o.grads.push_back(p.grad().clone());
  for (const auto& b : net->buffers()) o.buffers.push_back(b.clone());
  return o;
}

}  // namespace

TEST_CASE("sync_bn: 2 ranks x batch 2 equal one BatchNorm over batch 4 (outputs, stats, grads)") {
  torch::manual_seed(11);
  const auto images = torch::rand({4, 3, 12, 12});
  auto single = make_net();
  const auto single_out = single->forward(images);
  single_out.pow(2).sum().backward();
  const Observed want = observe(single, single_out);

  std::vector<torch::nn::Sequential> nets{make_net(), make_net()};
  std::vector<Observed> got(2);
  std::vector<int64_t> overridden(2);
  std::mutex m;
  trainer::test::run_ranks("sync_bn", 2, [&](int rank, Group& g) {
    auto& net = nets[static_cast<size_t>(rank)];
    const int64_t n = trainer::model::set_batch_norm_override(
        *net, [&g](torch::nn::BatchNorm2dImpl& bn, const torch::Tensor& x) {
          return trainer::distributed::sync_batch_norm(x, bn, g);
        });
    trainer::distributed::GradientReducer reducer(g, net->parameters(), {});
    const auto out = net->forward(images.narrow(0, 2 * rank, 2));
    reducer.backward(out.pow(2).sum() * static_cast<double>(g.size()));
    std::lock_guard<std::mutex> lock(m);
    got[static_cast<size_t>(rank)] = observe(net, out);
    overridden[static_cast<size_t>(rank)] = n;
  });
  CHECK(overridden == std::vector<int64_t>{2, 2});
  const auto close = [](const at::Tensor& a, const at::Tensor& b) {
    const double scale = std::max(b.abs().max().item<double>(), 1e-6);
    return (a.to(torch::kDouble) - b.to(torch::kDouble)).abs().max().item<double>() <= 2e-5 * scale;
  };
  CHECK(close(torch::cat({got[0].output, got[1].output}), want.output));
  for (int r = 0; r < 2; ++r) {
    for (size_t i = 0; i < want.buffers.size(); ++i) {
      CAPTURE(i);
      CHECK(close(got[static_cast<size_t>(r)].buffers[i], want.buffers[i]));
    }
    for (size_t i = 0; i < want.grads.size(); ++i) {
      CAPTURE(i);
      CHECK(close(got[static_cast<size_t>(r)].grads[i], want.grads[i]));
    }
  }
}

TEST_CASE(
    "sync_bn: per-rank BatchNorm (the reference's default) does differ, so the test above "
    "can fail") {
  torch::manual_seed(11);
  const auto images = torch::rand({4, 3, 12, 12});
  auto single = make_net();
  const auto whole = single->forward(images);
  auto half = make_net();
  const auto first = half->forward(images.narrow(0, 0, 2));
  CHECK((first - whole.narrow(0, 0, 2)).abs().max().item<double>() > 1e-3);
}
