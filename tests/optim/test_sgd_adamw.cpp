// SGD and AdamW: one step by hand, and the foreach schedule against the scalar oracle.
#include <doctest/doctest.h>
#include <torch/torch.h>

#include "optim/adamw.h"
#include "optim/momentum.h"
#include "optim/sgd.h"
#include "optim/step_scalars.h"

using namespace trainer::optim;

namespace {

std::vector<ParamGroup> groups_of(torch::ScalarType dtype) {
  torch::manual_seed(3);
  ParamGroup a;
  a.weight_decay = 5e-4;
  a.params = {torch::randn({4, 3}, dtype), torch::randn({7}, dtype)};
  ParamGroup b;
  b.lr = 0.002;
  b.params = {torch::randn({5}, dtype)};
  return {a, b};
}

template <class Opt, class... Args>
std::vector<ParamGroup> trajectory(int steps, torch::ScalarType dtype, Args... args) {
  Opt opt(groups_of(dtype), args...);
  for (int s = 0; s < steps; ++s) {
    torch::manual_seed(100 + s);
    for (auto& g : opt.groups())
      for (auto& p : g.params) p.mutable_grad() = torch::randn(p.sizes(), p.options());
    opt.step();
  }
  return opt.groups();
}

bool all_equal(const std::vector<ParamGroup>& a, const std::vector<ParamGroup>& b) {
  for (size_t g = 0; g < a.size(); ++g)
    for (size_t i = 0; i < a[g].params.size(); ++i)
      if (!torch::equal(a[g].params[i], b[g].params[i])) return false;
  return true;
}

}  // namespace

TEST_CASE("SGD Nesterov step by hand: W - lr (g' + beta B) with g' = g + wd W") {
  ParamGroup g;
  g.lr = 0.1;
  g.momentum = 0.9;
  g.weight_decay = 0.01;
  g.params = {torch::tensor({1.0, 2.0}, torch::kDouble)};
  Sgd opt({g}, /*foreach=*/false);
  opt.groups()[0].params[0].mutable_grad() = torch::tensor({0.5, -1.0}, torch::kDouble);
  opt.step();
  CHECK(opt.groups()[0].params[0][0].item<double>() == doctest::Approx(0.9031).epsilon(1e-12));
  CHECK(opt.groups()[0].params[0][1].item<double>() == doctest::Approx(2.1862).epsilon(1e-12));
}

TEST_CASE("SGD foreach equals the scalar oracle bit for bit over 40 steps") {
  for (auto dtype : {torch::kFloat, torch::kDouble, torch::kBFloat16}) {
    CHECK(all_equal(trajectory<Sgd>(40, dtype, false), trajectory<Sgd>(40, dtype, true)));
  }
}

TEST_CASE("AdamW step by hand: decoupled decay, bias-corrected moments") {
  ParamGroup g;
  g.lr = 0.1;
  g.weight_decay = 0.01;
  g.params = {torch::tensor({1.0}, torch::kDouble)};
  AdamWOptions o;
  o.foreach = false;
  AdamW opt({g}, o);
  opt.groups()[0].params[0].mutable_grad() = torch::tensor({0.5}, torch::kDouble);
  opt.step();
  // W = 1 * (1 - 0.001) = 0.999; m_hat = 0.5; sqrt(v_hat) = 0.5; W -= 0.1 * 0.5 / (0.5 + 1e-8)
  const double expected = 0.999 - 0.1 * 0.5 / (0.5 + 1e-8);
  CHECK(opt.groups()[0].params[0][0].item<double>() == doctest::Approx(expected).epsilon(1e-12));
}

TEST_CASE("AdamW foreach equals the scalar oracle bit for bit over 40 steps") {
  AdamWOptions scalar;
  scalar.foreach = false;
  AdamWOptions fast;
  for (auto dtype : {torch::kFloat, torch::kDouble}) {
    CHECK(all_equal(trajectory<AdamW>(40, dtype, scalar), trajectory<AdamW>(40, dtype, fast)));
  }
}

TEST_CASE("AdamW and SGD state round-trips and resumes exactly") {
  AdamWOptions o;
  AdamW a(groups_of(torch::kFloat), o);
  for (auto& g : a.groups())
    for (auto& p : g.params) p.mutable_grad() = torch::ones_like(p);
  a.step();
  AdamW b(groups_of(torch::kFloat), o);
  b.load_state_dict(a.state_dict());
  CHECK(b.state_dict().at("g0.p0.step").item<int64_t>() == 1);
  CHECK(torch::equal(b.state_dict().at("g1.p0.exp_avg_sq"), a.state_dict().at("g1.p0.exp_avg_sq")));
  Sgd s(groups_of(torch::kFloat), true);
  CHECK_THROWS_WITH(s.load_state_dict(a.state_dict()),
                    "optimizer state has 9 entries that match no parameter (a different model or "
                    "optimizer?)");
}

TEST_CASE("zero_grad: to none by default, or zeroed in place where the tensors stay") {
  ParamGroup g;
  g.lr = 0.1;
  g.params = {torch::ones({3}), torch::ones({2})};
  Sgd opt({g}, /*foreach=*/true);
  auto& params = opt.groups()[0].params;
  params[0].mutable_grad() = torch::full({3}, 2.0f);
  params[1].mutable_grad() = torch::full({2}, -1.0f);
  const void* address = params[0].grad().data_ptr();
  opt.zero_grad(/*set_to_none=*/false);
  REQUIRE(params[0].grad().defined());
  CHECK(params[0].grad().data_ptr() == address);  // the same storage: a graph's address holds
  CHECK(torch::equal(params[0].grad(), torch::zeros({3})));
  CHECK(torch::equal(params[1].grad(), torch::zeros({2})));
  opt.zero_grad();
  CHECK_FALSE(params[0].grad().defined());
  CHECK_FALSE(params[1].grad().defined());
}

