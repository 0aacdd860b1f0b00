// See step_scalars.h.
#include "optim/step_scalars.h"

#include <ATen/ATen.h>
#include <c10/core/impl/VirtualGuardImpl.h>

#include <algorithm>
#include <cstring>
#include <stdexcept>

namespace trainer::optim {

StepScalars::StepScalars(std::vector<std::string> names, const at::Device& device)
    : names_(std::move(names)) {
  if (names_.empty()) throw std::invalid_argument("StepScalars: no slot names");
  const auto n = static_cast<int64_t>(names_.size());
  for (size_t i = 0; i < staging_.size(); ++i) {
    staging_[i] = at::zeros({n}, at::TensorOptions().dtype(at::kDouble));
    if (device.is_cuda()) {
      staging_[i] = staging_[i].pin_memory();
      read_[i].emplace(device.type());
    }
  }
  device_ = at::zeros({n}, at::TensorOptions().dtype(at::kDouble).device(device));
  for (int64_t i = 0; i < n; ++i) slots_.push_back(device_.select(0, i));
}

size_t StepScalars::index(const std::string& name) const {
  const auto it = std::find(names_.begin(), names_.end(), name);
  if (it == names_.end()) throw std::invalid_argument("StepScalars: no slot '" + name + "'");
  return static_cast<size_t>(it - names_.begin());
}

const at::Tensor& StepScalars::slot(const std::string& name) const {
  return slots_[index(name)];
}

void StepScalars::set(const std::string& name, double value) {
  staging_[current_].data_ptr<double>()[index(name)] = value;
}

void StepScalars::upload() {
  const at::Tensor& from = staging_[current_];
  const bool cuda = read_[current_].has_value();
  device_.copy_(from, /*non_blocking=*/cuda);
  if (cuda) {
    const c10::impl::VirtualGuardImpl guard(device_.device().type());
    read_[current_]->record(guard.getStream(device_.device()));
  }
  ++uploads_;
  // The other buffer becomes the one written. Its last copy (the upload before this one) must
  // have read it first; then it starts from these values, so an unset slot keeps its value.
  const size_t next = 1 - current_;
  if (read_[next].has_value()) read_[next]->synchronize();
  std::memcpy(staging_[next].data_ptr<double>(), from.data_ptr<double>(),
              sizeof(double) * names_.size());
  current_ = next;
}

}  // namespace trainer::optim
