// Position-sensitive attention: Attention, PSABlock and C2PSA (reference-behaviour.md 4.2).
//
// Why: YOLO11 and YOLO26 put one C2PSA after the SPPF, and YOLO26 adds a PSABlock inside the last
// neck C3k2; the head split (key_dim = head_dim * attn_ratio) decides the qkv width and so the
// parameter count.
#pragma once

#include "model/conv.h"

namespace trainer::model {

// qkv = Conv(dim, dim + 2 key_dim heads, 1, act=false) viewed as (B, heads, 2 key_dim + head_dim,
// N) and split into q, k, v; out = proj(v softmax(q^T k scale)^T + pe(v)), with pe a depth-wise
// 3x3 Conv without activation.
class AttentionImpl : public UnaryModule {
 public:
  AttentionImpl(int64_t dim, int64_t num_heads = 8, double attn_ratio = 0.5);
  torch::Tensor forward(const torch::Tensor& x) override;

 private:
  int64_t num_heads_, head_dim_, key_dim_;
  double scale_;
  Conv qkv_{nullptr}, proj_{nullptr}, pe_{nullptr};
};
TORCH_MODULE(Attention);

// x = x + attn(x); x = x + ffn(x), ffn = Conv(c, 2c, 1) -> Conv(2c, c, 1, act=false).
class PsaBlockImpl : public UnaryModule {
 public:
  PsaBlockImpl(int64_t c, double attn_ratio = 0.5, int64_t num_heads = 4, bool shortcut = true);
  torch::Tensor forward(const torch::Tensor& x) override;

 private:
  Attention attn_{nullptr};
  Chain ffn_{nullptr};
  bool add_;
};
TORCH_MODULE(PsaBlock);

// C2PSA(c1, c2, n, e): c = int(c1 e); cv1 = Conv(c1, 2c) split into (a, b); b goes through n
// PSABlocks with c / 64 heads (at least 1 here: the reference would divide by zero below 64
// channels, which only our tiny test widths reach); cv2 = Conv(2c, c1) on cat(a, b).
class C2PsaImpl : public UnaryModule {
 public:
  C2PsaImpl(int64_t c1, int64_t c2, int64_t n = 1, double e = 0.5);
  torch::Tensor forward(const torch::Tensor& x) override;

 private:
  int64_t c_;
  Conv cv1_{nullptr}, cv2_{nullptr};
  Chain m_{nullptr};
};
TORCH_MODULE(C2Psa);

}  // namespace trainer::model
