// CUDA smoke tests: what must work the first time a GPU is lent (scripts/gpu_check.sh runs them).
//
// Why: every other test pins device=cpu, so without these the CUDA path would first execute in a
// real run. Each case compares the GPU against the CPU on the same inputs and weights where a
// number exists, with the tolerance stated beside the check. Without CUDA (a CPU build, or no GPU
// visible) each case prints "CUDA SMOKE SKIPPED: <why>", which CTest reports as skipped, not
// failed; TRAINER_REQUIRE_CUDA=1 (gpu_check.sh on a GPU machine) turns that skip into a failure.
#include <doctest/doctest.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <torch/torch.h>

#include <ATen/autocast_mode.h>
#include <c10/util/Exception.h>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <string>

#ifdef TRAINER_WITH_CUDA
#include <ATen/cuda/CUDAEvent.h>
#include <ATen/cuda/Sleep.h>
#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAFunctions.h>
#endif

#include "bench/peak_memory.h"
#include "core/autocast_guard.h"
#include "engine/checkpoint/checkpoint.h"
#include "engine/device/device.h"
#include "engine/interval.h"
#include "engine/static_step/cuda_graph_step.h"
#include "engine/train_step.h"
#include "engine/trainer.h"
#include "engine/training_context.h"
#include "engine/validator.h"
#include "integration/fit_fixture.h"
#include "model/model_name.h"
#include "model/postprocess.h"
#include "model/yolo_model.h"
#include "optim/step_scalars.h"
#include "test_support.h"

using namespace trainer;

