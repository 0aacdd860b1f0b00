// MuSGD schedules against the scalar oracle (optimizer-batching.md section 4).
//
// Tolerances (max |difference| of parameters after the trajectory; lr 0.01 so each step moves a
// weight by ~1e-2): bf16 Newton-Schulz 3e-3 (bf16 rounding of bmm vs mm, accumulated over 40
// steps), fp32 Newton-Schulz 1e-5, float64 parameters with float64 Newton-Schulz 1e-11. The Muon
// momentum buffers depend only on the gradients and match bit for bit; the SGD buffers see the
// weights through weight decay and share the parameter tolerance.
#include <doctest/doctest.h>
#include <torch/torch.h>

#include <vector>

#include "optim/muon_update.h"
#include "optim/musgd.h"

using namespace trainer::optim;

namespace {

struct Problem {
  std::vector<std::vector<int64_t>> matrix_shapes;
  std::vector<std::vector<int64_t>> vector_shapes{{8}, {4}};
  torch::ScalarType dtype = torch::kFloat;
};

std::vector<ParamGroup> make_groups(const Problem& p, uint64_t seed) {
  torch::manual_seed(seed);
  ParamGroup muon;
  muon.name = "muon";
  muon.kind = GroupKind::kMuon;
  muon.use_muon = true;
  muon.weight_decay = 5e-4;
  for (const auto& s : p.matrix_shapes) muon.params.push_back(torch::randn(s, p.dtype));
  ParamGroup bias;
  bias.name = "bias";
  bias.kind = GroupKind::kBias;
  for (const auto& s : p.vector_shapes) bias.params.push_back(torch::randn(s, p.dtype));
  ParamGroup head = muon;  // a second Muon group with 3x lr, like the classification head split
  head.name = "muon_head";
  head.params.clear();
  head.lr = 0.03;
  head.params.push_back(torch::randn({6, 6}, p.dtype));
  return {muon, bias, head};
}

void set_grads(std::vector<ParamGroup>& groups, int step) {
  torch::manual_seed(1000 + step);
  for (auto& g : groups)
    for (auto& t : g.params) t.mutable_grad() = torch::randn(t.sizes(), t.options());
}

struct Trajectory {
  std::vector<ParamGroup> groups;
  StateDict state;
};

Trajectory run(const Problem& p, MuonSchedule schedule, int steps, torch::ScalarType ns_dtype,
               const StateDict* resume = nullptr, int first_step = 0,
               std::vector<ParamGroup>* start = nullptr) {
  MuSGDOptions opts;
  opts.schedule = schedule;
  opts.ns.dtype = ns_dtype;
  std::vector<ParamGroup> groups = start ? *start : make_groups(p, 7);
  if (start) {
    for (auto& g : groups)
      for (auto& t : g.params) t = t.clone();
  }
  MuSGD opt(groups, opts);
  if (resume) opt.load_state_dict(*resume);
  for (int s = first_step; s < first_step + steps; ++s) {
    set_grads(opt.groups(), s);
    opt.step();
  }
  return {opt.groups(), opt.state_dict()};
}

double max_param_diff(const std::vector<ParamGroup>& a, const std::vector<ParamGroup>& b) {
  double worst = 0;
  for (size_t g = 0; g < a.size(); ++g)
    for (size_t i = 0; i < a[g].params.size(); ++i)
      worst =
          std::max(worst, (a[g].params[i].to(torch::kDouble) - b[g].params[i].to(torch::kDouble))
                              .abs()
                              .max()
                              .item<double>());
  return worst;
}

void check_against_oracle(const Problem& p, torch::ScalarType ns_dtype, double tolerance) {
  const auto oracle = run(p, MuonSchedule::kScalar, 40, ns_dtype);
  for (auto schedule : {MuonSchedule::kBatched, MuonSchedule::kPadded}) {
    CAPTURE(static_cast<int>(schedule));
    const auto fast = run(p, schedule, 40, ns_dtype);
    const double diff = max_param_diff(oracle.groups, fast.groups);
    MESSAGE("max parameter difference " << diff);
    CHECK(diff <= tolerance);
    CHECK(diff > -1);  // a number, not NaN
    REQUIRE(fast.state.size() == oracle.state.size());
    for (const auto& [key, t] : oracle.state) {
      CAPTURE(key);
      if (key.find("muon_momentum") != std::string::npos) {
        CHECK(torch::equal(t, fast.state.at(key)));
      } else {
        CHECK((t.to(torch::kDouble) - fast.state.at(key).to(torch::kDouble))
                  .abs()
                  .max()
                  .item<double>() <= tolerance * 10);
      }
    }
  }
  // The parameters actually moved (the test would pass vacuously otherwise).
  CHECK(max_param_diff(oracle.groups, make_groups(p, 7)) > 0.01);
}

const std::vector<std::vector<int64_t>> kShapes = {
    {8, 8},        // square
    {4, 12},       // wide
    {12, 4},       // tall
    {8, 4, 1, 1},  // 1x1 conv
    {8, 4, 3, 3},  // 3x3 conv (8 x 36)
    {4, 20},       // shares the smaller dimension 4 with wide/tall: padded bucket
    {8, 8},        // a second square: exact bucket
    {5, 7},        // singleton
};

}  // namespace

