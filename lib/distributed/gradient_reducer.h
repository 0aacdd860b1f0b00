// Data-parallel gradient averaging: PyTorch's own DDP reducer (c10d::Reducer) over a Group.
//
// Why the c10d reducer: it is what torch.nn.parallel.DistributedDataParallel runs underneath:
// gradients are packed into ~25 MB buckets in reverse layer order, and a bucket's all-reduce
// starts from an autograd hook as soon as its last gradient is ready, so communication overlaps
// the rest of the backward pass; at the end of backward the averaged buckets are copied back into
// each parameter's .grad. With unused-parameter detection (the reference's
// find_unused_parameters=True) a parameter that gets no gradient in a step is marked ready instead
// of hanging the job.
#pragma once

#include <ATen/core/Tensor.h>

#include <memory>
#include <string>
#include <vector>

namespace c10d {
class Reducer;
}

namespace trainer::distributed {

class Group;

struct ReducerOptions {
  int64_t bucket_bytes = 25ll << 20;       // DDP's default bucket cap
  int64_t first_bucket_bytes = 1ll << 20;  // DDP's smaller first bucket
  bool find_unused_parameters = true;      // the reference's setting
};

class GradientReducer {
 public:
  // `params`: the trainable parameters (requires_grad), in model order; `names` parallel to them
  // (used in c10d's error messages). The group must outlive the reducer.
  GradientReducer(Group& group, const std::vector<at::Tensor>& params,
                  const std::vector<std::string>& names, const ReducerOptions& options = {});
  ~GradientReducer();
  GradientReducer(const GradientReducer&) = delete;
  GradientReducer& operator=(const GradientReducer&) = delete;

  // Runs loss.backward() with the hooks armed for this pass (and the parameters `loss` does not
  // depend on found): afterwards every .grad holds the mean over ranks. A failed all-reduce (a
  // rank died or hung) becomes a CommError that names this rank.
  void backward(const at::Tensor& loss);

  size_t buckets() const { return buckets_; }

 private:
  Group& group_;
  std::unique_ptr<c10d::Reducer> reducer_;
  size_t buckets_ = 0;
};

}  // namespace trainer::distributed