namespace {

// True when the case can run; otherwise reports the skip (or, under TRAINER_REQUIRE_CUDA=1, a
// failure for a case that needs one GPU).
bool cuda_ready(int min_devices = 1) {
  std::string why;
#ifndef TRAINER_WITH_CUDA
  why = "this build has no CUDA (the CUDA build: scripts/build.sh --cuda)";
#else
  if (!torch::cuda::is_available()) {
    why = "no CUDA device is visible";
  } else if (static_cast<int>(torch::cuda::device_count()) < min_devices) {
    why = fmt::format("needs {} GPUs, {} visible", min_devices, torch::cuda::device_count());
  }
#endif
  if (why.empty()) return true;
  const char* require = std::getenv("TRAINER_REQUIRE_CUDA");
  if (require && std::string(require) == "1" && min_devices <= 1) {
    FAIL("TRAINER_REQUIRE_CUDA=1 but " << why);
  }
  MESSAGE("CUDA SMOKE SKIPPED: " << why);
  return false;
}

const c10::Device kCpu(c10::kCPU);
const c10::Device kCuda0(c10::kCUDA, 0);

// Exact fp32 on the GPU for the comparisons (TF32 would add ~1e-3 relative error by design).
void disable_tf32() {
  at::globalContext().setAllowTF32CuDNN(false);
  at::globalContext().setAllowTF32CuBLAS(false);
}

// ||a - b|| / ||b|| over all tensors (moved to the CPU, in double).
double relative_l2(const std::vector<at::Tensor>& a, const std::vector<at::Tensor>& b) {
  double diff = 0, ref = 0;
  for (size_t k = 0; k < a.size(); ++k) {
    const auto x = a[k].to(torch::kCPU, torch::kDouble), y = b[k].to(torch::kCPU, torch::kDouble);
    diff += (x - y).pow(2).sum().item<double>();
    ref += y.pow(2).sum().item<double>();
  }
  return std::sqrt(diff / std::max(ref, 1e-30));
}

// A fixed batch: two random 128 px images with three boxes, labels [image, class, cx, cy, w, h].
std::pair<at::Tensor, at::Tensor> fixed_batch() {
  torch::manual_seed(3);
  const auto images = torch::rand({2, 3, 128, 128});
  const auto labels = torch::tensor({{0.f, 1.f, 0.5f, 0.5f, 0.4f, 0.3f},
                                     {0.f, 3.f, 0.2f, 0.3f, 0.2f, 0.2f},
                                     {1.f, 0.f, 0.6f, 0.4f, 0.5f, 0.6f}});
  return {images, labels};
}

model::YoloModel fresh_model(const c10::Device& device) {
  torch::manual_seed(0);
  auto m = model::build_yolo_model(model::parse_model_name("yolo26t"), 6);
  m->to(device);
  return m;
}

// Training steps that make the smoke weights: on a freshly initialised network a perturbation as
// small as one BF16 rounding grows with depth and flips the assigner's near-ties (BENCHMARKS.md,
// BF16 section: 119% gradient error, cosine 0.18), so a comparison there cannot tell a defect from
// chaos. After 20 steps on the fixed batch the loss has halved (15.4 -> 8.2) and the CPU's BF16
// gradient is within 3.8% of fp32 (noise floor 2.1%). Not many more: near the minimum of one
// batch the gradient shrinks to a residual that any rounding moves by tens of percent (measured
// on the CPU, BF16 / floor relative L2: 10 steps 14% / 3.1%, 15 2.7% / 2.4%, 20 3.8% / 2.1%, 40
// 2.5% / 1.3%, 60 61% / 61%, 150 44% / 1.1%, 400 81% / 49%).
constexpr int kSmokeTrainingSteps = 20;

// The weights every comparison starts from: yolo26t (6 classes) after kSmokeTrainingSteps of SGD
// (lr 0.01, momentum 0.9, gradients clipped to 10 as fit does) on the fixed batch, in fp32 on the
// CPU; parameters then buffers (BatchNorm statistics included), made once per process.
const std::vector<at::Tensor>& smoke_weights() {
  static const std::vector<at::Tensor> weights = [] {
    auto net = fresh_model(kCpu);
    net->train();
    loss::YoloLoss criterion(6, net->reg_max(), net->strides(), loss::LossGains{}, net->end2end());
    torch::optim::SGD sgd(net->parameters(), torch::optim::SGDOptions(0.01).momentum(0.9));
    const auto [images, labels] = fixed_batch();
    for (int step = 0; step < kSmokeTrainingSteps; ++step) {
      sgd.zero_grad();
      criterion(net->forward_for_loss(images), labels, images.size(0)).total.backward();
      torch::nn::utils::clip_grad_norm_(net->parameters(), 10.0);
      sgd.step();
    }
    std::vector<at::Tensor> state;
    for (const auto& [name, t] : engine::named_state(*net)) state.push_back(t.detach().clone());
    return state;
  }();
  return weights;
}

// Copies the smoke weights into `net` (built as fresh_model builds it), in place, so optimizers
// already holding its parameters keep them.
void load_smoke_weights(model::YoloModelImpl& net) {
  const auto& weights = smoke_weights();  // trained (with gradients) on first use
  torch::NoGradGuard no_grad;
  const auto state = engine::named_state(net);
  REQUIRE(state.size() == weights.size());
  for (size_t k = 0; k < state.size(); ++k) state[k].second.copy_(weights[k]);
}

model::YoloModel smoke_model(const c10::Device& device) {
  auto m = fresh_model(device);
  load_smoke_weights(*m);
  return m;
}

struct Pass {
  double loss = 0;
  std::vector<at::Tensor> grads;
};

// Every parameter and the images rounded to BF16 and back: one BF16 rounding of the inputs and no
// BF16 arithmetic, the noise floor `bench precision` judges BF16 against (what is left of the
// network's sensitivity to perturbations on the smoke weights, so BF16's error is read next to it).
void round_to_bf16(model::YoloModelImpl& net, at::Tensor& images) {
  torch::NoGradGuard no_grad;
  for (auto& p : net.parameters()) p.copy_(p.to(torch::kBFloat16).to(torch::kFloat));
  images = images.to(torch::kBFloat16).to(torch::kFloat);
}

// BF16's error passes when it is within a few times the noise floor's (5x: on trained weights
// BENCHMARKS.md measures 3.6x for the gradients, 11.6% against 3.2%) or under `absolute`.
bool within_floor(double error, double floor, double absolute) {
  return error <= std::max(5.0 * floor, absolute);
}

// One forward + loss (inside the autocast guard when bf16) + backward, as TrainStep does it;
// `floor`: fp32 with the weights and images rounded to BF16 (round_to_bf16); `fresh`: from the
// freshly initialised weights instead of the smoke weights.
Pass forward_backward(const c10::Device& device, bool bf16, bool floor = false,
                      bool fresh = false) {
  auto net = fresh ? fresh_model(device) : smoke_model(device);
  net->train();
  loss::YoloLoss criterion(6, net->reg_max(), net->strides(), loss::LossGains{}, net->end2end());
  auto [images, labels] = fixed_batch();
  if (floor) round_to_bf16(*net, images);
  images = images.to(device);
  labels = labels.to(device);
  loss::LossResult r;
  {
    core::AutocastGuard autocast(device.type(), at::kBFloat16, bf16);
    r = criterion(net->forward_for_loss(images), labels, images.size(0));
  }
  r.total.backward();
  Pass p;
  p.loss = r.total.item<double>();
  for (const auto& q : net->parameters()) {
    p.grads.push_back(q.grad().defined() ? q.grad().to(torch::kCPU, torch::kFloat)
                                         : torch::zeros(q.sizes()));
  }
  return p;
}

core::TrainConfig tiny_config(const std::filesystem::path& project, const std::string& device,
                              core::Precision precision) {
  auto c = test::tiny_fit_config(project, "cuda", 2);
  c.run.device = device;
  c.run.precision = precision;
  c.run.val = false;
  return c;
}

// Parameters after `steps` training steps of the real TrainStep on `device` from the smoke
// weights, minus the initial ones (the update), on the CPU; `floor`: the initial weights rounded
// to BF16 first (the noise floor of a BF16 run).
std::vector<at::Tensor> trained_update(const core::TrainConfig& config, int steps,
                                       bool floor = false) {
  engine::ContextOptions options;
  options.need_val = false;
  options.show_progress = false;
  auto ctx = engine::build_training_context(config, options);
  load_smoke_weights(*ctx.net.model);
  if (floor) {
    torch::NoGradGuard no_grad;
    for (auto& p : ctx.net.model->parameters()) {
      p.copy_(p.to(torch::kBFloat16).to(torch::kFloat));
    }
  }
  std::vector<at::Tensor> before;
  for (const auto& p : ctx.net.model->parameters()) before.push_back(p.detach().cpu().clone());
  engine::TrainStep step(ctx);
  ctx.inputs.train_loader->start_epoch(0, /*mosaic=*/false);
  for (int64_t ni = 0; ni < steps; ++ni) {
    auto batch = ctx.inputs.train_loader->next();
    REQUIRE(batch);
    step.apply_schedule(ni);
    step.run(*batch, ni);
  }
  CHECK_FALSE(step.saw_non_finite());
  std::vector<at::Tensor> update;
  size_t k = 0;
  for (const auto& p : ctx.net.model->parameters())
    update.push_back(p.detach().cpu() - before[k++]);
  return update;
}

#ifdef TRAINER_WITH_CUDA
// The first `n` training batches (mosaic on), across epochs when one has fewer.
std::vector<data::Batch> first_batches(engine::TrainingContext& ctx, size_t n) {
  std::vector<data::Batch> out;
  for (int epoch = 0; out.size() < n; ++epoch) {
    ctx.inputs.train_loader->start_epoch(epoch, /*mosaic=*/true);
    while (auto b = ctx.inputs.train_loader->next()) {
      out.push_back(*b);
      if (out.size() == n) break;
    }
  }
  return out;
}

// Counts LibTorch's sync-debug warnings ("called a synchronizing CUDA operation") in a scope.
class SyncCounter : public c10::WarningHandler {
 public:
  SyncCounter() : guard_(this) {
    c10::cuda::warning_state().set_sync_debug_mode(c10::cuda::SyncDebugMode::L_WARN);
  }
  ~SyncCounter() override {
    c10::cuda::warning_state().set_sync_debug_mode(c10::cuda::SyncDebugMode::L_DISABLED);
  }
  void process(const c10::Warning& warning) override {
    if (warning.msg().find("synchronizing") != std::string::npos) ++count;
  }
  int count = 0;