TEST_CASE("40-step trajectories match the scalar oracle: float32 params, bf16 Newton-Schulz") {
  check_against_oracle(Problem{kShapes}, torch::kBFloat16, 3e-3);
}

TEST_CASE("40-step trajectories match the scalar oracle: float32 params, fp32 Newton-Schulz") {
  check_against_oracle(Problem{kShapes}, torch::kFloat, 1e-5);
}

TEST_CASE("40-step trajectories match the scalar oracle: float64 params and Newton-Schulz") {
  Problem p{kShapes};
  p.dtype = torch::kDouble;
  check_against_oracle(p, torch::kDouble, 1e-11);
}

TEST_CASE("40-step trajectories match the scalar oracle: bfloat16 params") {
  Problem p{kShapes};
  p.dtype = torch::kBFloat16;
  check_against_oracle(p, torch::kBFloat16, 0.05);
}

TEST_CASE("padded buckets form where widths differ, exact ones where shapes agree") {
  MuSGDOptions opts;
  opts.schedule = MuonSchedule::kPadded;
  auto groups = make_groups(Problem{kShapes}, 3);
  MuSGD opt(groups, opts);
  set_grads(opt.groups(), 0);
  opt.step();
  bool saw_padded = false;
  size_t members = 0;
  for (const auto& b : opt.last_buckets()) {
    saw_padded |= b.padded;
    members += b.members;
    CHECK(b.stack_bytes <= b.member_bytes);
  }
  CHECK(saw_padded);
  CHECK(members == kShapes.size() + 1);  // every matrix (and the head's) exactly once
  opt.set_schedule(MuonSchedule::kBatched);
  set_grads(opt.groups(), 1);
  opt.step();
  for (const auto& b : opt.last_buckets()) CHECK_FALSE(b.padded);
}

TEST_CASE("a padded stack never exceeds its members' parameter and gradient bytes") {
  Problem p;
  for (int i = 0; i < 6; ++i) p.matrix_shapes.push_back({4, 4});
  p.matrix_shapes.push_back({4, 400});
  p.matrix_shapes.push_back({4, 300});
  MuSGDOptions opts;
  opts.schedule = MuonSchedule::kPadded;
  auto groups = make_groups(p, 5);
  MuSGD opt(groups, opts);
  set_grads(opt.groups(), 0);
  opt.step();
  size_t buckets = 0;
  for (const auto& b : opt.last_buckets()) {
    CHECK(b.stack_bytes <= b.member_bytes);
    ++buckets;
  }
  CHECK(buckets >= 3);  // the narrow ones could not all join the wide stack
  const auto oracle = run(p, MuonSchedule::kScalar, 10, torch::kFloat);
  const auto fast = run(p, MuonSchedule::kPadded, 10, torch::kFloat);
  CHECK(max_param_diff(oracle.groups, fast.groups) <= 1e-5);
}