TEST_CASE("step scalars: named 0-d device slots at fixed addresses, refilled by one upload") {
  StepScalars scalars({"lr", "momentum"}, torch::kCPU);
  const void* address = scalars.slot("lr").data_ptr();
  scalars.set("lr", 0.01);
  scalars.set("momentum", 0.9);
  scalars.upload();
  CHECK(scalars.slot("lr").item<double>() == 0.01);
  CHECK(scalars.slot("momentum").item<double>() == 0.9);
  scalars.set("lr", 0.005);
  CHECK(scalars.slot("lr").item<double>() == 0.01);  // not before the upload
  scalars.upload();
  CHECK(scalars.slot("lr").item<double>() == 0.005);
  CHECK(scalars.slot("momentum").item<double>() == 0.9);  // not set: kept
  CHECK(scalars.slot("lr").data_ptr() == address);
  // The staging buffers take turns; each upload carries every value, set or kept, over uploads
  // through both buffers.
  for (int i = 0; i < 5; ++i) {
    scalars.set("momentum", 0.5 + 0.1 * i);
    scalars.upload();
    CHECK(scalars.slot("lr").item<double>() == 0.005);
    CHECK(scalars.slot("momentum").item<double>() == 0.5 + 0.1 * i);
    scalars.upload();  // nothing set
    CHECK(scalars.slot("momentum").item<double>() == 0.5 + 0.1 * i);
  }
  CHECK(scalars.uploads() == 12);
  CHECK(scalars.slot("lr").data_ptr() == address);
  CHECK(scalars.slot("lr").dim() == 0);
  CHECK_THROWS_AS(scalars.set("beta", 1.0), std::invalid_argument);
  CHECK_THROWS_AS(StepScalars({}, torch::kCPU), std::invalid_argument);
}

TEST_CASE("SGD with lr and momentum in device slots follows the Scalar form over 40 steps") {
  // A warmup-like schedule (both values change every step), weight decay, Nesterov and plain;
  // fp32. The slot form multiplies before adding where the Scalar form adds with alpha, so the
  // two agree to rounding: 1e-5 relative after 40 steps (a wrong lr or momentum is off by far
  // more; the first step alone moves the weights by ~1e-2 relative).
  for (const bool nesterov : {true, false}) {
    CAPTURE(nesterov);
    torch::manual_seed(8);
    std::vector<at::Tensor> a = {torch::randn({5, 4}), torch::randn({7})};
    std::vector<at::Tensor> b = {a[0].clone(), a[1].clone()};
    std::vector<at::Tensor> buf_a = {torch::zeros({5, 4}), torch::zeros({7})};
    std::vector<at::Tensor> buf_b = {torch::zeros({5, 4}), torch::zeros({7})};
    StepScalars scalars({"lr", "momentum"}, torch::kCPU);
    for (int step = 0; step < 40; ++step) {
      const double lr = 0.05 * (1.0 + step) / 40.0, momentum = 0.8 + 0.137 * step / 40.0;
      const std::vector<at::Tensor> grads = {torch::randn({5, 4}), torch::randn({7})};
      sgd_step_foreach(a, grads, buf_a, SgdStepArgs{lr, momentum, 5e-4, nesterov});
      scalars.set("lr", lr);
      scalars.set("momentum", momentum);
      scalars.upload();
      sgd_step_foreach_tensor(b, grads, buf_b, scalars.slot("lr"), scalars.slot("momentum"), 5e-4,
                              nesterov);
    }
    for (size_t i = 0; i < a.size(); ++i) {
      CHECK(torch::allclose(b[i], a[i], 1e-5, 1e-6));
      CHECK_FALSE(torch::equal(a[i], buf_a[i]));
    }
  }
}

TEST_CASE("Muon momentum with 1 - beta and beta in device slots equals the Scalar form") {
  // 40 steps of a changing beta (a warmup ramp), Nesterov and plain, fp32 and fp64: the
  // tensor-weight lerp computes the Scalar lerp's formula with the same weight, bit for bit.
  for (const auto dtype : {torch::kFloat, torch::kDouble}) {
    for (const bool nesterov : {true, false}) {
      CAPTURE(nesterov);
      torch::manual_seed(12);
      const auto opts = torch::TensorOptions().dtype(dtype);
      std::vector<at::Tensor> buf_a = {torch::zeros({6, 5}, opts), torch::zeros({3, 3}, opts)};
      std::vector<at::Tensor> buf_b = {buf_a[0].clone(), buf_a[1].clone()};
      StepScalars scalars({"one_minus_beta", "beta"}, torch::kCPU);
      std::vector<at::Tensor> out_a, out_b;
      for (int step = 0; step < 40; ++step) {
        const double beta = 0.8 + 0.15 * step / 40.0;
        const std::vector<at::Tensor> grads = {torch::randn({6, 5}, opts),
                                               torch::randn({3, 3}, opts)};
        out_a = muon_momentum_foreach(grads, buf_a, beta, nesterov);
        scalars.set("one_minus_beta", 1.0 - beta);
        scalars.set("beta", beta);
        scalars.upload();
        out_b = muon_momentum_foreach_tensor(grads, buf_b, scalars.slot("one_minus_beta"),
                                             scalars.slot("beta"), nesterov);
      }
      for (size_t i = 0; i < buf_a.size(); ++i) {
        CHECK(torch::equal(buf_a[i], buf_b[i]));
        CHECK(torch::equal(out_a[i], out_b[i]));
      }
    }
  }
}