 private:
  c10::WarningUtils::WarningHandlerGuard guard_;
};
#endif

}  // namespace

// First in the file: on its own (CTest runs one case per process) nothing has touched CUDA yet,
// the situation in which `bench interval` used to throw "did you call init?".
TEST_CASE("cuda: peak memory reset and read work before any CUDA tensor exists") {
  if (!cuda_ready()) return;
  CHECK(bench::reset_peak_memory("cuda:0"));
  CHECK(bench::read_peak_memory("cuda:0").kind == "cuda_peak_allocated");
  const int64_t bytes = int64_t{64} << 20;
  {
    const auto t = torch::empty({bytes}, torch::TensorOptions().dtype(torch::kByte).device(kCuda0));
    const auto peak = bench::read_peak_memory("cuda:0");
    CHECK(peak.device == "cuda:0");
    CHECK(peak.since_reset);
    CHECK(peak.bytes >= bytes);
  }
  CHECK(bench::reset_peak_memory("cuda"));
  CHECK(bench::read_peak_memory("cuda").bytes < bytes);
}

TEST_CASE("cuda: the autocast guard gives BF16 convolutions on CUDA and restores fp32") {
  if (!cuda_ready()) return;
  const auto x = torch::randn({1, 3, 8, 8}, torch::TensorOptions().device(kCuda0));
  const auto w = torch::randn({4, 3, 3, 3}, torch::TensorOptions().device(kCuda0));
  CHECK_FALSE(at::autocast::is_autocast_enabled(c10::kCUDA));
  {
    core::AutocastGuard outer(c10::kCUDA, at::kBFloat16, true);
    CHECK(at::autocast::is_autocast_enabled(c10::kCUDA));
    CHECK((at::autocast::get_autocast_dtype(c10::kCUDA) == at::kBFloat16));
    CHECK((at::conv2d(x, w).scalar_type() == at::kBFloat16));
    CHECK_FALSE(at::autocast::is_autocast_enabled(c10::kCPU));  // per device type
    {
      core::AutocastGuard inner(c10::kCUDA, at::kBFloat16, false);
      CHECK((at::conv2d(x, w).scalar_type() == at::kFloat));
    }
    CHECK((at::conv2d(x, w).scalar_type() == at::kBFloat16));
  }
  CHECK_FALSE(at::autocast::is_autocast_enabled(c10::kCUDA));
  CHECK((at::autocast::get_autocast_dtype(c10::kCUDA) == at::kHalf));  // LibTorch's default back
  CHECK((at::conv2d(x, w).scalar_type() == at::kFloat));
}

