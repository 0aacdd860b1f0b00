// Counting the work of a forward pass from the shapes it sees, the way the reference's model
// summary does (thop): conv multiply-accumulates, normalised elements, and the attention products
// it counts functionally (torch.matmul). Nearest upsampling costs nothing there, so it is not
// counted here.
//
// Why a scoped counter: the count comes from the real module tree at a real input size, so it
// cannot drift from the model; outside a FlopCountScope the forward pays one pointer check.
#pragma once

namespace trainer::model {

struct FlopCount {
  double conv_macs = 0;       // sum over Conv2d outputs of (c_in / groups) * kh * kw (no bias)
  double norm_elements = 0;   // elements through BatchNorm
  double attention_macs = 0;  // q^T k and v attn^T products: heads * N^2 * (key_dim + head_dim)
};

// The counter of the current thread while a FlopCountScope lives, else nullptr.
FlopCount* active_flop_count();

class FlopCountScope {
 public:
  explicit FlopCountScope(FlopCount* count);
  ~FlopCountScope();
  FlopCountScope(const FlopCountScope&) = delete;
  FlopCountScope& operator=(const FlopCountScope&) = delete;

 private:
  FlopCount* previous_;
};

}  // namespace trainer::model
