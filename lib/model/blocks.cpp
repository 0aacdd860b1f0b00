// Bottleneck, C3k, C3k2 and SPPF (see blocks.h).
// Tested by tests/parity/test_model_parity.cpp: Bottleneck/C3k/C3k2/SPPF forward inside
//   yolo26n/yolo11n head outputs equal the reference (needs oracle); keys/param counts in
//   test_model_keys/test_model_params.
#include "model/blocks.h"

#include <torch/torch.h>

#include "model/attention.h"

namespace trainer::model {

BottleneckImpl::BottleneckImpl(int64_t c1, int64_t c2, bool shortcut, int64_t g, int64_t k1,
                               int64_t k2, double e)
    : add_(shortcut && c1 == c2) {
  const auto c_ = static_cast<int64_t>(static_cast<double>(c2) * e);
  cv1_ = register_module("cv1", Conv(c1, c_, k1, 1));
  cv2_ = register_module("cv2", Conv(c_, c2, k2, 1, g));
}

torch::Tensor BottleneckImpl::forward(const torch::Tensor& x) {
  auto y = cv2_->forward(cv1_->forward(x));
  return add_ ? x + y : y;
}

C3kImpl::C3kImpl(int64_t c1, int64_t c2, int64_t n, bool shortcut, int64_t g, double e, int64_t k) {
  const auto c_ = static_cast<int64_t>(static_cast<double>(c2) * e);
  cv1_ = register_module("cv1", Conv(c1, c_, 1, 1));
  cv2_ = register_module("cv2", Conv(c1, c_, 1, 1));
  cv3_ = register_module("cv3", Conv(2 * c_, c2, 1));
  m_ = register_module("m", Chain());
  for (int64_t i = 0; i < n; ++i) {
    m_->append(Bottleneck(c_, c_, shortcut, g, k, k, 1.0).ptr());
  }
}

torch::Tensor C3kImpl::forward(const torch::Tensor& x) {
  return cv3_->forward(torch::cat({m_->forward(cv1_->forward(x)), cv2_->forward(x)}, 1));
}

C3k2Impl::C3k2Impl(int64_t c1, int64_t c2, int64_t n, bool c3k, double e, bool attn, int64_t g,
                   bool shortcut)
    : c_(static_cast<int64_t>(static_cast<double>(c2) * e)) {
  cv1_ = register_module("cv1", Conv(c1, 2 * c_, 1, 1));
  cv2_ = register_module("cv2", Conv((2 + n) * c_, c2, 1));
  m_ = register_module("m", torch::nn::ModuleList());
  for (int64_t i = 0; i < n; ++i) {
    std::shared_ptr<UnaryModule> block;
    if (attn) {
      // attn takes priority over c3k; the PSABlock has max(c / 64, 1) heads.
      auto seq = Chain();
      seq->append(Bottleneck(c_, c_, shortcut, g).ptr());
      seq->append(PsaBlock(c_, 0.5, std::max<int64_t>(c_ / 64, 1)).ptr());
      block = seq.ptr();
    } else if (c3k) {
      block = C3k(c_, c_, 2, shortcut, g).ptr();
    } else {
      block = Bottleneck(c_, c_, shortcut, g).ptr();
    }
    m_->push_back(block);
    blocks_.push_back(block);
  }
}

torch::Tensor C3k2Impl::forward(const torch::Tensor& x) {
  auto chunks = cv1_->forward(x).chunk(2, 1);
  std::vector<torch::Tensor> y(chunks.begin(), chunks.end());
  for (const auto& block : blocks_) y.push_back(block->forward(y.back()));
  return cv2_->forward(torch::cat(y, 1));
}

SppfImpl::SppfImpl(int64_t c1, int64_t c2, int64_t k, int64_t n, bool shortcut, bool cv1_act)
    : k_(k), n_(n), add_(shortcut && c1 == c2) {
  const int64_t c_ = c1 / 2;
  cv1_ = register_module("cv1", Conv(c1, c_, 1, 1, 1, cv1_act));
  cv2_ = register_module("cv2", Conv(c_ * (n + 1), c2, 1, 1));
}

torch::Tensor SppfImpl::forward(const torch::Tensor& x) {
  std::vector<torch::Tensor> y{cv1_->forward(x)};
  for (int64_t i = 0; i < n_; ++i) {
    y.push_back(torch::max_pool2d(y.back(), {k_, k_}, {1, 1}, {k_ / 2, k_ / 2}));
  }
  auto out = cv2_->forward(torch::cat(y, 1));
  return add_ ? x + out : out;
}

}  // namespace trainer::model