TEST_CASE("cuda: one batch's loss and gradients match the CPU, fp32 and BF16") {
  if (!cuda_ready()) return;
  disable_tf32();
  const Pass cpu = forward_backward(kCpu, /*bf16=*/false);
  const Pass fp32 = forward_backward(kCuda0, false);
  const Pass bf16 = forward_backward(kCuda0, true);
  const Pass noise = forward_backward(kCpu, false, /*floor=*/true);
  const double fp32_loss = std::abs(fp32.loss - cpu.loss) / cpu.loss;
  const double bf16_loss = std::abs(bf16.loss - cpu.loss) / cpu.loss;
  const double floor_loss = std::abs(noise.loss - cpu.loss) / cpu.loss;
  const double fp32_grad = relative_l2(fp32.grads, cpu.grads);
  const double bf16_grad = relative_l2(bf16.grads, cpu.grads);
  const double floor_grad = relative_l2(noise.grads, cpu.grads);
  MESSAGE(
      fmt::format("loss CPU fp32 {:.6f}, CUDA fp32 {:.6f} (rel {:.2e}), CUDA BF16 {:.6f} "
                  "(rel {:.2e}, noise floor {:.2e}); gradient rel. L2 error: fp32 {:.2e}, "
                  "BF16 {:.2e} (noise floor {:.2e})",
                  cpu.loss, fp32.loss, fp32_loss, bf16.loss, bf16_loss, floor_loss, fp32_grad,
                  bf16_grad, floor_grad));
  // fp32 without TF32: only summation order differs. BF16 (8-bit mantissa) against the fp32 CPU,
  // judged next to the noise floor (whatever sensitivity the smoke weights keep moves both).
  CHECK(fp32_loss < 1e-4);
  CHECK(fp32_grad < 1e-3);
  CHECK(within_floor(bf16_loss, floor_loss, 3e-2));
  CHECK(within_floor(bf16_grad, floor_grad, 0.1));
}

// The CUDA case above on the CPU's own BF16 kernels, which run everywhere: the comparison rule
// holds on the smoke weights, and the smoke training is what makes it hold (a fresh network's
// BF16 error is several times larger), so a CUDA failure reads as a defect of the CUDA path.
TEST_CASE(
    "smoke weights: the CPU's BF16 passes the smoke rule on them, a fresh network's does not") {
  const Pass fp32 = forward_backward(kCpu, /*bf16=*/false);
  const Pass bf16 = forward_backward(kCpu, /*bf16=*/true);
  const Pass noise = forward_backward(kCpu, false, /*floor=*/true);
  const Pass fresh32 = forward_backward(kCpu, false, false, /*fresh=*/true);
  const Pass fresh16 = forward_backward(kCpu, true, false, /*fresh=*/true);
  const double loss = std::abs(bf16.loss - fp32.loss) / fp32.loss;
  const double floor_loss = std::abs(noise.loss - fp32.loss) / fp32.loss;
  const double grad = relative_l2(bf16.grads, fp32.grads);
  const double floor_grad = relative_l2(noise.grads, fp32.grads);
  const double fresh_grad = relative_l2(fresh16.grads, fresh32.grads);
  MESSAGE(fmt::format(
      "CPU BF16 vs fp32 on the smoke weights: loss {:.6f} vs {:.6f} (rel {:.2e}, floor {:.2e}), "
      "gradient rel. L2 {:.2e} (floor {:.2e}); fresh network: loss {:.6f}, gradient rel. L2 "
      "{:.2e}",
      bf16.loss, fp32.loss, loss, floor_loss, grad, floor_grad, fresh32.loss, fresh_grad));
  CHECK(fp32.loss < 0.75 * fresh32.loss);  // the smoke training did train
  CHECK(within_floor(loss, floor_loss, 3e-2));
  CHECK(within_floor(grad, floor_grad, 0.1));
  CHECK(fresh_grad > 2 * grad);
}

TEST_CASE("cuda: three training steps (MuSGD, EMA) update the weights as on the CPU") {
  if (!cuda_ready()) return;
  disable_tf32();
  test::TempDir dir;
  const auto cpu = trained_update(tiny_config(dir.path(), "cpu", core::Precision::kFP32), 3);
  const auto fp32 = trained_update(tiny_config(dir.path(), "0", core::Precision::kFP32), 3);
  const auto bf16 = trained_update(tiny_config(dir.path(), "0", core::Precision::kBF16), 3);
  const auto noise =
      trained_update(tiny_config(dir.path(), "cpu", core::Precision::kFP32), 3, /*floor=*/true);
  const double e32 = relative_l2(fp32, cpu), e16 = relative_l2(bf16, cpu);
  const double e_floor = relative_l2(noise, cpu);
  MESSAGE(
      fmt::format("3 steps: relative L2 error of the weight update, CUDA fp32 {:.2e}, CUDA "
                  "BF16 {:.2e} (against the CPU in fp32; noise floor {:.2e})",
                  e32, e16, e_floor));
  // Newton-Schulz runs in BF16 on both devices (ns_dtype default), hence 1e-2 even for fp32.
  CHECK(e32 < 1e-2);
  CHECK(within_floor(e16, e_floor, 0.15));
}

