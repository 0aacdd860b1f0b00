// The smallest building blocks: Conv (conv + BN + SiLU), DWConv, and the plain containers the
// reference's nn.Sequential / nn.Upsample / Concat stand for (reference-behaviour.md 4.2).
//
// Why: every larger block is a composition of these, and their registered child names ("conv",
// "bn", "0", "1", ...) are what make our parameter names equal the reference's state-dict keys.
#pragma once

#include <torch/nn/module.h>
#include <torch/nn/modules/batchnorm.h>
#include <torch/nn/modules/conv.h>
#include <torch/nn/pimpl.h>

#include "model/flop_count.h"

#include <functional>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

namespace trainer::model {

// BatchNorm settings that the reference's initialize_weights applies to every BN layer.
constexpr double kBnEps = 1e-3;
constexpr double kBnMomentum = 0.03;

// A module with a single-tensor forward, so containers can hold mixed block types.
class UnaryModule : public torch::nn::Module {
 public:
  virtual torch::Tensor forward(const torch::Tensor& x) = 0;
};

// Replaces a BatchNorm2d's training-mode forward (data-parallel sync_bn: statistics over every
// rank). Called with the layer and its input; returns the normalised output.
using BatchNormOverride =
    std::function<torch::Tensor(torch::nn::BatchNorm2dImpl& bn, const torch::Tensor& x)>;

// Conv2d(bias=false, padding k/2) -> BatchNorm2d -> SiLU (or identity when act is false).
class ConvImpl : public UnaryModule {
 public:
  ConvImpl(int64_t c1, int64_t c2, int64_t k = 1, int64_t s = 1, int64_t g = 1, bool act = true);
  torch::Tensor forward(const torch::Tensor& x) override;
  bool has_activation() const { return act_; }

  // Folds the BatchNorm's running statistics and affine into the convolution (weight scaled per
  // output channel, a bias added) and removes the BN, as the reference's fuse() does before
  // inference: the eval-mode output is unchanged up to rounding, one pass over the activations
  // fewer. Irreversible (training needs the BN): only for an inference copy (model/fuse.h).
  void fuse_batchnorm();
  bool fused() const { return bn.is_empty(); }

  // While the BN is in training mode, `f` normalises instead of it (nullptr: BN's own forward).
  void set_batch_norm_override(std::shared_ptr<const BatchNormOverride> f) {
    bn_override_ = std::move(f);
  }

  torch::nn::Conv2d conv{nullptr};
  torch::nn::BatchNorm2d bn{nullptr};

 private:
  bool act_;
  std::shared_ptr<const BatchNormOverride> bn_override_;
};
TORCH_MODULE(Conv);

// Sets (or with nullptr clears) the override on every Conv of `model`; returns how many.
int64_t set_batch_norm_override(torch::nn::Module& model, const BatchNormOverride& f);

// Depth-wise Conv: groups = gcd(c1, c2).
Conv make_dwconv(int64_t c1, int64_t c2, int64_t k = 1, int64_t s = 1, bool act = true);

// Copies every parameter of `from` into the same-shaped `to`, in registration order: the
// reference deep-copies one-to-many towers into their one2one_* twins, so both start equal.
void copy_parameters(const torch::nn::Module& from, torch::nn::Module& to);

// Adds a plain Conv2d's multiply-accumulates to the active FlopCount (if any).
void count_conv2d(const torch::nn::Conv2dImpl& conv, const torch::Tensor& output);

// nn.Sequential: children named "0", "1", ... applied in order.
class ChainImpl : public UnaryModule {
 public:
  template <class M>
  void append(std::shared_ptr<M> m) {
    register_module(std::to_string(steps_.size()), m);
    if constexpr (std::is_same_v<M, torch::nn::Conv2dImpl>) {
      steps_.push_back([m](const torch::Tensor& x) {
        auto y = m->forward(x);
        count_conv2d(*m, y);
        return y;
      });
    } else {
      steps_.push_back([m](const torch::Tensor& x) { return m->forward(x); });
    }
  }
  torch::Tensor forward(const torch::Tensor& x) override;
  size_t size() const { return steps_.size(); }

 private:
  std::vector<std::function<torch::Tensor(const torch::Tensor&)>> steps_;
};
TORCH_MODULE(Chain);

// nn.Upsample(scale_factor=2, mode="nearest").
class Upsample2xImpl : public UnaryModule {
 public:
  torch::Tensor forward(const torch::Tensor& x) override;
};
TORCH_MODULE(Upsample2x);

// Concat along channels; a module only so the layer list keeps the reference's indices.
class ConcatImpl : public torch::nn::Module {
 public:
  torch::Tensor forward(const std::vector<torch::Tensor>& xs);
};
TORCH_MODULE(Concat);

}  // namespace trainer::model
