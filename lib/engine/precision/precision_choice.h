// Which precision a run computes its forward pass and loss in: `precision: auto | bf16 | fp32`.
//
// Why: BF16 autocast nearly halves a training step on CPUs with AMX/AVX512-BF16 and is the native
// fast path of Ampere-and-later GPUs, but it is slower where the hardware emulates it and a
// numerical fault in it (a kernel, an op that should have stayed fp32) would silently cost
// accuracy. `auto` takes BF16 only where the device runs it natively, the model is large enough
// for it to pay (on a CPU) and a start-up check (the reference's check_amp idea: the model's
// outputs in fp32 and in BF16 on a fixed input) agrees. Every input is what the hardware and the
// model are, never a timing: two identical commands decide alike on a loaded machine, and a
// resume decides as its run did. The decision is logged and recorded in args.yaml, the
// checkpoint and benchmark JSON; `trainer bench precision` times both precisions.
#pragma once

#include <c10/core/Device.h>

#include <optional>
#include <string>
#include <vector>

#include "core/config.h"

namespace trainer::model {
class YoloModelImpl;
}
namespace trainer::distributed {
class Group;
}

namespace trainer::engine {

// Whether `device` computes BF16 natively (not emulated through fp32): a CUDA device of compute
// capability 8.0 or later (Ampere+); a CPU with AMX-BF16 or AVX512-BF16 (cpuinfo, as LibTorch
// detects them). `why` names what was found, for the log.
struct NativeBf16 {
  bool native = false;
  std::string why;
};
NativeBf16 native_bf16(const c10::Device& device);

// The start-up check: the largest relative L2 error of any single layer between fp32 and BF16
// autocast, on a fixed smooth test pattern (and its mirror image) of imgsz x imgsz, without grad,
// in training mode (BatchNorm's batch statistics keep every layer's signal at unit scale, as in
// the steps it vouches for). Layer by layer: each layer's BF16 run gets the fp32 run's input, so
// the error is the layer's own and not the accumulated sensitivity of a fresh network (which
// amplifies any perturbation, a 0.4% input rounding included, to tens of percent by the neck's
// end). The head's outputs are compared centred per channel. Infinity when an output is not
// finite. Buffers and mode are restored.
// `errors`, when given, receives each layer's error in order, then each head level's.
double bf16_check_error(model::YoloModelImpl& model, const c10::Device& device, int64_t imgsz,
                        std::vector<double>* errors = nullptr);

// The check passes below this error. BF16 keeps 8 significant bits (relative rounding 2^-9 =
// 0.2%); one layer on its own differs from fp32 by 0.4-1.1% and the head (several convolutions,
// compared centred) by 4-5% (tests/engine/precision/test_precision_policy.cpp, yolo26n and the tiny
// models); a broken BF16 path (a kernel fault, a signal riding on a large offset, overflow)
// differs by ~100% or is not finite.
inline constexpr double kBf16CheckTolerance = 0.25;

// The time of one training forward + backward of `model` at `batch` x imgsz, in fp32 and under
// BF16 autocast: the minimum of `repeats` timed steps each after one warm-up step each, the two
// precisions alternating. The model's buffers (BN statistics), gradients and mode are restored.
// For `trainer bench precision`; `auto` never times.
struct StepTimes {
  double fp32_ms = 0.0;
  double bf16_ms = 0.0;
  double speedup() const { return bf16_ms > 0.0 ? fp32_ms / bf16_ms : 0.0; }
};
StepTimes time_training_steps(model::YoloModelImpl& model, const c10::Device& device, int64_t imgsz,
                              int64_t batch, int repeats = 2);

// On a CPU, native BF16 is not always faster: packing and reorders cost more than the halved
// arithmetic saves on small convolutions. Measured on a 2-core AVX512-BF16 CPU (README,
// "Precision"): yolo26n trains 1.20x faster at 320 px (1.55 GFLOPs per image) and 1.41x at 640
// (6.2), the demo (yolo26n at 256 px, 0.99) 1.28x, the tiny test model yolo26t at 256 px (0.2)
// 1.01x. `auto` on a CPU therefore takes BF16 only for a model of at least this many forward
// GFLOPs per image at the run's imgsz (model::summarize_model's figure), about where the measured
// gain reaches 1.10x between those points; AMX gains more than AVX512-BF16, so the bound is
// conservative there.
inline constexpr double kCpuBf16MinGflops = 0.5;

// What `auto` wants before the start-up check: bf16 where the device computes it natively and,
// on a CPU, the model reaches kCpuBf16MinGflops at imgsz. `why` is the part of the log line that
// says so. A pure function of the hardware and the model.
struct AutoRule {
  bool bf16 = false;
  std::string why;
};
AutoRule auto_precision_rule(const NativeBf16& native, bool cuda, double gflops_per_image,
                             int64_t imgsz);

struct PrecisionDecision {
  core::Precision precision = core::Precision::kFP32;  // kBF16 or kFP32, never kAuto
  std::string reason;                                  // one line for the log and benchmarks
  std::optional<double> check_error;                   // when the start-up check ran
  std::optional<double> gflops;                        // per image at imgsz, when auto on a CPU
};

// `auto` after the rule: fp32 when the rule says so, else bf16 when the start-up check passes
// (a failed check logs a warning and gives fp32).
PrecisionDecision decide_auto_precision(const AutoRule& rule, model::YoloModelImpl& model,
                                        const c10::Device& device, int64_t imgsz);

// Resolves `requested` for `model` on `device`: kBF16 and kFP32 are taken as given (an explicit
// bf16 on a device without native support only logs that it will be slow); kAuto = bf16 when
// auto_precision_rule wants it and the check passes, else fp32 (a failed check logs a warning).
// Data-parallel: every rank decides, and the run uses bf16 only when all agree (`group` may be
// null).
PrecisionDecision choose_precision(core::Precision requested, model::YoloModelImpl& model,
                                   const c10::Device& device, int64_t imgsz,
                                   distributed::Group* group = nullptr);

}  // namespace trainer::engine