TEST_CASE("cuda: one validation batch: decode matches the CPU, NMS on the GPU equals the CPU's") {
  if (!cuda_ready()) return;
  disable_tf32();
  auto cpu_net = smoke_model(kCpu);
  auto gpu_net = smoke_model(kCuda0);
  cpu_net->eval();
  gpu_net->eval();
  torch::NoGradGuard no_grad;
  const auto images = fixed_batch().first;
  const auto cpu_raw = cpu_net->forward_for_loss(images);
  const auto gpu_raw = gpu_net->forward_for_loss(images.to(kCuda0));
  const auto cpu_decoded = cpu_net->head()->decode(cpu_raw.one2many);
  const auto gpu_decoded = gpu_net->head()->decode(gpu_raw.one2many);
  // Boxes in pixels (up to 128) and sigmoid scores: 1e-3 absolute covers fp32 reordering.
  CHECK(torch::allclose(gpu_decoded.cpu(), cpu_decoded, /*rtol=*/1e-4, /*atol=*/1e-3));
  model::PredictOptions options;
  options.use_one2many = true;
  const auto on_gpu = gpu_net->postprocess(gpu_raw, options);
  const auto on_cpu = model::non_max_suppression(gpu_decoded.cpu(), options);
  REQUIRE(on_gpu.size() == on_cpu.size());
  for (size_t b = 0; b < on_gpu.size(); ++b) {
    CAPTURE(b);
    CHECK(on_gpu[b].size(0) > 0);
    CHECK(torch::equal(on_gpu[b].cpu(), on_cpu[b]));  // exact: same greedy, same float IoU
  }
  const auto cpu_own = cpu_net->postprocess(cpu_raw, options);
  MESSAGE(
      fmt::format("detections image 0: CPU {}, CUDA {}", cpu_own[0].size(0), on_gpu[0].size(0)));
}

TEST_CASE("cuda: the validator scores one batch on CUDA as on the CPU") {
  if (!cuda_ready()) return;
  disable_tf32();
  const auto spec = data::load_dataset_yaml(test::tiny_synthetic_dataset());
  auto val_set = std::make_shared<data::DatasetIndex>(data::load_split(spec, data::Split::kVal));
  test::TempDir dir;
  auto config = tiny_config(dir.path(), "cpu", core::Precision::kFP32);
  auto options = engine::ValidationOptions::from_config(config);
  options.max_batches = 1;
  auto run_on = [&](const c10::Device& device) {
    auto net = smoke_model(device);
    engine::Validator validator(val_set, spec, config, device);
    return validator.run(*net, nullptr, options);
  };
  const auto cpu = run_on(kCpu);
  const auto gpu = run_on(kCuda0);
  CHECK(gpu.images == cpu.images);
  CHECK(gpu.metric.num_gt == cpu.metric.num_gt);
  CHECK(gpu.metric.map50_95 == doctest::Approx(cpu.metric.map50_95).epsilon(0.05));
}

TEST_CASE("cuda: device=1 trains on the second GPU and synchronises it") {
  if (!cuda_ready(/*min_devices=*/2)) return;
#ifdef TRAINER_WITH_CUDA
  test::TempDir dir;
  engine::ContextOptions options;
  options.need_val = false;
  options.show_progress = false;
  auto ctx =
      engine::build_training_context(tiny_config(dir.path(), "1", core::Precision::kBF16), options);
  CHECK((ctx.device == c10::Device(c10::kCUDA, 1)));
  CHECK(c10::cuda::current_device() == 1);
  for (const auto& p : ctx.net.model->parameters()) CHECK((p.device() == ctx.device));
  engine::TrainStep step(ctx);
  ctx.inputs.train_loader->start_epoch(0, false);
  auto batch = ctx.inputs.train_loader->next();
  REQUIRE(batch);
  step.apply_schedule(0);
  step.run(*batch, 0);
  engine::synchronize(ctx.device);
  CHECK_FALSE(step.saw_non_finite());
  using c10::CachingAllocator::StatType;
  const auto on0 = c10::cuda::CUDACachingAllocator::getDeviceStats(0);
  CHECK(on0.allocated_bytes[static_cast<size_t>(StatType::AGGREGATE)].peak == 0);
#endif
}

TEST_CASE("cuda: a checkpoint written on CUDA resumes on the CPU, and the reverse") {
  if (!cuda_ready()) return;
  const std::vector<std::pair<std::string, std::string>> legs = {{"0", "cpu"}, {"cpu", "0"}};
  for (const auto& leg : legs) {
    const std::string first = leg.first, second = leg.second;
    CAPTURE(first);
    test::TempDir dir;
    auto config = tiny_config(dir.path(), first, core::Precision::kBF16);
    config.run.save_period = 1;
    const auto straight = engine::fit(config);
    REQUIRE(straight.epochs_completed == 2);
    const auto half = straight.run_dir / "weights" / "epoch1.ckpt";
    REQUIRE(std::filesystem::exists(half));
    const auto resumed = engine::fit(engine::resume_config(half, {"device=" + second}));
    CHECK(resumed.epochs_completed == 1);
    const auto last = engine::load_checkpoint(straight.run_dir / "weights" / "last.ckpt");
    CHECK(last.epoch == 1);
    for (const auto& [key, t] : last.model) {
      CAPTURE(key);
      CHECK(t.device().is_cpu());
      if (t.is_floating_point()) CHECK(torch::isfinite(t).all().item<bool>());
    }
  }
}

