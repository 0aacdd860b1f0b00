#include "optim/ema.h"

#include <ATen/ATen.h>

#include <cmath>
#include <stdexcept>

namespace trainer::optim {

const char* ema_schedule_name(EmaSchedule schedule) {
  return schedule == EmaSchedule::kScalar ? "scalar" : "foreach";
}

ModelEma::ModelEma(const NamedTensors& live, double decay, double tau, EmaSchedule schedule)
    : decay_(decay), tau_(tau), schedule_(schedule) {
  for (const auto& [name, t] : live) shadow_.emplace_back(name, t.detach().clone());
}

double ModelEma::decay_at(int64_t updates) const {
  return decay_ * (1.0 - std::exp(-static_cast<double>(updates) / tau_));
}

void ModelEma::update(const NamedTensors& live) {
  if (live.size() != shadow_.size()) {
    throw std::runtime_error("EMA update: the model has " + std::to_string(live.size()) +
                             " tensors, the EMA " + std::to_string(shadow_.size()));
  }
  at::NoGradGuard no_grad;
  ++updates_;
  const double weight = 1.0 - decay_at(updates_);
  if (schedule_ == EmaSchedule::kScalar) {
    for (size_t k = 0; k < shadow_.size(); ++k) {
      at::Tensor& s = shadow_[k].second;
      if (s.is_floating_point()) {
        s.lerp_(live[k].second.detach(), weight);
      } else {
        s.copy_(live[k].second);
      }
    }
    return;
  }
  // (device, dtype) buckets: one lerp per floating bucket, one copy per integer bucket (the
  // BatchNorm `num_batches_tracked` counters: one kernel for all of them, not one each).
  using Bucket = std::pair<std::vector<at::Tensor>, std::vector<at::Tensor>>;
  std::map<std::pair<std::string, int>, Bucket> lerps;
  std::map<std::pair<std::string, int>, Bucket> copies;
  for (size_t k = 0; k < shadow_.size(); ++k) {
    at::Tensor& s = shadow_[k].second;
    auto& buckets = s.is_floating_point() ? lerps : copies;
    auto& bucket = buckets[{s.device().str(), static_cast<int>(s.scalar_type())}];
    bucket.first.push_back(s);
    bucket.second.push_back(live[k].second.detach());
  }
  for (auto& [key, bucket] : lerps) at::_foreach_lerp_(bucket.first, bucket.second, weight);
  for (auto& [key, bucket] : copies) at::_foreach_copy_(bucket.first, bucket.second);
}

void ModelEma::lerp_towards(const NamedTensors& live, const at::Tensor& weight) {
  if (live.size() != shadow_.size()) {
    throw std::runtime_error("EMA update: the model has " + std::to_string(live.size()) +
                             " tensors, the EMA " + std::to_string(shadow_.size()));
  }
  if (weight.dim() != 0 || weight.scalar_type() != at::kDouble) {
    throw std::invalid_argument("EMA update: the weight must be a 0-d fp64 tensor");
  }
  at::NoGradGuard no_grad;
  std::map<int, at::Tensor> weights;  // the weight in each entry dtype, converted once
  for (size_t k = 0; k < shadow_.size(); ++k) {
    at::Tensor& s = shadow_[k].second;
    if (s.is_floating_point()) {
      auto& w = weights[static_cast<int>(s.scalar_type())];
      if (!w.defined()) w = weight.to(s.scalar_type());
      s.lerp_(live[k].second.detach(), w);
    } else {
      s.copy_(live[k].second);
    }
  }
}

void ModelEma::copy_to(const NamedTensors& target) const {
  if (target.size() != shadow_.size()) throw std::runtime_error("EMA copy: tensor count differs");
  at::NoGradGuard no_grad;
  for (size_t k = 0; k < shadow_.size(); ++k) {
    if (target[k].first != shadow_[k].first) {
      throw std::runtime_error("EMA copy: expected '" + shadow_[k].first + "', got '" +
                               target[k].first + "'");
    }
    at::Tensor dst = target[k].second;
    dst.copy_(shadow_[k].second);
  }
}

std::map<std::string, at::Tensor> ModelEma::state_dict() const {
  std::map<std::string, at::Tensor> out;
  for (const auto& [name, t] : shadow_) out["ema." + name] = t.clone();
  out["ema.updates"] = at::scalar_tensor(updates_, at::kLong);
  return out;
}

void ModelEma::load_state_dict(const std::map<std::string, at::Tensor>& state) {
  const auto updates = state.find("ema.updates");
  if (updates == state.end()) throw std::runtime_error("EMA state is missing 'ema.updates'");
  for (auto& [name, t] : shadow_) {
    const auto it = state.find("ema." + name);
    if (it == state.end()) throw std::runtime_error("EMA state is missing 'ema." + name + "'");
    if (it->second.sizes() != t.sizes()) {
      throw std::runtime_error("EMA state 'ema." + name + "' has the wrong shape");
    }
    at::NoGradGuard no_grad;
    t.copy_(it->second);
  }
  if (state.size() != shadow_.size() + 1) {
    throw std::runtime_error("EMA state has entries that match no model tensor");
  }
  updates_ = updates->second.item<int64_t>();
}

NamedTensors ModelEma::weights_in(const std::map<std::string, at::Tensor>& state) {
  NamedTensors out;
  for (const auto& [key, tensor] : state) {
    if (key.rfind("ema.", 0) == 0 && key != "ema.updates") out.emplace_back(key.substr(4), tensor);
  }
  return out;
}

}  // namespace trainer::optim
