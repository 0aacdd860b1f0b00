#include "optim/musgd.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <stdexcept>
#include <tuple>

#include "optim/momentum.h"
#include "optim/muon_update.h"
#include "optim/step_scalars.h"

namespace trainer::optim {
namespace {

bool is_matrix(const at::Tensor& p) {
  return p.dim() == 2 || p.dim() == 4;
}

at::Tensor as_matrix(const at::Tensor& t) {
  return t.dim() == 4 ? t.reshape({t.size(0), -1}) : t;
}

// Byte range [begin, end) a tensor's elements occupy in its storage's address space.
struct Span {
  uintptr_t begin = 0;
  uintptr_t end = 0;
  size_t owner = 0;
};

// One Newton-Schulz job: an update matrix oriented so that rows <= cols.
struct NsJob {
  at::Tensor matrix;  // (r, c) before orientation
  bool transposed = false;
  int64_t small = 0;  // min(r, c)
  int64_t large = 0;  // max(r, c)
  int64_t member_bytes = 0;
  double scale = 1.0;                 // muon_scale of the parameter
  at::ScalarType dtype = at::kFloat;  // the parameter's
};

}  // namespace

const char* muon_schedule_name(MuonSchedule schedule) {
  switch (schedule) {
    case MuonSchedule::kScalar:
      return "scalar";
    case MuonSchedule::kBatched:
      return "batched";
    case MuonSchedule::kPadded:
      return "padded";
  }
  return "?";
}

double muon_scale(const at::Tensor& param) {
  const double rows = static_cast<double>(param.size(-2));
  const double cols = static_cast<double>(param.size(-1));
  return std::sqrt(std::max(1.0, rows / cols));
}

MuSGD::MuSGD(std::vector<ParamGroup> groups, MuSGDOptions options)
    : groups_(std::move(groups)), options_(std::move(options)) {
  state_.resize(groups_.size());
  for (size_t g = 0; g < groups_.size(); ++g) state_[g].resize(groups_[g].params.size());
}

void MuSGD::ensure_state(size_t g, size_t i) {
  const at::Tensor& p = groups_[g].params[i];
  ParamState& st = state_[g][i];
  if (!st.sgd_momentum.defined()) st.sgd_momentum = at::zeros_like(p);
  if (groups_[g].use_muon && is_matrix(p) && !st.muon_momentum.defined()) {
    st.muon_momentum = at::zeros_like(p);
  }
}

std::vector<std::vector<bool>> MuSGD::overlapping_params() const {
  std::vector<std::vector<bool>> overlap(groups_.size());
  std::vector<std::pair<size_t, size_t>> owners;
  std::vector<Span> spans;
  for (size_t g = 0; g < groups_.size(); ++g) {
    overlap[g].assign(groups_[g].params.size(), false);
    for (size_t i = 0; i < groups_[g].params.size(); ++i) {
      const at::Tensor& p = groups_[g].params[i];
      if (!p.has_storage() || p.layout() != at::kStrided) {
        overlap[g][i] = true;  // storage cannot be inspected: keep the scalar path
        continue;
      }
      const auto base = reinterpret_cast<uintptr_t>(p.storage().data());
      int64_t last = 0;
      for (int64_t d = 0; d < p.dim(); ++d) last += (p.size(d) - 1) * p.stride(d);
      const auto elem = static_cast<uintptr_t>(p.element_size());
      const uintptr_t begin = base + static_cast<uintptr_t>(p.storage_offset()) * elem;
      const uintptr_t end =
          p.numel() == 0 ? begin : begin + static_cast<uintptr_t>(last + 1) * elem;
      spans.push_back({begin, end, owners.size()});
      owners.emplace_back(g, i);
    }
  }
  std::sort(spans.begin(), spans.end(), [](const Span& a, const Span& b) {
    return std::tie(a.begin, a.end) < std::tie(b.begin, b.end);
  });
  uintptr_t reach = 0;
  size_t reach_owner = 0;
  bool have = false;
  for (const Span& s : spans) {
    if (s.begin == s.end) continue;  // empty tensors occupy nothing
    if (have && s.begin < reach) {
      overlap[owners[s.owner].first][owners[s.owner].second] = true;
      overlap[owners[reach_owner].first][owners[reach_owner].second] = true;
    }
    if (!have || s.end > reach) {
      reach = s.end;
      reach_owner = s.owner;
      have = true;
    }
  }
  return overlap;
}

void MuSGD::step_scalar_param(ParamGroup& group, at::Tensor& param, ParamState& st) {
  const at::Tensor& grad = param.grad();
  if (group.use_muon && is_matrix(param)) {
    const at::Tensor update = muon_momentum(grad, st.muon_momentum, group.momentum, group.nesterov);
    at::Tensor o = orthogonalize(as_matrix(update), options_.ns);
    const double scale = muon_scale(param);
    if (scale != 1.0) o.mul_(scale);
    param.add_(o.reshape(param.sizes()), -group.lr * options_.muon_gain);
    sgd_step(param, grad, st.sgd_momentum,
             {group.lr * options_.sgd_gain, group.momentum, group.weight_decay, group.nesterov});
  } else {
    sgd_step(param, grad, st.sgd_momentum,
             {group.lr, group.momentum, group.weight_decay, group.nesterov});
  }
}

std::vector<at::Tensor> MuSGD::orthogonalize_all(const std::vector<at::Tensor>& updates) {
  std::vector<NsJob> jobs;
  for (const auto& u : updates) {
    NsJob job;
    job.matrix = as_matrix(u);
    job.transposed = job.matrix.size(0) > job.matrix.size(1);
    job.small = std::min(job.matrix.size(0), job.matrix.size(1));
    job.large = std::max(job.matrix.size(0), job.matrix.size(1));
    job.member_bytes = 2 * static_cast<int64_t>(u.nbytes());  // parameter + gradient
    job.scale = muon_scale(u);
    job.dtype = u.scalar_type();
    jobs.push_back(std::move(job));
  }
  // Buckets: exact (device, dtype, small, large), or with padding (device, dtype, small).
  using Key = std::tuple<std::string, int, int64_t, int64_t>;
  std::map<Key, std::vector<size_t>> buckets;
  const bool pad = options_.schedule == MuonSchedule::kPadded;
  for (size_t j = 0; j < jobs.size(); ++j) {
    const auto& m = jobs[j].matrix;
    const bool paddable = pad && jobs[j].small <= options_.pad_max_dim;
    buckets[Key{m.device().str(), static_cast<int>(m.scalar_type()), jobs[j].small,
                paddable ? -1 : jobs[j].large}]
        .push_back(j);
  }
  const int64_t elem = c10::elementSize(options_.ns.dtype);
  // Splits a padded candidate bucket (widest first) so each stack's bytes stay within its members'
  // parameter + gradient bytes.
  std::vector<std::vector<size_t>> batches;
  for (auto& [key, members] : buckets) {
    if (std::get<3>(key) != -1) {
      batches.push_back(members);
      continue;
    }
    std::stable_sort(members.begin(), members.end(),
                     [&](size_t a, size_t b) { return jobs[a].large > jobs[b].large; });
    std::vector<size_t> current;
    int64_t budget = 0;
    for (size_t j : members) {
      const int64_t width = current.empty() ? jobs[j].large : jobs[current.front()].large;
      const int64_t stack = static_cast<int64_t>(current.size() + 1) * jobs[j].small * width * elem;
      if (!current.empty() && stack > budget + jobs[j].member_bytes) {
        batches.push_back(current);
        current.clear();
        budget = 0;
      }
      current.push_back(j);
      budget += jobs[j].member_bytes;
    }
    if (!current.empty()) batches.push_back(current);
  }

  std::vector<at::Tensor> results(jobs.size());
  for (const auto& batch : batches) {
    const NsJob& first = jobs[batch.front()];
    if (batch.size() == 1) {  // singletons keep the scalar update
      results[batch.front()] =
          scale_and_widen(orthogonalize(first.matrix, options_.ns).unsqueeze(0), {first.scale},
                          first.dtype, &scale_factors_)
              .squeeze(0);
      last_buckets_.push_back({1, false, 0, first.member_bytes});
      continue;
    }
    int64_t width = 0;
    int64_t member_bytes = 0;
    for (size_t j : batch) {
      width = std::max(width, jobs[j].large);
      member_bytes += jobs[j].member_bytes;
    }
    const bool padded =
        !std::all_of(batch.begin(), batch.end(), [&](size_t j) { return jobs[j].large == width; });
    const auto options = first.matrix.options().dtype(options_.ns.dtype);
    const int64_t n = static_cast<int64_t>(batch.size());
    at::Tensor stack = padded ? at::zeros({n, first.small, width}, options)
                              : at::empty({n, first.small, width}, options);
    for (int64_t k = 0; k < n; ++k) {
      const NsJob& job = jobs[batch[k]];
      const at::Tensor oriented = job.transposed ? job.matrix.t() : job.matrix;
      stack[k].narrow(1, 0, job.large).copy_(oriented);
    }
    std::vector<double> scales;
    for (size_t j : batch) scales.push_back(jobs[j].scale);
    // Scaled and in the parameters' dtype for the whole stack at once (muon_update.h).
    const at::Tensor out = scale_and_widen(orthogonalize_batched(stack, options_.ns), scales,
                                           first.dtype, &scale_factors_);
    for (int64_t k = 0; k < n; ++k) {
      const NsJob& job = jobs[batch[k]];
      const at::Tensor slice = out[k].narrow(1, 0, job.large);
      results[batch[k]] = job.transposed ? slice.t() : slice;
    }
    last_buckets_.push_back({batch.size(), padded, stack.numel() * elem, member_bytes});
  }
  return results;
}

void MuSGD::step() {
  at::NoGradGuard no_grad;
  consume_prepared_step();
  last_buckets_.clear();
  if (capturable() && options_.schedule == MuonSchedule::kScalar) {
    throw std::logic_error("capturable MuSGD: the scalar schedule passes host scalars");
  }
  if (options_.schedule == MuonSchedule::kScalar) {
    for (size_t g = 0; g < groups_.size(); ++g) {
      for (size_t i = 0; i < groups_[g].params.size(); ++i) {
        if (!groups_[g].params[i].grad().defined()) continue;
        ensure_state(g, i);
        step_scalar_param(groups_[g], groups_[g].params[i], state_[g][i]);
      }
    }
    return;
  }
  const auto overlap = overlapping_params();
  // Muon momentum per group (foreach), then one bucketed Newton-Schulz pass over all groups.
  std::vector<std::vector<size_t>> scheduled(groups_.size());
  std::vector<std::vector<size_t>> muon_members(groups_.size());
  std::vector<at::Tensor> all_updates;
  for (size_t g = 0; g < groups_.size(); ++g) {
    ParamGroup& group = groups_[g];
    std::vector<at::Tensor> grads;
    std::vector<at::Tensor> buffers;
    for (size_t i = 0; i < group.params.size(); ++i) {
      if (!group.params[i].grad().defined() || overlap[g][i]) continue;
      ensure_state(g, i);
      scheduled[g].push_back(i);
      if (group.use_muon && is_matrix(group.params[i])) {
        muon_members[g].push_back(i);
        grads.push_back(group.params[i].grad());
        buffers.push_back(state_[g][i].muon_momentum);
      }
    }
    const auto updates =
        capturable() ? muon_momentum_foreach_tensor(
                           grads, buffers, step_scalar(group_slot(g, "one_minus_momentum")),
                           step_scalar(group_slot(g, "momentum")), group.nesterov)
                     : muon_momentum_foreach(grads, buffers, group.momentum, group.nesterov);
    all_updates.insert(all_updates.end(), updates.begin(), updates.end());
  }
  const std::vector<at::Tensor> ortho = orthogonalize_all(all_updates);
  size_t next = 0;
  for (size_t g = 0; g < groups_.size(); ++g) {
    const std::vector<at::Tensor> mine(
        ortho.begin() + static_cast<std::ptrdiff_t>(next),
        ortho.begin() + static_cast<std::ptrdiff_t>(next + muon_members[g].size()));
    next += muon_members[g].size();
    step_group_foreach(g, scheduled[g], mine);
  }
  // Parameters that share storage with another, in their original order: the oracle's path.
  for (size_t g = 0; g < groups_.size(); ++g) {
    for (size_t i = 0; i < groups_[g].params.size(); ++i) {
      if (!overlap[g][i] || !groups_[g].params[i].grad().defined()) continue;
      if (capturable()) {
        throw std::logic_error("capturable MuSGD: parameter " + std::to_string(i) + " of group " +
                               groups_[g].name + " shares storage (the scalar path)");
      }
      ensure_state(g, i);
      step_scalar_param(groups_[g], groups_[g].params[i], state_[g][i]);
    }
  }
}

void MuSGD::step_group_foreach(size_t g, std::vector<size_t>& scheduled,
                               const std::vector<at::Tensor>& muon_updates) {
  ParamGroup& group = groups_[g];
  std::vector<at::Tensor> muon_params;
  std::vector<at::Tensor> scaled;
  size_t k = 0;
  for (size_t i : scheduled) {
    at::Tensor& p = group.params[i];
    if (!(group.use_muon && is_matrix(p))) continue;
    // Already scaled, and in the parameter's dtype unless ns_dtype is wider (orthogonalize_all).
    at::Tensor o = muon_updates[k++].reshape(p.sizes());
    // One layout per foreach call: a transposed or narrowed stack slice gets the parameter's
    // strides (a copy of values), so `_foreach_add_` keeps its fused path.
    if (o.strides() != p.strides()) o = at::empty_like(p, o.options()).copy_(o);
    muon_params.push_back(p);
    scaled.push_back(o);
  }
  if (!muon_params.empty() && capturable()) {
    const at::Tensor& neg_lr = step_scalar(group_slot(g, "neg_muon_lr"));
    at::_foreach_add_(muon_params,
                      at::_foreach_mul(scaled, neg_lr.to(muon_params.front().scalar_type())));
  } else if (!muon_params.empty()) {
    at::_foreach_add_(muon_params, scaled, -group.lr * options_.muon_gain);
  }
  std::vector<at::Tensor> params;
  std::vector<at::Tensor> grads;
  std::vector<at::Tensor> buffers;
  for (size_t i : scheduled) {
    params.push_back(group.params[i]);
    grads.push_back(group.params[i].grad());
    buffers.push_back(state_[g][i].sgd_momentum);
  }
  const double gain = group.use_muon ? options_.sgd_gain : 1.0;
  // Capturable: lr and momentum from the slots; a Muon group's matrices take sgd_lr, the rest lr.
  const auto sgd = [&](std::vector<at::Tensor>& p, const std::vector<at::Tensor>& gr,
                       std::vector<at::Tensor>& b, const char* lr_slot) {
    sgd_step_foreach_tensor(p, gr, b, step_scalar(group_slot(g, lr_slot)),
                            step_scalar(group_slot(g, "momentum")), group.weight_decay,
                            group.nesterov);
  };
  // Muon groups may hold non-matrix parameters (plain SGD); split them so each gets its own gain.
  if (group.use_muon && (gain != 1.0 || capturable())) {
    std::vector<at::Tensor> mp, mg, mb, sp, sg, sb;
    for (size_t j = 0; j < params.size(); ++j) {
      const bool m = is_matrix(params[j]);
      (m ? mp : sp).push_back(params[j]);
      (m ? mg : sg).push_back(grads[j]);
      (m ? mb : sb).push_back(buffers[j]);
    }
    if (capturable()) {
      sgd(mp, mg, mb, "sgd_lr");
      sgd(sp, sg, sb, "lr");
      return;
    }
    sgd_step_foreach(mp, mg, mb,
                     {group.lr * gain, group.momentum, group.weight_decay, group.nesterov});
    sgd_step_foreach(sp, sg, sb, {group.lr, group.momentum, group.weight_decay, group.nesterov});
    return;
  }
  if (capturable()) {
    sgd(params, grads, buffers, "lr");
    return;
  }
  sgd_step_foreach(params, grads, buffers,
                   {group.lr * gain, group.momentum, group.weight_decay, group.nesterov});
}

std::vector<std::string> MuSGD::step_scalar_names() const {
  std::vector<std::string> names;
  for (size_t g = 0; g < groups_.size(); ++g) {
    for (const char* name : {"momentum", "one_minus_momentum", "neg_muon_lr", "sgd_lr", "lr"}) {
      names.push_back(group_slot(g, name));
    }
  }
  return names;
}

void MuSGD::write_step_scalars(StepScalars& scalars) {
  for (size_t g = 0; g < groups_.size(); ++g) {
    const ParamGroup& group = groups_[g];
    // The same host arithmetic as the Scalar arguments of the eager step.
    scalars.set(group_slot(g, "momentum"), group.momentum);
    scalars.set(group_slot(g, "one_minus_momentum"), 1.0 - group.momentum);
    scalars.set(group_slot(g, "neg_muon_lr"), -group.lr * options_.muon_gain);
    scalars.set(group_slot(g, "sgd_lr"), group.lr * options_.sgd_gain);
    scalars.set(group_slot(g, "lr"), group.lr);
  }
}

StateDict MuSGD::state_dict() const {
  StateDict out;
  for (size_t g = 0; g < groups_.size(); ++g) {
    for (size_t i = 0; i < groups_[g].params.size(); ++i) {
      const ParamState& st = state_[g][i];
      if (st.sgd_momentum.defined())
        out[state_key(g, i, "sgd_momentum")] = st.sgd_momentum.detach().clone();
      if (st.muon_momentum.defined())
        out[state_key(g, i, "muon_momentum")] = st.muon_momentum.detach().clone();
    }
  }
  return out;
}

void MuSGD::load_state_dict(const StateDict& state) {
  size_t used = 0;
  for (size_t g = 0; g < groups_.size(); ++g) {
    for (size_t i = 0; i < groups_[g].params.size(); ++i) {
      const at::Tensor& p = groups_[g].params[i];
      ParamState& st = state_[g][i];
      const std::string sgd_key = state_key(g, i, "sgd_momentum");
      if (state.count(sgd_key)) {
        st.sgd_momentum = load_state_entry(state, sgd_key, p);
        ++used;
      }
      const std::string muon_key = state_key(g, i, "muon_momentum");
      if (state.count(muon_key)) {
        if (!(groups_[g].use_muon && is_matrix(p))) {
          throw std::runtime_error("optimizer state '" + muon_key +
                                   "' belongs to no Muon parameter");
        }
        st.muon_momentum = load_state_entry(state, muon_key, p);
        ++used;
      }
    }
  }
  check_all_state_used(state, used);
}

}  // namespace trainer::optim