TEST_CASE("cuda: host syncs of one training step and one validation batch (sync-debug count)") {
  if (!cuda_ready()) return;
#ifdef TRAINER_WITH_CUDA
  test::TempDir dir;
  engine::ContextOptions options;
  options.need_val = false;
  options.show_progress = false;
  auto config = tiny_config(dir.path(), "0", core::Precision::kBF16);
  auto ctx = engine::build_training_context(config, options);
  engine::TrainStep step(ctx);
  ctx.inputs.train_loader->start_epoch(0, false);
  int train_syncs = 0;
  for (int64_t ni = 0; ni < 3; ++ni) {  // two warm-up steps, the third counted
    auto batch = ctx.inputs.train_loader->next();
    REQUIRE(batch);
    step.apply_schedule(ni);
    engine::synchronize(ctx.device);
    SyncCounter counter;
    step.run(*batch, ni);
    train_syncs = counter.count;
  }
  // NMS of one batch of four images: candidate counts and the bitmask, nothing per image.
  torch::manual_seed(5);
  const auto preds =
      torch::cat({torch::rand({4, 4, 2000}) * 120, torch::rand({4, 6, 2000})}, 1).to(ctx.device);
  engine::synchronize(ctx.device);
  int nms_syncs = 0;
  {
    SyncCounter counter;
    model::PredictOptions predict;
    const auto kept = model::non_max_suppression(preds, predict);
    nms_syncs = counter.count;
  }
  const std::string report =
      fmt::format("{{\"device\": \"{}\", \"train_step_syncs\": {}, \"nms_batch_syncs\": {}}}\n",
                  torch::cuda::is_available() ? "cuda:0" : "none", train_syncs, nms_syncs);
  MESSAGE("sync-debug count: " << report);
  if (const char* path = std::getenv("TRAINER_SYNC_REPORT")) std::ofstream(path) << report;
  CHECK(nms_syncs <= 2);
#endif
}

TEST_CASE("cuda: cuda_graph captures the step, replays it without syncs, and follows eager") {
  // fp32 without TF32, so the two runs differ only by the capturable optimizer's rounding and
  // bf16 Newton-Schulz (the CPU test's bounds, tests/engine/static_step/test_cuda_graph_step.cpp).
  // The graph run: 3 eager warm-up batches, A captured on the 4th, B at the 4th's optimizer step,
  // replays from then on; a state replacement (rollback) recaptures both after a new warm-up.
  if (!cuda_ready()) return;
#ifdef TRAINER_WITH_CUDA
  disable_tf32();
  struct Case {
    const char* optimizer;
    int64_t nbs;
    double tolerance;
  };
  for (const Case c : {Case{"MuSGD", 4, 2e-3}, Case{"AdamW", 8, 1e-4}}) {
    CAPTURE(c.optimizer);
    test::TempDir dir;
    engine::ContextOptions options;
    options.need_val = false;
    options.show_progress = false;
    auto config = tiny_config(dir.path(), "0", core::Precision::kFP32);
    config.run.static_shapes = true;
    config.data.max_instances = 12;
    config.optim.optimizer = c.optimizer;
    config.optim.nbs = c.nbs;
    auto plain = engine::build_training_context(config, options);
    config.run.cuda_graph = true;
    config.run.name = "cuda_graph";
    auto graph = engine::build_training_context(config, options);
    load_smoke_weights(*plain.net.model);
    load_smoke_weights(*graph.net.model);
    engine::TrainStep plain_step(plain);
    engine::TrainStep graph_step(graph);
    REQUIRE(graph_step.graph() != nullptr);
    const std::vector<data::Batch> batches = first_batches(plain, 16);
    int replay_syncs = -1;
    for (int64_t ni = 0; ni < 10; ++ni) {
      plain_step.apply_schedule(ni);
      plain_step.run(batches[static_cast<size_t>(ni)], ni);
      graph_step.apply_schedule(ni);
      engine::synchronize(graph.device);
      SyncCounter counter;
      graph_step.run(batches[static_cast<size_t>(ni)], ni);
      if (ni == 9) replay_syncs = counter.count;
    }
    engine::synchronize(graph.device);
    CHECK_FALSE(graph_step.graph()->fell_back());
    CHECK(graph_step.graph()->replaying());
    CHECK(graph_step.graph()->captures() == 2);
    CHECK(replay_syncs == 0);
    std::vector<at::Tensor> a, b;
    for (const auto& p : plain.net.trainable) a.push_back(p.detach());
    for (const auto& p : graph.net.trainable) b.push_back(p.detach());
    const double gap = relative_l2(b, a);
    MESSAGE("cuda_graph vs eager static step, relative L2 of the weights after 10 steps: " << gap);
    CHECK(gap < c.tolerance);
    CHECK(relative_l2({graph_step.mean_loss_items()}, {plain_step.mean_loss_items()}) < 1e-3);
    CHECK_FALSE(graph_step.saw_non_finite());
    graph_step.state_replaced("test: a rollback");
    for (int64_t ni = 10; ni < 16; ++ni) {
      graph_step.apply_schedule(ni);
      graph_step.run(batches[static_cast<size_t>(ni)], ni);
    }
    CHECK(graph_step.graph()->captures() == 4);
    CHECK_FALSE(graph_step.saw_non_finite());
  }
#endif
}

