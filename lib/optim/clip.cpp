#include "optim/clip.h"

#include <ATen/ATen.h>

#include <map>

namespace trainer::optim {

at::Tensor clip_grad_norm(const std::vector<at::Tensor>& grads, double max_norm) {
  std::map<std::pair<std::string, int>, std::vector<at::Tensor>> buckets;
  for (const auto& g : grads) {
    if (g.defined()) buckets[{g.device().str(), static_cast<int>(g.scalar_type())}].push_back(g);
  }
  if (buckets.empty()) return at::zeros({}, at::kFloat);
  std::vector<at::Tensor> norms;
  for (auto& [key, list] : buckets) {
    // Norms in at least fp32 (bf16 gradients give bf16 norms otherwise), never narrowed from fp64.
    const auto dtype = list.front().scalar_type() == at::kDouble ? at::kDouble : at::kFloat;
    for (auto& n : at::_foreach_norm(list, 2, dtype)) norms.push_back(n.to(at::kFloat));
  }
  const at::Tensor total = at::linalg_vector_norm(at::stack(norms), 2);
  const at::Tensor coef = (max_norm / (total + 1e-6)).clamp_max(1.0);
  for (auto& [key, list] : buckets) at::_foreach_mul_(list, coef.to(list.front().scalar_type()));
  return total;
}

}  // namespace trainer::optim
