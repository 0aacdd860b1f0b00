// Tested by tests/engine/precision/test_precision_policy.cpp: census per-op input dtypes, nested
//   censuses, casts/views not arithmetic, deterministic fill ignored.
// See op_dtype_census.h. The callback is a plain function, so the active census is found through
// a thread-local stack (nested censuses all record).
#include "engine/precision/op_dtype_census.h"

#include <ATen/core/ivalue.h>
#include <ATen/record_function.h>

#include <algorithm>
#include <mutex>
#include <set>

namespace trainer::engine {

struct OpDtypeCensus::State {
  mutable std::mutex mutex;
  std::map<std::string, OpDtypeCount> counts;
};

namespace {

// The censuses alive on this thread, and the one callback they share (registered by the first,
// removed with the last), so nested censuses each count an op once.
thread_local std::vector<OpDtypeCensus::State*> active_censuses;
thread_local at::CallbackHandle census_callback = 0;

enum class Kind { kNone, kFull, kLow };

Kind merge(Kind a, Kind b) {
  return static_cast<int>(a) > static_cast<int>(b) ? a : b;
}

Kind tensor_kind(const at::Tensor& t) {
  if (!t.defined() || !c10::isFloatingType(t.scalar_type())) return Kind::kNone;
  return c10::isReducedFloatingType(t.scalar_type()) ? Kind::kLow : Kind::kFull;
}

Kind value_kind(const c10::IValue& v) {
  if (v.isTensor()) return tensor_kind(v.toTensor());
  Kind k = Kind::kNone;
  if (v.isTensorList()) {
    for (const at::Tensor& t : v.toTensorVector()) k = merge(k, tensor_kind(t));
  } else if (v.isList()) {
    for (const c10::IValue& e : v.toListRef()) {
      if (e.isTensor()) k = merge(k, tensor_kind(e.toTensor()));
    }
  }
  return k;
}

std::unique_ptr<at::ObserverContext> census_on_enter(const at::RecordFunction& fn) {
  if (active_censuses.empty()) return nullptr;
  Kind kind = Kind::kNone;
  for (const c10::IValue& input : fn.inputs()) kind = merge(kind, value_kind(input));
  const std::string name = fn.name();
  for (OpDtypeCensus::State* state : active_censuses) {
    std::lock_guard<std::mutex> lock(state->mutex);
    OpDtypeCount& c = state->counts[name];
    if (kind == Kind::kLow) {
      ++c.bf16_calls;
    } else if (kind == Kind::kFull) {
      ++c.fp32_calls;
    } else {
      ++c.other_calls;
    }
  }
  return nullptr;
}

}  // namespace

OpDtypeCensus::OpDtypeCensus() : state_(std::make_shared<State>()) {
  if (active_censuses.empty()) {
    census_callback = at::addThreadLocalCallback(at::RecordFunctionCallback(&census_on_enter)
                                                     .needsInputs(true)
                                                     .scopes({at::RecordScope::FUNCTION}));
  }
  active_censuses.push_back(state_.get());
}

OpDtypeCensus::~OpDtypeCensus() {
  active_censuses.erase(std::find(active_censuses.begin(), active_censuses.end(), state_.get()));
  if (active_censuses.empty()) at::removeCallback(census_callback);
}

std::map<std::string, OpDtypeCount> OpDtypeCensus::counts() const {
  std::lock_guard<std::mutex> lock(state_->mutex);
  return state_->counts;
}

std::vector<std::string> OpDtypeCensus::low_precision_compute_ops() const {
  std::vector<std::string> out;
  for (const auto& [name, c] : counts()) {
    if (c.bf16_calls > 0 && !is_data_movement_op(name)) out.push_back(name);
  }
  return out;
}

bool is_data_movement_op(const std::string& name) {
  static const std::set<std::string> ops = {
      // Constant fills round nothing computed; deterministic mode (`deterministic: true`) fills
      // every new tensor with NaN (LibTorch's fill_uninitialized_memory), a bf16 cast's included.
      "aten::fill_",
      "aten::zero_",
      "aten::to",
      "aten::_to_copy",
      "aten::copy_",
      "aten::clone",
      "aten::contiguous",
      "aten::detach",
      "aten::detach_",
      "aten::view",
      "aten::reshape",
      "aten::_reshape_alias",
      "aten::flatten",
      "aten::unflatten",
      "aten::permute",
      "aten::transpose",
      "aten::t",
      "aten::unsqueeze",
      "aten::squeeze",
      "aten::expand",
      "aten::expand_as",
      "aten::as_strided",
      "aten::alias",
      "aten::slice",
      "aten::select",
      "aten::narrow",
      "aten::split",
      "aten::split_with_sizes",
      "aten::chunk",
      "aten::unbind",
      "aten::cat",
      "aten::stack",
      "aten::empty_like",
      "aten::empty",
      "aten::empty_strided",
      "aten::zeros_like",
      "aten::resize_",
      "aten::lift_fresh",
      "aten::index_select",
      "aten::gather",
      "aten::index",
      "aten::masked_select",
      "aten::repeat",
      "aten::result_type",
      "aten::is_nonzero",
      "aten::item",
      "aten::_local_scalar_dense",
      "aten::numel",
      "aten::size",
      "aten::stride",
  };
  return ops.count(name) > 0;
}

}  // namespace trainer::engine