TEST_CASE("cuda: cuda_graph 50-step loss trajectory and peak memory against the eager step") {
  // The run's real precision (BF16 autocast) and schedule, 50 steps of each arm from the same
  // weights on the same batches: the per-step total loss of both, and each arm's peak allocated
  // bytes. Written to TRAINER_GRAPH_REPORT (gpu_check.sh lifts it into gpu_check.json). The check
  // is loose on purpose: BF16 and bf16 Newton-Schulz make two arms drift apart by rounding; the
  // trajectories must stay finite and close on average (mean relative difference under 5%).
  if (!cuda_ready()) return;
#ifdef TRAINER_WITH_CUDA
  test::TempDir dir;
  engine::ContextOptions options;
  options.need_val = false;
  options.show_progress = false;
  constexpr int64_t kSteps = 50;
  std::vector<std::vector<double>> losses(2);
  std::vector<int64_t> peaks(2);
  std::vector<data::Batch> batches;
  for (int arm = 0; arm < 2; ++arm) {
    auto config = tiny_config(dir.path(), "0", core::Precision::kBF16);
    config.run.static_shapes = true;
    config.run.cuda_graph = arm == 1;
    config.run.name = arm == 1 ? "graph" : "eager";
    auto ctx = engine::build_training_context(config, options);
    load_smoke_weights(*ctx.net.model);
    if (batches.empty()) batches = first_batches(ctx, static_cast<size_t>(kSteps));
    engine::synchronize(ctx.device);
    REQUIRE(bench::reset_peak_memory("cuda:0"));
    engine::TrainStep step(ctx);
    double previous_sum = 0;
    for (int64_t ni = 0; ni < kSteps; ++ni) {
      step.apply_schedule(ni);
      step.run(batches[static_cast<size_t>(ni)], ni);
      const double sum =
          (step.mean_loss_items() * static_cast<double>(step.batches())).sum().item<double>();
      losses[static_cast<size_t>(arm)].push_back(sum - previous_sum);
      previous_sum = sum;
    }
    peaks[static_cast<size_t>(arm)] = bench::read_peak_memory("cuda:0").bytes;
    if (arm == 1) {
      CHECK(step.graph()->replaying());
      CHECK_FALSE(step.graph()->fell_back());
    }
  }
  double mean_rel = 0;
  for (int64_t i = 0; i < kSteps; ++i) {
    const double a = losses[0][static_cast<size_t>(i)], b = losses[1][static_cast<size_t>(i)];
    CHECK(std::isfinite(b));
    mean_rel += std::abs(a - b) / std::max(std::abs(a), 1e-9) / kSteps;
  }
  CHECK(mean_rel < 0.05);
  const std::string report = fmt::format(
      "{{\"steps\": {}, \"eager_loss\": [{:.6g}], \"graph_loss\": [{:.6g}], "
      "\"mean_relative_difference\": {:.6g}, \"eager_peak_bytes\": {}, \"graph_peak_bytes\": "
      "{}}}\n",
      kSteps, fmt::join(losses[0], ", "), fmt::join(losses[1], ", "), mean_rel, peaks[0], peaks[1]);
  MESSAGE("cuda_graph trajectory: mean relative difference " << mean_rel << ", peak eager "
                                                             << peaks[0] << " graph " << peaks[1]);
  if (const char* path = std::getenv("TRAINER_GRAPH_REPORT")) std::ofstream(path) << report;
#endif
}

