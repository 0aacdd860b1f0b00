// Layer table and totals (see model_summary.h).
#include "model/model_summary.h"

#include <fmt/format.h>
#include <torch/torch.h>

#include <memory>
#include <tuple>
#include <utility>

#include "model/blocks.h"
#include "model/detect_head.h"

namespace trainer::model {
namespace {

std::string from_text(const std::vector<int>& from) {
  if (from.size() == 1) return std::to_string(from[0]);
  std::string s = "[";
  for (size_t i = 0; i < from.size(); ++i) s += (i ? ", " : "") + std::to_string(from[i]);
  return s + "]";
}

// Whether a tower holds a Conv with SiLU, so that a deep copy of it owns a SiLU of its own.
bool has_activated_conv(const torch::nn::Module& tower) {
  for (const auto& m : tower.modules(/*include_self=*/false)) {
    if (auto conv = std::dynamic_pointer_cast<ConvImpl>(m); conv && conv->has_activation()) {
      return true;
    }
  }
  return false;
}

// Module counts with the reference's conventions. The current reference counts leaf modules
// (named_modules() without children, each instance once); older ones counted all modules. Each
// reference Conv also owns an activation module: one SiLU instance shared by all Convs (counted
// once) or a fresh Identity when act=False; each SPPF owns a MaxPool2d. The end-to-end head
// builds one2one_cv2 and one2one_cv3 by deepcopy, which gives each copy its own SiLU. Our Convs
// apply SiLU functionally and SPPF calls max_pool2d, so those are added here.
std::pair<int64_t, int64_t> reference_module_counts(const torch::nn::Module& model) {
  int64_t leaves = 0, all = 0, extra = 0;
  bool any_silu = false;
  for (const auto& m : model.modules(/*include_self=*/true)) {
    ++all;
    if (m->children().empty()) ++leaves;
    if (auto conv = std::dynamic_pointer_cast<ConvImpl>(m)) {
      if (conv->has_activation()) {
        any_silu = true;
      } else {
        ++extra;  // its own nn.Identity
      }
    } else if (std::dynamic_pointer_cast<SppfImpl>(m)) {
      ++extra;  // nn.MaxPool2d
    } else if (std::dynamic_pointer_cast<DetectImpl>(m)) {
      for (const auto& item : m->named_children()) {
        if (item.key().rfind("one2one_", 0) == 0 && has_activated_conv(*item.value())) {
          ++extra;  // the deep copy's own SiLU
        }
      }
    }
  }
  extra += any_silu ? 1 : 0;
  return {leaves + extra, all + extra};
}

}  // namespace

std::optional<ReferenceFigures> reference_figures(const ModelName& name) {
  const std::string key = name.display();
  // Measured with the reference (tests/parity/reference_info.py): model_info's leaf modules,
  // named_modules() for all modules, get_flops(model, 640) unrounded.
  static const std::vector<std::pair<std::string, ReferenceFigures>> table = {
      {"yolo26n", {2572280, 6.2396672, 260, 454}},
      {"yolo26s", {10009784, 23.0793216, 260, 454}},
      {"yolo26m", {21896248, 75.6350976, 280, 490}},
      {"yolo26l", {26299704, 94.1582336, 392, 687}},
      {"yolo26x", {58993368, 210.0747264, 392, 687}},
      {"yolo11n", {2624080, 6.6733184, 181, 319}},
      {"yolo11s", {9458752, 21.8363392, 181, 319}},
      {"yolo11m", {20114688, 68.643072, 231, 409}},
      {"yolo11l", {25372160, 87.8510592, 357, 631}},
      {"yolo11x", {56966176, 196.3150848, 357, 631}},
      // Pose models: PoseModel("<name>.yaml", nc=80) through the same model_info / get_flops.
      {"yolo26n-pose", {3747554, 10.7864192, 363, 596}},
      {"yolo26s-pose", {11870498, 29.8194816, 363, 596}},
      {"yolo26m-pose", {24344482, 86.1353856, 383, 632}},
      {"yolo26l-pose", {28747938, 104.6585216, 495, 829}},
      {"yolo26x-pose", {62914350, 226.8538368, 495, 829}},
      {"yolo11n-pose", {2908507, 7.7751632, 196, 344}},
      {"yolo11s-pose", {9948811, 23.5962064, 196, 344}},
      {"yolo11m-pose", {20973273, 72.3929088, 246, 434}},
      {"yolo11l-pose", {26230745, 91.600896, 372, 656}},
      {"yolo11x-pose", {58889881, 204.70464, 372, 656}},
      // OBB models: OBBModel("<name>.yaml", nc=80), the same way.
      {"yolo26n-obb", {2715614, 6.7347968, 291, 505}},
      {"yolo26s-obb", {10582142, 25.0501632, 291, 505}},
      {"yolo26m-obb", {23593918, 83.0272512, 311, 541}},
      {"yolo26l-obb", {27997374, 101.5503872, 423, 738}},
      {"yolo26x-obb", {62811678, 226.6925568, 423, 738}},
      {"yolo11n-obb", {2695747, 6.9208832, 196, 344}},
      {"yolo11s-obb", {9744931, 22.82176, 196, 344}},
      {"yolo11m-obb", {20963523, 72.3391488, 246, 434}},
      {"yolo11l-obb", {26220995, 91.547136, 372, 656}},
      {"yolo11x-obb", {58875331, 204.624, 372, 656}},
      // Segmentation models: SegmentationModel("<name>.yaml", nc=80), the same way.
      {"yolo26n-seg", {3126280, 10.6303744, 309, 534}},
      {"yolo26s-seg", {11505800, 37.6619008, 309, 534}},
      {"yolo26m-seg", {27112072, 132.7808512, 329, 570}},
      {"yolo26l-seg", {31515528, 151.3039872, 441, 767}},
      {"yolo26x-seg", {70693800, 338.2033408, 441, 767}},
      {"yolo11n-seg", {2876848, 9.9593344, 203, 355}},
      {"yolo11s-seg", {10113248, 33.3635072, 203, 355}},
      {"yolo11m-seg", {22420896, 113.9681792, 253, 445}},
      {"yolo11l-seg", {27678368, 133.1761664, 379, 667}},
      {"yolo11x-seg", {62142656, 297.8924032, 379, 667}},
  };
  if (name.family == ModelFamily::kCustomYaml) return std::nullopt;
  for (const auto& [n, f] : table) {
    if (n == key) return f;
  }
  return std::nullopt;
}

std::string thousands(int64_t value) {
  std::string digits = std::to_string(value < 0 ? -value : value);
  std::string out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return value < 0 ? "-" + out : out;
}

ModelSummary summarize_model(YoloModelImpl& model, int64_t imgsz) {
  ModelSummary s;
  const auto layers = model.layer_modules();
  const auto& spec = model.spec();
  for (size_t i = 0; i < spec.layers.size(); ++i) {
    LayerRow row;
    row.index = static_cast<int>(i);
    row.from = from_text(spec.layers[i].from);
    row.repeats = spec.layers[i].repeats;
    for (const auto& p : layers[i]->parameters()) row.params += p.numel();
    row.module = spec.layers[i].module_name();
    row.arguments = spec.layers[i].arguments();
    s.rows.push_back(row);
  }
  for (const auto& p : model.parameters()) {
    s.parameters += p.numel();
    if (p.requires_grad()) s.gradients += p.numel();
  }
  std::tie(s.layers, s.modules) = reference_module_counts(model);
  {
    // The reference profiles the model in eval mode as it is after construction: both heads,
    // then the decode of the head it predicts with (YOLO11's DFL is a counted 1x1 conv).
    torch::NoGradGuard no_grad;
    const bool was_training = model.is_training();
    model.eval();  // keep BN statistics untouched; the counted ops are the same
    FlopCountScope scope(&s.flops_at_32);
    const auto raw = model.forward_for_loss(torch::zeros({1, 3, 32, 32}));
    model.head()->decode_output(raw, model.end2end());
    if (was_training) model.train();
  }
  // Convs and BNs scale with the image area; the attention products with the square of the
  // token count, i.e. of the area. The reference extrapolates from stride-wide proxy images and
  // gets the same figure at multiples of 32.
  const auto& f = s.flops_at_32;
  const double area = static_cast<double>(imgsz) * static_cast<double>(imgsz) / (32.0 * 32.0);
  s.gflops =
      2.0 * ((f.conv_macs + 4.0 * f.norm_elements) * area + f.attention_macs * area * area) / 1e9;
  return s;
}

std::string format_summary(const ModelSummary& summary, const std::string& title) {
  std::string out = fmt::format("{:>3}{:>20}{:>3}{:>10}  {:<10}{}\n", "", "from", "n", "params",
                                "module", "arguments");
  for (const auto& r : summary.rows) {
    out += fmt::format("{:>3}{:>20}{:>3}{:>10}  {:<10}{}\n", r.index, r.from, r.repeats, r.params,
                       r.module, r.arguments);
  }
  out += fmt::format("{} summary: {} layers, {} parameters, {} gradients, {:.1f} GFLOPs\n", title,
                     summary.layers, thousands(summary.parameters), thousands(summary.gradients),
                     summary.gflops);
  return out;
}

}  // namespace trainer::model
