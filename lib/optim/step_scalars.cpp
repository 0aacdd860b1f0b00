// See step_scalars.h.
#include "optim/step_scalars.h"

#include <ATen/ATen.h>
#include <c10/core/impl/VirtualGuardImpl.h>

#include <algorithm>
#include <stdexcept>

namespace trainer::optim {

StepScalars::StepScalars(std::vector<std::string> names, const at::Device& device)
    : names_(std::move(names)) {
  if (names_.empty()) throw std::invalid_argument("StepScalars: no slot names");
  const auto n = static_cast<int64_t>(names_.size());
  host_ = at::zeros({n}, at::TensorOptions().dtype(at::kDouble));
  if (device.is_cuda()) {
    host_ = host_.pin_memory();
    uploaded_.emplace(device.type());
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
  if (uploaded_) uploaded_->synchronize();  // the last copy has read the staging buffer
  host_.data_ptr<double>()[index(name)] = value;
}

void StepScalars::upload() {
  device_.copy_(host_, /*non_blocking=*/uploaded_.has_value());
  if (uploaded_) {
    const c10::impl::VirtualGuardImpl guard(device_.device().type());
    uploaded_->record(guard.getStream(device_.device()));
  }
}

}  // namespace trainer::optim