TEST_CASE("overlapping parameters keep the oracle's path and match it bit for bit") {
  auto make = [] {
    torch::manual_seed(11);
    auto base = torch::randn({16, 8});
    ParamGroup g;
    g.use_muon = true;
    g.kind = GroupKind::kMuon;
    g.weight_decay = 5e-4;
    g.params = {base.narrow(0, 0, 10), base.narrow(0, 6, 10), torch::randn({10, 8})};
    return std::vector<ParamGroup>{g};
  };
  std::vector<std::vector<ParamGroup>> results;
  for (auto schedule : {MuonSchedule::kScalar, MuonSchedule::kPadded}) {
    MuSGDOptions opts;
    opts.schedule = schedule;
    opts.ns.dtype = torch::kFloat;
    MuSGD opt(make(), opts);
    for (int s = 0; s < 5; ++s) {
      set_grads(opt.groups(), s);
      opt.step();
    }
    if (schedule == MuonSchedule::kPadded) {
      size_t members = 0;
      for (const auto& b : opt.last_buckets()) members += b.members;
      CHECK(members == 1);  // only the independent matrix was scheduled
    }
    results.push_back(opt.groups());
  }
  CHECK(torch::equal(results[0][0].params[0], results[1][0].params[0]));
  CHECK(torch::equal(results[0][0].params[1], results[1][0].params[1]));
}

TEST_CASE("state written by one schedule resumes under another") {
  const Problem p{kShapes};
  const auto straight = run(p, MuonSchedule::kScalar, 40, torch::kFloat);
  auto first = run(p, MuonSchedule::kScalar, 20, torch::kFloat);
  const auto resumed =
      run(p, MuonSchedule::kPadded, 20, torch::kFloat, &first.state, 20, &first.groups);
  CHECK(max_param_diff(straight.groups, resumed.groups) <= 1e-5);
  auto back = run(p, MuonSchedule::kBatched, 20, torch::kFloat);
  const auto to_scalar =
      run(p, MuonSchedule::kScalar, 20, torch::kFloat, &back.state, 20, &back.groups);
  CHECK(max_param_diff(straight.groups, to_scalar.groups) <= 1e-5);
}

TEST_CASE("foreign or mismatched optimizer state is rejected with the key named") {
  auto groups = make_groups(Problem{kShapes}, 3);
  MuSGD opt(groups, MuSGDOptions{});
  StateDict bad;
  bad["g0.p0.sgd_momentum"] = torch::zeros({3, 3});
  CHECK_THROWS_WITH(opt.load_state_dict(bad),
                    "optimizer state 'g0.p0.sgd_momentum' has shape [3, 3], expected [8, 8]");
  StateDict extra;
  extra["g9.p0.sgd_momentum"] = torch::zeros({8, 8});
  CHECK_THROWS_WITH(opt.load_state_dict(extra),
                    "optimizer state has 1 entries that match no parameter (a different model or "
                    "optimizer?)");
}

TEST_CASE("parameters without gradients are skipped, empty groups are fine") {
  for (auto schedule : {MuonSchedule::kScalar, MuonSchedule::kBatched, MuonSchedule::kPadded}) {
    auto groups = make_groups(Problem{kShapes}, 3);
    groups.push_back(ParamGroup{});  // empty
    const auto before = groups[0].params[0].clone();
    MuSGDOptions opts;
    opts.schedule = schedule;
    MuSGD opt(groups, opts);
    set_grads(opt.groups(), 0);
    opt.groups()[0].params[0].mutable_grad() = torch::Tensor();
    opt.step();
    CHECK(torch::equal(opt.groups()[0].params[0], before));
    CHECK(opt.state_dict().count("g0.p0.sgd_momentum") == 0);
    CHECK(opt.state_dict().count("g0.p1.sgd_momentum") == 1);
  }
}

