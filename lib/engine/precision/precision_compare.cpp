// See precision_compare.h.
// Tested by tests/engine/precision/test_precision_policy.cpp: compare_precisions: bf16 forward ops,
//   per-layer error vs floor, loss fp32-only, gradients and BN stats fp32.
#include "engine/precision/precision_compare.h"

#include <torch/torch.h>

#include <cmath>

#include "core/autocast_guard.h"
#include "engine/precision/model_state_guard.h"
#include "loss/yolo_loss.h"
#include "model/yolo_model.h"

namespace trainer::engine {
namespace {

struct Pass {
  std::vector<at::Tensor> activations;  // per layer, fp32 copies
  std::vector<at::Tensor> box, cls;     // head levels, fp32
  at::Tensor items;
  std::vector<at::Tensor> grads;  // per parameter (undefined = no gradient)
};

double relative(double diff_sq, double ref_sq) {
  return ref_sq > 0.0 ? std::sqrt(diff_sq / ref_sq) : std::sqrt(diff_sq);
}

double relative_error(const std::vector<at::Tensor>& a, const std::vector<at::Tensor>& b) {
  double diff = 0.0, ref = 0.0;
  for (size_t i = 0; i < a.size(); ++i) {
    if (!a[i].defined() || !b[i].defined()) continue;
    const auto x = a[i].to(torch::kDouble), y = b[i].to(torch::kDouble);
    diff += (x - y).square().sum().item<double>();
    ref += x.square().sum().item<double>();
  }
  return relative(diff, ref);
}

double cosine(const std::vector<at::Tensor>& a, const std::vector<at::Tensor>& b) {
  double dot = 0.0, na = 0.0, nb = 0.0;
  for (size_t i = 0; i < a.size(); ++i) {
    if (!a[i].defined() || !b[i].defined()) continue;
    const auto x = a[i].to(torch::kDouble), y = b[i].to(torch::kDouble);
    dot += (x * y).sum().item<double>();
    na += x.square().sum().item<double>();
    nb += y.square().sum().item<double>();
  }
  return na > 0.0 && nb > 0.0 ? dot / std::sqrt(na * nb) : 1.0;
}

std::string short_type(const std::string& name) {
  std::string s = name.substr(name.rfind(':') == std::string::npos ? 0 : name.rfind(':') + 1);
  if (s.size() > 4 && s.compare(s.size() - 4, 4, "Impl") == 0) s.resize(s.size() - 4);
  return s;
}

}  // namespace

PrecisionComparison compare_precisions(model::YoloModelImpl& model, loss::YoloLoss& criterion,
                                       const at::Tensor& images, const loss::LossTargets& targets,
                                       const c10::Device& device) {
  std::vector<at::Tensor> params;
  std::vector<std::string> param_names;
  for (const auto& p : model.named_parameters()) {
    params.push_back(p.value());
    param_names.push_back(p.key());
  }
  const int64_t reg_max4 = 4 * model.reg_max();
  std::vector<std::string> bf16_dtypes(model.layer_modules().size());
  std::string head_dtype;
  PrecisionComparison out;
  ModelStateGuard restore(model);  // the model leaves as it came (statistics, gradients, mode)

  const auto run = [&](bool bf16, const at::Tensor& input) {
    Pass pass;
    model.set_layer_observer([&](size_t i, const at::Tensor& t) {
      if (pass.activations.size() <= i) pass.activations.resize(i + 1);
      pass.activations[i] = t.detach().to(torch::kFloat).clone();
      if (bf16) bf16_dtypes[i] = std::string(c10::toString(t.scalar_type()));
      return t;
    });
    // Same starting state for every pass: BN running statistics as they were, no gradients.
    restore.restore_buffers();
    for (auto& p : params) p.mutable_grad() = at::Tensor();
    loss::LossResult result;
    {
      core::AutocastGuard autocast(device.type(), at::kBFloat16, bf16);
      model::DetectOutput raw;
      {
        std::unique_ptr<OpDtypeCensus> census;
        if (bf16) census = std::make_unique<OpDtypeCensus>();
        raw = model.forward_for_loss(input);
        if (bf16) out.forward_ops = census->counts();
      }
      if (bf16) head_dtype = c10::toString(raw.one2many.at(0).scalar_type());
      for (const auto& level : raw.one2many) {
        pass.box.push_back(level.narrow(1, 0, reg_max4).detach().to(torch::kFloat));
        pass.cls.push_back(
            level.narrow(1, reg_max4, level.size(1) - reg_max4).detach().to(torch::kFloat));
      }
      std::unique_ptr<OpDtypeCensus> census;
      if (bf16) census = std::make_unique<OpDtypeCensus>();
      result = criterion(raw, targets, input.size(0));
      if (bf16) out.loss_low_precision_ops = census->low_precision_compute_ops();
    }
    result.total.backward();
    model.set_layer_observer(nullptr);
    pass.items = result.items.detach().to(torch::kDouble).cpu();
    for (const auto& p : params) {
      pass.grads.push_back(p.grad().defined() ? p.grad().detach().clone() : at::Tensor());
      if (bf16 && p.grad().defined() && p.grad().scalar_type() != torch::kFloat) {
        out.gradients_fp32 = false;
      }
    }
    if (bf16) {
      for (const auto& b : model.named_buffers()) {
        const bool stat = b.key().find("running_") != std::string::npos;
        if (stat && b.value().scalar_type() != torch::kFloat) out.running_stats_fp32 = false;
      }
    }
    return pass;
  };

  const Pass fp32 = run(false, images);
  const Pass bf16 = run(true, images);
  // The noise floor: fp32 on the images rounded to bf16, i.e. a perturbation of the size of one
  // bf16 rounding. Where bf16 autocast differs from fp32 no more than this does, the difference
  // is the network's own sensitivity (a fresh network is chaotic, and the assigner's top-k picks
  // flip on ties), not a numerical fault of bf16.
  const Pass rounded = run(false, images.to(at::kBFloat16).to(images.scalar_type()));

  const auto modules = model.layer_modules();
  for (size_t i = 0; i < modules.size(); ++i) {
    LayerComparison layer;
    layer.index = static_cast<int64_t>(i);
    layer.type = short_type(modules[i]->name());
    const std::string prefix = "model." + std::to_string(i) + ".";
    std::vector<at::Tensor> ga, gb, gr;
    for (size_t p = 0; p < params.size(); ++p) {
      if (param_names[p].rfind(prefix, 0) != 0) continue;
      ga.push_back(fp32.grads[p]);
      gb.push_back(bf16.grads[p]);
      gr.push_back(rounded.grads[p]);
    }
    layer.gradient_error = relative_error(ga, gb);
    layer.gradient_cosine = cosine(ga, gb);
    layer.floor_gradient_error = relative_error(ga, gr);
    if (i < fp32.activations.size() && fp32.activations[i].defined()) {
      layer.activation_error = relative_error({fp32.activations[i]}, {bf16.activations[i]});
      layer.floor_activation_error =
          relative_error({fp32.activations[i]}, {rounded.activations[i]});
      layer.bf16_dtype = bf16_dtypes[i];
    } else {  // the head
      const auto both = [](const Pass& p) {
        std::vector<at::Tensor> v = p.box;
        v.insert(v.end(), p.cls.begin(), p.cls.end());
        return v;
      };
      layer.activation_error = relative_error(both(fp32), both(bf16));
      layer.floor_activation_error = relative_error(both(fp32), both(rounded));
      layer.bf16_dtype = head_dtype;
    }
    out.layers.push_back(layer);
  }
  out.head_box_error = relative_error(fp32.box, bf16.box);
  out.head_class_error = relative_error(fp32.cls, bf16.cls);
  for (int64_t k = 0; k < fp32.items.numel(); ++k) {
    out.loss_fp32.push_back(fp32.items[k].item<double>());
    out.loss_bf16.push_back(bf16.items[k].item<double>());
    out.loss_floor.push_back(rounded.items[k].item<double>());
  }
  out.gradient_error = relative_error(fp32.grads, bf16.grads);
  out.gradient_cosine = cosine(fp32.grads, bf16.grads);
  out.floor_gradient_error = relative_error(fp32.grads, rounded.grads);
  out.floor_gradient_cosine = cosine(fp32.grads, rounded.grads);
  return out;
}

}  // namespace trainer::engine
