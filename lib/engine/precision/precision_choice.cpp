// See precision_choice.h.
// Tested by tests/engine/precision/test_precision_policy.cpp: fp32/bf16 as asked, auto rule by
//   device/GFLOPs bound, bf16 check error and fp32 fallback, StepTimes speedup.
#include "engine/precision/precision_choice.h"

#include <ATen/cpu/Utils.h>
#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>

#include "core/autocast_guard.h"
#include "distributed/group.h"
#include "engine/device/device.h"
#include "engine/precision/model_state_guard.h"
#include "model/model_summary.h"
#include "model/yolo_model.h"

#ifdef TRAINER_WITH_CUDA
#include <ATen/cuda/CUDAContext.h>
#endif

namespace trainer::engine {
namespace {

bool capability(const std::unordered_map<std::string, c10::IValue>& caps, const char* name) {
  const auto it = caps.find(name);
  return it != caps.end() && it->second.isBool() && it->second.toBool();
}

// A smooth, deterministic RGB pattern in [0, 1] (stripes and rings at a few scales): closer to an
// image than noise, the same on every machine.
torch::Tensor test_pattern(int64_t imgsz) {
  const auto opts = torch::TensorOptions().dtype(torch::kFloat);
  const auto y = torch::arange(imgsz, opts).view({imgsz, 1}) / static_cast<double>(imgsz);
  const auto x = torch::arange(imgsz, opts).view({1, imgsz}) / static_cast<double>(imgsz);
  const auto r = 0.5 + 0.5 * torch::sin(x * 23.0 + y * 7.0);
  const auto g = 0.5 + 0.5 * torch::cos((x - 0.4).square().add((y - 0.6).square()).sqrt() * 40.0);
  const auto b = 0.5 + 0.5 * torch::sin(x * 5.0) * torch::cos(y * 11.0);
  return torch::stack({r, g, b}).unsqueeze(0).contiguous();
}

double training_step_ms(model::YoloModelImpl& model, const torch::Tensor& images,
                        const c10::Device& device, bool bf16) {
  const auto start = std::chrono::steady_clock::now();
  at::Tensor loss;
  {
    core::AutocastGuard autocast(device.type(), at::kBFloat16, bf16);
    const model::DetectOutput out = model.forward_for_loss(images);
    loss = torch::zeros({}, images.options());
    for (const auto& level : out.one2many) loss = loss + level.to(torch::kFloat).square().mean();
    for (const auto& level : out.one2one) loss = loss + level.to(torch::kFloat).square().mean();
  }
  loss.backward();
  synchronize(device);
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
      .count();
}

}  // namespace

StepTimes time_training_steps(model::YoloModelImpl& model, const c10::Device& device, int64_t imgsz,
                              int64_t batch, int repeats) {
  ModelStateGuard restore(model);
  model.train();
  const auto images = test_pattern(imgsz).expand({batch, 3, imgsz, imgsz}).contiguous().to(device);
  StepTimes t{std::numeric_limits<double>::infinity(), std::numeric_limits<double>::infinity()};
  for (int r = -1; r < repeats; ++r) {  // r = -1: the warm-up step of each
    for (const bool bf16 : {false, true}) {
      for (auto& p : model.parameters()) p.mutable_grad() = at::Tensor();
      const double ms = training_step_ms(model, images, device, bf16);
      if (r < 0) continue;
      double& best = bf16 ? t.bf16_ms : t.fp32_ms;
      best = std::min(best, ms);
    }
  }
  return t;
}

AutoRule auto_precision_rule(const NativeBf16& native, bool cuda, double gflops_per_image,
                             int64_t imgsz) {
  if (!native.native) return {false, native.why};
  if (cuda) return {true, native.why};
  if (gflops_per_image < kCpuBf16MinGflops) {
    return {false, fmt::format("{}, but the model computes {:.2f} GFLOPs per image at {} px, under "
                               "the {:g} that bf16 needs on a CPU to be faster",
                               native.why, gflops_per_image, imgsz, kCpuBf16MinGflops)};
  }
  return {true, fmt::format("{}; {:.1f} GFLOPs per image at {} px (bf16 pays from {:g} on a CPU)",
                            native.why, gflops_per_image, imgsz, kCpuBf16MinGflops)};
}

NativeBf16 native_bf16(const c10::Device& device) {
  if (device.is_cuda()) {
#ifdef TRAINER_WITH_CUDA
    const auto index = device.has_index() ? device.index() : c10::DeviceIndex{0};
    const auto* props = at::cuda::getDeviceProperties(index);
    const bool ampere = props->major >= 8;
    return {ampere, fmt::format("{} (compute capability {}.{}{})", props->name, props->major,
                                props->minor, ampere ? "" : ": bf16 needs 8.0 or later")};
#else
    return {false, "CUDA device in a build without CUDA"};
#endif
  }
  const auto caps = at::cpu::get_cpu_capabilities();
  const bool amx = capability(caps, "amx_bf16");
  const bool avx512 = capability(caps, "avx512_bf16");
  if (amx) return {true, "CPU has AMX-BF16"};
  if (avx512) return {true, "CPU has AVX512-BF16"};
  return {false, "CPU has neither AMX-BF16 nor AVX512-BF16 (bf16 would be emulated, slower)"};
}

double bf16_check_error(model::YoloModelImpl& model, const c10::Device& device, int64_t imgsz,
                        std::vector<double>* errors) {
  ModelStateGuard restore(model);
  model.train();
  torch::NoGradGuard no_grad;
  const auto pattern = test_pattern(imgsz);
  const auto images = torch::cat({pattern, pattern.flip({3})}).to(device);
  // Pass 1, fp32: every layer's output. BN statistics are reset between the passes so both see
  // the same state (training mode updates them).
  std::vector<at::Tensor> reference;
  model.set_layer_observer([&](size_t i, const at::Tensor& t) {
    if (reference.size() <= i) reference.resize(i + 1);
    reference[i] = t.detach().clone();
    return t;
  });
  const model::DetectOutput fp32 = model.forward_for_loss(images);
  restore.restore_buffers();
  // Pass 2, bf16, layer by layer: each layer gets the fp32 pass's input and its output is
  // compared with the fp32 pass's output, so the error is that layer's own (no accumulation).
  double worst = 0.0;
  bool finite = true;
  const auto note = [&](const at::Tensor& a, const at::Tensor& b) {
    const auto x = a.to(torch::kDouble), y = b.to(torch::kDouble);
    if (!torch::isfinite(x).all().item<bool>() || !torch::isfinite(y).all().item<bool>()) {
      finite = false;
      return;
    }
    const double scale = x.norm().item<double>();
    const double diff = (x - y).norm().item<double>();
    const double e = scale > 0.0 ? diff / scale : diff;
    if (errors) errors->push_back(e);
    worst = std::max(worst, e);
  };
  model.set_layer_observer([&](size_t i, const at::Tensor& t) {
    note(reference.at(i), t);
    return reference.at(i);
  });
  model::DetectOutput bf16;
  {
    core::AutocastGuard autocast(device.type(), at::kBFloat16, true);
    bf16 = model.forward_for_loss(images);
  }
  model.set_layer_observer(nullptr);
  // The head's outputs, centred per channel: a fresh head's biases (class logits near -10) would
  // otherwise dominate the norm and hide an error in what the convolutions compute.
  const auto centred = [](const at::Tensor& t) {
    const auto x = t.to(torch::kDouble);
    return x - x.mean({0, 2, 3}, /*keepdim=*/true);
  };
  for (size_t level = 0; level < fp32.one2many.size(); ++level) {
    note(centred(fp32.one2many[level]), centred(bf16.one2many[level]));
  }
  return finite ? worst : std::numeric_limits<double>::infinity();
}

namespace {

// This rank's own answer for `auto`: the rule (on a CPU, from the model's FLOPs at imgsz), then
// the start-up check.
PrecisionDecision local_auto_decision(const NativeBf16& native, model::YoloModelImpl& model,
                                      const c10::Device& device, int64_t imgsz) {
  const bool count = native.native && !device.is_cuda();
  const double gflops = count ? model::summarize_model(model, imgsz).gflops : 0.0;
  PrecisionDecision d = decide_auto_precision(
      auto_precision_rule(native, device.is_cuda(), gflops, imgsz), model, device, imgsz);
  if (count) d.gflops = gflops;
  return d;
}

}  // namespace

PrecisionDecision decide_auto_precision(const AutoRule& rule, model::YoloModelImpl& model,
                                        const c10::Device& device, int64_t imgsz) {
  PrecisionDecision d;
  if (!rule.bf16) {
    d.reason = fmt::format("precision: auto -> fp32: {}", rule.why);
    return d;
  }
  const double error = bf16_check_error(model, device, imgsz);
  d.check_error = error;
  if (!(std::isfinite(error) && error < kBf16CheckTolerance)) {
    d.reason = fmt::format(
        "precision: auto -> fp32: the start-up check failed (a layer's fp32 and bf16 outputs "
        "differ by {:.3g}, tolerance {:g})",
        error, kBf16CheckTolerance);
    spdlog::warn("{}; training in fp32 (give precision=bf16 to force it)", d.reason);
    return d;
  }
  d.precision = core::Precision::kBF16;
  d.reason = fmt::format(
      "precision: auto -> bf16: {}; start-up check: layers differ by at most {:.2g} (< {:g})",
      rule.why, error, kBf16CheckTolerance);
  return d;
}

PrecisionDecision choose_precision(core::Precision requested, model::YoloModelImpl& model,
                                   const c10::Device& device, int64_t imgsz,
                                   distributed::Group* group) {
  const NativeBf16 native = native_bf16(device);
  if (requested == core::Precision::kFP32)
    return {core::Precision::kFP32, "precision: fp32 (asked)", {}, {}};
  if (requested == core::Precision::kBF16) {
    if (!native.native) {
      spdlog::warn(
          "precision: bf16 on a device without native bf16 ({}): expect it to be slower "
          "than fp32",
          native.why);
    }
    return {core::Precision::kBF16, "precision: bf16 (asked)", {}, {}};
  }
  PrecisionDecision d = local_auto_decision(native, model, device, imgsz);
  // Data-parallel: one agreed answer (every rank calls this once); bf16 only if all said bf16.
  const bool mine = d.precision == core::Precision::kBF16;
  if (group && group->any(!mine) && mine) {
    d.precision = core::Precision::kFP32;
    d.reason =
        "precision: auto -> fp32: another rank's rule or check chose fp32 (this "
        "rank's: " +
        d.reason + ")";
  }
  return d;
}

}  // namespace trainer::engine