TEST_CASE("one scalar step equals the hand-written reference update") {
  // W (2x2), g, lr 0.1, beta 0.9, wd 0.01, gains 0.2 / 1.0, fp64 Newton-Schulz.
  auto w = torch::tensor({{1.0, 2.0}, {3.0, 4.0}}, torch::kDouble);
  auto g = torch::tensor({{0.5, -1.0}, {0.25, 2.0}}, torch::kDouble);
  ParamGroup group;
  group.use_muon = true;
  group.lr = 0.1;
  group.momentum = 0.9;
  group.weight_decay = 0.01;
  group.params = {w.clone()};
  MuSGDOptions opts;
  opts.schedule = MuonSchedule::kScalar;
  opts.ns.dtype = torch::kDouble;
  MuSGD opt({group}, opts);
  opt.groups()[0].params[0].mutable_grad() = g.clone();
  opt.step();
  // M = 0.1 g; U = 0.1 g + 0.9 M = 0.19 g; O = NS(U); W1 = W - 0.02 O
  const auto o = orthogonalize(0.19 * g, opts.ns);
  const auto w1 = w - 0.02 * o;
  // g' = g + 0.01 W1; B = g'; V = g' + 0.9 B = 1.9 g'; W2 = W1 - 0.1 V
  const auto w2 = w1 - 0.1 * 1.9 * (g + 0.01 * w1);
  CHECK(torch::allclose(opt.groups()[0].params[0], w2, 0, 1e-14));
  CHECK(muon_scale(torch::zeros({8, 2})) == doctest::Approx(2.0));
  CHECK(muon_scale(torch::zeros({2, 8})) == 1.0);
  CHECK(muon_scale(torch::zeros({16, 8, 3, 3})) == 1.0);  // kh/kw = 1 for square kernels
}

TEST_CASE("scale_and_widen equals o.mul(scale) per member, then the exact upcast") {
  torch::manual_seed(21);
  const std::vector<double> scales = {1.0, 2.0, std::sqrt(3.0), 1.0 / 3.0};
  for (auto own : {torch::kBFloat16, torch::kFloat32, torch::kFloat64}) {
    CAPTURE(own);
    const auto stack = torch::randn({4, 5, 7}).to(own);
    const auto got = scale_and_widen(stack, scales, torch::kFloat32);
    // fp64 is wider than the parameters: it keeps its dtype (converting would round).
    CHECK((got.scalar_type() == (own == torch::kFloat64 ? torch::kFloat64 : torch::kFloat32)));
    for (int64_t k = 0; k < 4; ++k) {
      const auto expected = stack[k].mul(scales[static_cast<size_t>(k)]).to(got.scalar_type());
      CHECK(torch::equal(got[k], expected));
    }
  }
  const auto ones = torch::randn({2, 3, 3}).to(torch::kBFloat16);
  CHECK(torch::equal(scale_and_widen(ones, {1.0, 1.0}, torch::kFloat32), ones.to(torch::kFloat32)));
}

TEST_CASE("the stacks' scale factors are made once per bucket and give the same bits") {
  // scale_and_widen with the cache equals it without (same factors), and MuSGD's steps after the
  // first add no factor tensor: the buckets and their scales recur.
  torch::manual_seed(4);
  const auto stack = torch::randn({3, 4, 6}, torch::kBFloat16);
  const std::vector<double> scales = {1.0, 0.5, 2.25};
  ScaleFactorCache cache;
  const auto plain = scale_and_widen(stack, scales, torch::kFloat);
  const auto cached = scale_and_widen(stack, scales, torch::kFloat, &cache);
  CHECK(torch::equal(plain, cached));
  CHECK(cache.size() == 1);
  (void)scale_and_widen(stack, scales, torch::kFloat, &cache);
  CHECK(cache.size() == 1);
  (void)scale_and_widen(stack, {1.0, 0.5, 2.0}, torch::kFloat, &cache);
  CHECK(cache.size() == 2);

  MuSGDOptions opts;
  opts.schedule = MuonSchedule::kPadded;
  MuSGD opt(make_groups(Problem{kShapes}, 3), opts);
  set_grads(opt.groups(), 0);
  opt.step();
  const size_t after_first = opt.cached_scale_factors();
  CHECK(after_first > 0);
  set_grads(opt.groups(), 1);
  opt.step();
  CHECK(opt.cached_scale_factors() == after_first);
}