TEST_CASE("cuda: CudaGraphStep replays what it captured, and a failed capture falls back cleanly") {
  // A counter body: every executed run adds 1. One eager warm-up batch and one eager optimizer
  // step, then the capture (which records without running) and its immediate replay, then plain
  // replays: the counter says how many runs really happened. A body with a host read cannot be
  // captured: the step logs, falls back to eager for good, and gives its pool's memory back.
  if (!cuda_ready()) return;
#ifdef TRAINER_WITH_CUDA
  const auto images = torch::zeros({1, 3, 4, 4}, torch::kUInt8);
  loss::GtTargets targets;
  targets.labels = torch::zeros({1, 2, 1}, torch::TensorOptions().device(kCuda0));
  {
    engine::CudaGraphStep step(kCuda0, /*warmup_batches=*/1);
    const auto counter = torch::zeros({}, torch::TensorOptions().device(kCuda0));
    const auto add = [&](const at::Tensor&, const loss::GtTargets&) { counter.add_(1); };
    step.accumulate(images, targets, add);                              // eager warm-up
    step.optimizer_step([] {}, [&] { counter.add_(10); });              // eager step
    for (int i = 0; i < 4; ++i) step.accumulate(images, targets, add);  // capture + 3 replays
    step.optimizer_step([] {}, [&] { counter.add_(10); });              // capture B + its run
    step.optimizer_step([] {}, [&] { counter.add_(10); });              // replay B
    CHECK(step.replaying());
    CHECK(step.captures() == 2);
    CHECK_FALSE(step.fell_back());
    CHECK(counter.item<float>() == doctest::Approx(1 + 10 + 4 + 10 + 10));
    step.invalidate("test");
    CHECK_FALSE(step.replaying());
    CHECK(step.eager_batches() == 0);
  }
  {
    engine::CudaGraphStep step(kCuda0, 1);
    const auto counter = torch::zeros({}, torch::TensorOptions().device(kCuda0));
    const auto read = [&](const at::Tensor&, const loss::GtTargets&) {
      counter.add_(1);
      (void)counter.item<float>();  // a host read: illegal inside a capture
    };
    step.accumulate(images, targets, read);
    step.optimizer_step([] {}, [] {});
    engine::synchronize(kCuda0);
    c10::cuda::CUDACachingAllocator::emptyCache();
    using c10::CachingAllocator::StatType;
    const auto reserved = [] {
      return c10::cuda::CUDACachingAllocator::getDeviceStats(0)
          .reserved_bytes[static_cast<size_t>(StatType::AGGREGATE)]
          .current;
    };
    const int64_t before = reserved();
    step.accumulate(images, targets, read);  // the capture fails; the batch runs eagerly
    CHECK(step.fell_back());
    CHECK_FALSE(step.replaying());
    step.accumulate(images, targets, read);  // eager from now on
    CHECK(counter.item<float>() == doctest::Approx(3));
    c10::cuda::CUDACachingAllocator::emptyCache();
    CHECK(reserved() <= before);  // nothing left in an abandoned pool
    // The device still works for ordinary work after the abandoned capture.
    CHECK(torch::ones({8}, torch::TensorOptions().device(kCuda0)).sum().item<float>() == 8);
  }
#endif
}

TEST_CASE("cuda: step scalars deliver every step's value while the host runs ahead of the device") {
  // The staging buffers take turns: the host writes step k+1's values while step k's copy may
  // still be queued behind slow device work. Each step queues a long matmul, then uploads lr = k
  // and adds the slot to a running sum on the device, with no sync; a value overwritten before its
  // copy read it (the race two buffers must prevent) would change the sum.
  if (!cuda_ready()) return;
#ifdef TRAINER_WITH_CUDA
  optim::StepScalars scalars({"lr", "kept"}, kCuda0);
  const auto options = torch::TensorOptions().dtype(torch::kDouble).device(kCuda0);
  const auto sum = torch::zeros({}, options);
  const auto kept_sum = torch::zeros({}, options);
  const auto slow = torch::randn({2048, 2048}, torch::TensorOptions().device(kCuda0));
  scalars.set("kept", 2.0);
  constexpr int kSteps = 200;
  for (int k = 0; k < kSteps; ++k) {
    (void)torch::mm(slow, slow);  // keeps the device behind the host
    scalars.set("lr", static_cast<double>(k));
    scalars.upload();
    sum.add_(scalars.slot("lr"));
    kept_sum.add_(scalars.slot("kept"));
  }
  CHECK(sum.item<double>() == kSteps * (kSteps - 1) / 2.0);  // integers: exact in fp64
  CHECK(kept_sum.item<double>() == 2.0 * kSteps);

  // How far ahead: behind a device busy for about a second, two steps' values are written and
  // queued without waiting (the stream is still busy after them); the third step's first write
  // waits for the first step's copy, so the device has finished the sleep by then.
  optim::StepScalars ahead({"lr"}, kCuda0);
  at::cuda::sleep(int64_t{2'000'000'000});  // about a second at 2 GHz
  at::cuda::CUDAEvent slept;
  slept.record(c10::cuda::getCurrentCUDAStream());
  for (int k = 0; k < 2; ++k) {
    ahead.set("lr", static_cast<double>(k));
    ahead.upload();
  }
  CHECK_FALSE(slept.query());  // still sleeping: the host waited for no copy
  ahead.set("lr", 2.0);        // waits for the first copy, queued after the sleep
  CHECK(slept.query());
  engine::synchronize(kCuda0);
  CHECK(ahead.slot("lr").item<double>() == 1.0);
#endif
}

TEST_CASE("cuda: bench interval's breakdown under cuda_graph times the replays and says so") {
  if (!cuda_ready()) return;
#ifdef TRAINER_WITH_CUDA
  test::TempDir dir;
  auto config = tiny_config(dir.path(), "0", core::Precision::kBF16);
  config.run.static_shapes = true;
  config.run.cuda_graph = true;
  config.data.max_instances = 12;
  engine::IntervalOptions options;
  options.warmup = 4;  // 3 eager warm-up batches and the capture
  options.measure = 3;
  options.breakdown = true;
  const engine::IntervalResult result = engine::measure_intervals(config, options);
  CHECK(result.cuda_graph);
  REQUIRE(result.stages.backward.size() == 3);
  for (size_t i = 0; i < 3; ++i) {
    CHECK(result.stages.forward_loss[i] == 0.0);  // inside the backward replay
    CHECK(result.stages.clip[i] == 0.0);          // inside the optimizer replay
    CHECK(result.stages.backward[i] > 0.0);
  }
#endif
}
