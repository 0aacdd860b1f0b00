// Data-parallel gradient averaging: PyTorch's own DDP reducer (c10d::Reducer) over a Group.
//
// Why the c10d reducer: it is what torch.nn.parallel.DistributedDataParallel runs underneath:
// gradients are packed into ~25 MB buckets in reverse layer order, and a bucket's all-reduce
// starts from an autograd hook as soon as its last gradient is ready, so communication overlaps
// the rest of the backward pass; at the end of backward the averaged buckets are copied back into
// each parameter's .grad. With unused-parameter detection (the reference's
// find_unused_parameters=True) a parameter that gets no gradient in a step is marked ready instead
// of hanging the job; that detection traverses the autograd graph every step (and c10d warns on
// every run where it finds nothing), so by default it is decided: the first backward of each
// phase (a run's start, each epoch: recheck()) traverses the graph once, the ranks agree, and the
// reducer runs with detection only when some parameter had no gradient. That is for models whose
// loss keeps every trainable parameter in the graph whatever the batch holds (the engine asks the
// task: TaskDefinition::loss_reaches_every_parameter; detect, segment and OBB do), so the answer
// cannot change inside an epoch; the others (pose) detect every step.
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

enum class UnusedParameters {
  kDecide,  // traverse once per phase, detect only when some parameter had no gradient
  kDetect,  // every step (the reference's find_unused_parameters=True)
  kNone,    // never: every parameter must get a gradient every step
};

struct ReducerOptions {
  int64_t bucket_bytes = 25ll << 20;       // DDP's default bucket cap
  int64_t first_bucket_bytes = 1ll << 20;  // DDP's smaller first bucket
  UnusedParameters unused = UnusedParameters::kDecide;
};

// Which of `params` the backward of `loss` reaches (an AccumulateGrad of theirs in its graph): the
// traversal c10d's unused-parameter detection does every step.
std::vector<bool> parameters_reached(const at::Tensor& loss, const std::vector<at::Tensor>& params);

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
  // rank died or hung) becomes a CommError that names this rank. kDecide: the first call after
  // construction or recheck() decides the detection (one collective, every rank).
  void backward(const at::Tensor& loss);
  // kDecide: the next backward decides again (a new phase: the fit loop calls it every epoch).
  void recheck() { decide_next_ = options_.unused == UnusedParameters::kDecide; }

  size_t buckets() const { return buckets_.size(); }
  // Whether the reducer now detects unused parameters every step.
  bool detects_unused() const { return detects_unused_; }

 private:
  void build(bool detect_unused);

  Group& group_;
  std::vector<at::Tensor> params_;
  std::vector<std::string> names_;
  ReducerOptions options_;
  std::unique_ptr<c10d::Reducer> reducer_;
  std::vector<std::vector<size_t>> buckets_;  // parameter indices, last layers first
  bool detects_unused_ = false;
  bool decide_next_ = false;
};

}  // namespace trainer::distributed
