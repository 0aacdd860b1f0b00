// Attention, PSABlock and C2PSA (see attention.h).
// Tested by tests/parity/test_model_parity.cpp: Attention/PSABlock/C2PSA forward inside
//   yolo26n/yolo11n raw head outputs equal the reference (needs the Python oracle); structure in
//   test_model_keys.
#include "model/attention.h"

#include <torch/torch.h>

#include <cmath>

#include "core/error.h"

namespace trainer::model {

AttentionImpl::AttentionImpl(int64_t dim, int64_t num_heads, double attn_ratio)
    : num_heads_(num_heads),
      head_dim_(dim / num_heads),
      key_dim_(static_cast<int64_t>(static_cast<double>(dim / num_heads) * attn_ratio)),
      scale_(std::pow(static_cast<double>(key_dim_), -0.5)) {
  const int64_t h = dim + 2 * key_dim_ * num_heads;
  qkv_ = register_module("qkv", Conv(dim, h, 1, 1, 1, false));
  proj_ = register_module("proj", Conv(dim, dim, 1, 1, 1, false));
  pe_ = register_module("pe", Conv(dim, dim, 3, 1, dim, false));
}

torch::Tensor AttentionImpl::forward(const torch::Tensor& x) {
  const int64_t b = x.size(0), c = x.size(1), h = x.size(2), w = x.size(3), n = h * w;
  auto parts = qkv_->forward(x)
                   .view({b, num_heads_, 2 * key_dim_ + head_dim_, n})
                   .split_with_sizes({key_dim_, key_dim_, head_dim_}, 2);
  const auto& q = parts[0];
  const auto& k = parts[1];
  const auto& v = parts[2];
  if (FlopCount* count = active_flop_count()) {
    // The reference's count sees these two products through torch.matmul: (N x key_dim)(key_dim
    // x N) and (head_dim x N)(N x N) per head.
    count->attention_macs +=
        static_cast<double>(b * num_heads_ * n * n) * static_cast<double>(key_dim_ + head_dim_);
  }
  auto attn = (torch::matmul(q.transpose(-2, -1), k) * scale_).softmax(-1);
  auto out = torch::matmul(v, attn.transpose(-2, -1)).view({b, c, h, w}) +
             pe_->forward(v.reshape({b, c, h, w}));
  return proj_->forward(out);
}

PsaBlockImpl::PsaBlockImpl(int64_t c, double attn_ratio, int64_t num_heads, bool shortcut)
    : add_(shortcut) {
  attn_ = register_module("attn", Attention(c, num_heads, attn_ratio));
  ffn_ = register_module("ffn", Chain());
  ffn_->append(Conv(c, 2 * c, 1).ptr());
  ffn_->append(Conv(2 * c, c, 1, 1, 1, false).ptr());
}

torch::Tensor PsaBlockImpl::forward(const torch::Tensor& x) {
  auto y = add_ ? x + attn_->forward(x) : attn_->forward(x);
  return add_ ? y + ffn_->forward(y) : ffn_->forward(y);
}

C2PsaImpl::C2PsaImpl(int64_t c1, int64_t c2, int64_t n, double e)
    : c_(static_cast<int64_t>(static_cast<double>(c1) * e)) {
  if (c1 != c2) {
    throw core::ConfigError("C2PSA needs equal input and output channels, got " +
                            std::to_string(c1) + " and " + std::to_string(c2));
  }
  cv1_ = register_module("cv1", Conv(c1, 2 * c_, 1, 1));
  cv2_ = register_module("cv2", Conv(2 * c_, c1, 1));
  m_ = register_module("m", Chain());
  for (int64_t i = 0; i < n; ++i) {
    m_->append(PsaBlock(c_, 0.5, std::max<int64_t>(c_ / 64, 1)).ptr());
  }
}

torch::Tensor C2PsaImpl::forward(const torch::Tensor& x) {
  auto ab = cv1_->forward(x).split({c_, c_}, 1);
  return cv2_->forward(torch::cat({ab[0], m_->forward(ab[1])}, 1));
}

}  // namespace trainer::model
