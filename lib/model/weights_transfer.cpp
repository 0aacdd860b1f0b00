// Weight transfer by name where shapes agree (see weights_transfer.h).
#include "model/weights_transfer.h"

#include <torch/torch.h>

#include <map>

namespace trainer::model {

TransferReport transfer_weights(torch::nn::Module& module, const NamedTensorList& weights) {
  const std::map<std::string, at::Tensor> given(weights.begin(), weights.end());
  TransferReport report;
  torch::NoGradGuard no_grad;
  for (const auto& [key, target] : state_dict(module)) {
    ++report.total;
    const auto it = given.find(key);
    if (it == given.end()) {
      report.missing.push_back(key);
      continue;
    }
    const at::Tensor& source = it->second;
    if (source.sizes() != target.sizes() ||
        source.is_floating_point() != target.is_floating_point()) {
      report.shape_mismatches.push_back(key);
      continue;
    }
    target.copy_(source);
    ++report.transferred;
  }
  return report;
}

}  // namespace trainer::model
