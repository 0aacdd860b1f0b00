// BatchNorm with its batch statistics taken over every rank (`sync_bn: true`), an option beyond
// the reference (which keeps them per rank, like torch's DDP without SyncBatchNorm).
//
// Why: with a small per-rank batch (2-4 images per GPU at 1280 px, or many ranks), per-rank
// statistics are noisy; synchronised statistics make the BatchNorm see the global batch, as
// torch.nn.SyncBatchNorm does. Forward all-reduces each channel's sum, sum of squares and count;
// backward all-reduces the two gradient sums the input gradient needs. The weight and bias
// gradients stay local (the gradient reducer averages them with the rest).
#pragma once

#include <ATen/core/Tensor.h>
#include <torch/nn/modules/batchnorm.h>

namespace trainer::distributed {

class Group;

// Training-mode BatchNorm2d of `x` (N, C, H, W) with statistics over all ranks of `group`; updates
// `bn`'s running mean and (unbiased) variance with the global statistics, with bn's momentum. The
// result equals one process's BatchNorm over the concatenated batches (up to summation order).
at::Tensor sync_batch_norm(const at::Tensor& x, torch::nn::BatchNorm2dImpl& bn, Group& group);

}  // namespace trainer::distributed
