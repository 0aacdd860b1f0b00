// See gradient_reducer.h. Bucket assignment as DistributedDataParallel does it: by size over the
// parameters in model order, then reversed so the last layers (whose gradients come first in
// backward) form the first bucket.
#include "distributed/gradient_reducer.h"

#include <spdlog/spdlog.h>
#include <torch/csrc/autograd/function.h>
#include <torch/csrc/autograd/variable.h>
#include <torch/csrc/distributed/c10d/reducer.hpp>

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include "distributed/group_impl.h"

namespace trainer::distributed {

std::vector<bool> parameters_reached(const at::Tensor& loss,
                                     const std::vector<at::Tensor>& params) {
  std::unordered_set<const torch::autograd::Node*> seen;
  std::vector<torch::autograd::Node*> stack;
  if (loss.grad_fn()) stack.push_back(loss.grad_fn().get());
  while (!stack.empty()) {
    torch::autograd::Node* node = stack.back();
    stack.pop_back();
    if (!seen.insert(node).second) continue;
    for (const auto& edge : node->next_edges()) {
      if (edge.function) stack.push_back(edge.function.get());
    }
  }
  std::vector<bool> reached;
  reached.reserve(params.size());
  for (const auto& p : params) {
    const auto accumulator = torch::autograd::impl::try_get_grad_accumulator(p);
    reached.push_back(accumulator && seen.count(accumulator.get()) > 0);
  }
  return reached;
}

GradientReducer::GradientReducer(Group& group, const std::vector<at::Tensor>& params,
                                 const std::vector<std::string>& names,
                                 const ReducerOptions& options)
    : group_(group), params_(params), names_(names), options_(options) {
  buckets_ = std::get<0>(c10d::compute_bucket_assignment_by_size(
      params,
      {static_cast<size_t>(options.first_bucket_bytes), static_cast<size_t>(options.bucket_bytes)},
      std::vector<bool>(params.size(), false)));
  std::reverse(buckets_.begin(), buckets_.end());
  if (options.unused == UnusedParameters::kDecide) {
    decide_next_ = true;  // built at the first backward, once the graph is known
  } else {
    build(options.unused == UnusedParameters::kDetect);
  }
}

void GradientReducer::build(bool detect_unused) {
  reducer_.reset();  // its autograd hooks go with it
  const std::vector<bool> sparse(params_.size(), false);
  std::unordered_map<size_t, std::string> param_names;
  for (size_t i = 0; i < names_.size() && i < params_.size(); ++i) param_names[i] = names_[i];
  Group::Impl& impl = group_.impl();
  guarded(impl, "setting up the gradient reducer", [&] {
    reducer_ = std::make_unique<c10d::Reducer>(
        params_, buckets_, impl.group, sparse, options_.bucket_bytes, detect_unused,
        /*gradient_as_bucket_view=*/false, std::move(param_names), options_.first_bucket_bytes,
        /*skip_all_reduce_unused_params=*/false, /*use_python_reducer=*/false,
        std::vector<int64_t>{});
  });
  detects_unused_ = detect_unused;
}

GradientReducer::~GradientReducer() = default;

void GradientReducer::backward(const at::Tensor& loss) {
  if (decide_next_) {
    decide_next_ = false;
    const std::vector<bool> reached = parameters_reached(loss, params_);
    std::vector<std::string> unused;
    for (size_t i = 0; i < reached.size(); ++i) {
      if (!reached[i]) unused.push_back(i < names_.size() ? names_[i] : std::to_string(i));
    }
    const bool detect = group_.any(!unused.empty());  // every rank runs the same reducer
    if (!reducer_ || detect != detects_unused_) {
      if (!unused.empty()) {
        spdlog::info(
            "data-parallel: {} of {} trainable parameters get no gradient in this phase (first: "
            "{}): unused-parameter detection on",
            unused.size(), params_.size(), unused.front());
      } else if (detect) {
        spdlog::info(
            "data-parallel: another rank has parameters without a gradient: "
            "unused-parameter detection on");
      } else {
        spdlog::info(
            "data-parallel: every trainable parameter gets a gradient: unused-parameter "
            "detection off");
      }
      build(detect);
    }
  }
  guarded(group_.impl(), "averaging gradients", [&] {
    reducer_->prepare_for_backward({loss});
    loss.backward();
  });
}

}  // namespace trainer::distributed
