// Layer table and totals (see model_summary.h).
#include "model/model_summary.h"

#include <fmt/format.h>
#include <torch/torch.h>

#include <memory>
#include <tuple>
#include <utility>

#include "model/blocks.h"

namespace trainer::model {
namespace {

std::string from_text(const std::vector<int>& from) {
  if (from.size() == 1) return std::to_string(from[0]);
  std::string s = "[";
  for (size_t i = 0; i < from.size(); ++i) s += (i ? ", " : "") + std::to_string(from[i]);
  return s + "]";
}

// Module counts with the reference's conventions. The current reference counts leaf modules
// (named_modules() without children, each instance once); older ones counted all modules. Each
// reference Conv also owns an activation module: one SiLU instance shared by all Convs (counted
// once) or a fresh Identity when act=False; each SPPF owns a MaxPool2d. Our Convs apply SiLU
// functionally and SPPF calls max_pool2d, so those are added here.
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
    }
  }
  extra += any_silu ? 1 : 0;
  return {leaves + extra, all + extra};
}

}  // namespace

std::optional<ReferenceFigures> reference_figures(const ModelName& name) {
  const std::string key = name.display();
  static const std::vector<std::pair<std::string, ReferenceFigures>> table = {
      {"yolo26n", {2572280, 6.1, 260, 0}}, {"yolo26s", {10009784, 22.8, 0}},
      {"yolo26m", {21896248, 75.4, 0}},    {"yolo26l", {26299704, 93.8, 0}},
      {"yolo26x", {58993368, 209.5, 0}},   {"yolo11n", {2624080, 6.6, 0, 319}},
      {"yolo11s", {9458752, 21.7, 0}},     {"yolo11m", {20114688, 68.5, 0}},
      {"yolo11l", {25372160, 87.6, 0}},    {"yolo11x", {56966176, 196.0, 0}},
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

ModelSummary summarize_model(DetectionModelImpl& model, int64_t imgsz) {
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
    // The reference profiles the model as it is after construction (training form, both heads).
    torch::NoGradGuard no_grad;
    const bool was_training = model.is_training();
    model.eval();  // keep BN statistics untouched; the counted ops are the same
    FlopCountScope scope(&s.flops_at_32);
    model.forward_train(torch::zeros({1, 3, 32, 32}));
    if (was_training) model.train();
  }
  const auto& f = s.flops_at_32;
  const double scale = static_cast<double>(imgsz) / 32.0;
  s.gflops =
      2.0 * (f.conv_macs + 4.0 * f.norm_elements + f.upsample_elements) * scale * scale / 1e9;
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
