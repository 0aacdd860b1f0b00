// See gradient_reducer.h. Bucket assignment as DistributedDataParallel does it: by size over the
// parameters in model order, then reversed so the last layers (whose gradients come first in
// backward) form the first bucket.
#include "distributed/gradient_reducer.h"

#include <torch/csrc/distributed/c10d/reducer.hpp>

#include <algorithm>
#include <unordered_map>

#include "distributed/group_impl.h"

namespace trainer::distributed {

GradientReducer::GradientReducer(Group& group, const std::vector<at::Tensor>& params,
                                 const std::vector<std::string>& names,
                                 const ReducerOptions& options)
    : group_(group) {
  const std::vector<bool> sparse(params.size(), false);
  auto [buckets, limits] = c10d::compute_bucket_assignment_by_size(
      params,
      {static_cast<size_t>(options.first_bucket_bytes), static_cast<size_t>(options.bucket_bytes)},
      sparse);
  std::reverse(buckets.begin(), buckets.end());
  buckets_ = buckets.size();
  std::unordered_map<size_t, std::string> param_names;
  for (size_t i = 0; i < names.size() && i < params.size(); ++i) param_names[i] = names[i];
  Group::Impl& impl = group.impl();
  guarded(impl, "setting up the gradient reducer", [&] {
    reducer_ = std::make_unique<c10d::Reducer>(
        params, std::move(buckets), impl.group, sparse, options.bucket_bytes,
        options.find_unused_parameters, /*gradient_as_bucket_view=*/false, std::move(param_names),
        options.first_bucket_bytes, /*skip_all_reduce_unused_params=*/false,
        /*use_python_reducer=*/false, std::vector<int64_t>{});
  });
}

GradientReducer::~GradientReducer() = default;

void GradientReducer::backward(const at::Tensor& loss) {
  guarded(group_.impl(), "averaging gradients", [&] {
    reducer_->prepare_for_backward({loss});
    loss.backward();
  });
}

}  // namespace trainer::distributed
