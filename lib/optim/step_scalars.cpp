// See step_scalars.h.
// Tested by tests/optim/test_sgd_adamw.cpp: StepScalars named 0-d device slots at fixed addresses,
//   refilled by one upload.
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

void StepScalars::refill() {
  if (!refill_pending_) return;
  if (read_[current_].has_value()) read_[current_]->synchronize();  // copy k-1 read it
  std::memcpy(staging_[current_].data_ptr<double>(), staging_[1 - current_].data_ptr<double>(),
              sizeof(double) * names_.size());
  refill_pending_ = false;
}

void StepScalars::set(const std::string& name, double value) {
  const size_t i = index(name);
  refill();
  staging_[current_].data_ptr<double>()[i] = value;
}

void StepScalars::upload() {
  refill();  // an upload with nothing set repeats the last values
  const bool cuda = read_[current_].has_value();
  device_.copy_(staging_[current_], /*non_blocking=*/cuda);
  if (cuda) {
    const c10::impl::VirtualGuardImpl guard(device_.device().type());
    read_[current_]->record(guard.getStream(device_.device()));
  }
  ++uploads_;
  current_ = 1 - current_;  // written next; refilled (after a wait) at its first write
  refill_pending_ = true;
}

}  // namespace trainer::optim
