// The CSP-style blocks of the YOLO backbone and neck: Bottleneck, C3k, C3k2 (a C2f whose inner
// blocks are Bottleneck, C3k, or Bottleneck + PSABlock) and SPPF (reference-behaviour.md 4.2).
//
// Why: these carry almost all parameters; their child names (cv1, cv2, cv3, m.0, ...) and hidden
// widths (int(c * e)) must follow the reference exactly for the state-dict keys and counts.
#pragma once

#include <torch/nn/modules/container/modulelist.h>

#include <vector>

#include "model/conv.h"

namespace trainer::model {

// cv1 = Conv(c1, c_, k1), cv2 = Conv(c_, c2, k2, g), c_ = int(c2 * e); residual if shortcut and
// c1 == c2.
class BottleneckImpl : public UnaryModule {
 public:
  BottleneckImpl(int64_t c1, int64_t c2, bool shortcut = true, int64_t g = 1, int64_t k1 = 3,
                 int64_t k2 = 3, double e = 0.5);
  torch::Tensor forward(const torch::Tensor& x) override;

 private:
  Conv cv1_{nullptr}, cv2_{nullptr};
  bool add_;
};
TORCH_MODULE(Bottleneck);

// C3k: cv3(cat(m(cv1 x), cv2 x)) with n Bottleneck(c_, c_, k=(k, k), e=1.0), c_ = int(c2 * e).
class C3kImpl : public UnaryModule {
 public:
  C3kImpl(int64_t c1, int64_t c2, int64_t n = 1, bool shortcut = true, int64_t g = 1,
          double e = 0.5, int64_t k = 3);
  torch::Tensor forward(const torch::Tensor& x) override;

 private:
  Conv cv1_{nullptr}, cv2_{nullptr}, cv3_{nullptr};
  Chain m_{nullptr};
};
TORCH_MODULE(C3k);

// C3k2(c1, c2, n, c3k, e, attn, g, shortcut): C2f with c = int(c2 * e), cv1 = Conv(c1, 2c),
// cv2 = Conv((2 + n) c, c2); each inner block takes the last chunk and appends its output.
class C3k2Impl : public UnaryModule {
 public:
  C3k2Impl(int64_t c1, int64_t c2, int64_t n = 1, bool c3k = false, double e = 0.5,
           bool attn = false, int64_t g = 1, bool shortcut = true);
  torch::Tensor forward(const torch::Tensor& x) override;

 private:
  int64_t c_;
  Conv cv1_{nullptr}, cv2_{nullptr};
  torch::nn::ModuleList m_{nullptr};
  std::vector<std::shared_ptr<UnaryModule>> blocks_;
};
TORCH_MODULE(C3k2);

// SPPF(c1, c2, k, n, shortcut): cv1 = Conv(c1, c1/2, 1) (no activation in the YOLO26 form), n
// chained max-pools (k, stride 1), cv2 = Conv(c1/2 (n+1), c2, 1); residual if shortcut and
// c1 == c2. The YOLO11 form (cv1_act = true, shortcut = false) keeps the SiLU in cv1.
class SppfImpl : public UnaryModule {
 public:
  SppfImpl(int64_t c1, int64_t c2, int64_t k = 5, int64_t n = 3, bool shortcut = false,
           bool cv1_act = false);
  torch::Tensor forward(const torch::Tensor& x) override;

 private:
  Conv cv1_{nullptr}, cv2_{nullptr};
  int64_t k_, n_;
  bool add_;
};
TORCH_MODULE(Sppf);

}  // namespace trainer::model
