// See op_shape_trace.h.
// Tested by tests/engine/static_step/test_static_step.cpp: OpShapeTrace equal for 0/1/many objects,
//   data_dependent_ops empty for static step, non-empty for selecting step.
#include "engine/static_step/op_shape_trace.h"

#include <ATen/core/ivalue.h>
#include <ATen/record_function.h>

#include <atomic>
#include <mutex>
#include <sstream>
#include <stdexcept>

namespace trainer::engine {

struct OpShapeTrace::State {
  mutable std::mutex mutex;
  std::vector<std::string> ops;
};

namespace {

// The trace being recorded. Global, not thread-local: the autograd engine's threads (CUDA) run the
// thread-local callback they inherit from the step's thread, and must find the same trace.
std::atomic<OpShapeTrace::State*> active_trace{nullptr};
thread_local at::CallbackHandle trace_callback = 0;
thread_local int host_work_depth = 0;

void describe_tensor(std::ostringstream& os, const at::Tensor& t) {
  if (!t.defined()) {
    os << "undefined";
    return;
  }
  os << c10::toString(t.scalar_type()) << t.sizes();
}

void describe(std::ostringstream& os, const c10::IValue& v) {
  if (v.isTensor()) {
    describe_tensor(os, v.toTensor());
  } else if (v.isTensorList()) {
    os << "[";
    for (const at::Tensor& t : v.toTensorVector()) {
      describe_tensor(os, t);
      os << " ";
    }
    os << "]";
  } else if (v.isList()) {
    os << "[";
    for (const c10::IValue& e : v.toListRef()) {
      if (e.isTensor()) {
        describe_tensor(os, e.toTensor());
      } else if (e.isNone()) {
        os << "none";
      } else {
        os << e.tagKind();
      }
      os << " ";
    }
    os << "]";
  } else if (v.isIntList()) {
    os << v.toIntVector();
  } else if (v.isInt()) {
    os << v.toInt();
  } else {
    os << v.tagKind();
  }
}

std::unique_ptr<at::ObserverContext> trace_on_enter(const at::RecordFunction& fn) {
  OpShapeTrace::State* state = active_trace.load();
  if (!state || host_work_depth > 0) return nullptr;
  std::ostringstream os;
  os << fn.name() << "(";
  for (const c10::IValue& input : fn.inputs()) {
    describe(os, input);
    os << ", ";
  }
  os << ")";
  std::lock_guard<std::mutex> lock(state->mutex);
  state->ops.push_back(os.str());
  return nullptr;
}

}  // namespace

OpShapeTrace::OpShapeTrace() : state_(std::make_shared<State>()) {
  State* expected = nullptr;
  if (!active_trace.compare_exchange_strong(expected, state_.get())) {
    throw std::logic_error("OpShapeTrace: another trace is recording");
  }
  trace_callback = at::addThreadLocalCallback(at::RecordFunctionCallback(&trace_on_enter)
                                                  .needsInputs(true)
                                                  .scopes({at::RecordScope::FUNCTION}));
}

OpShapeTrace::~OpShapeTrace() {
  at::removeCallback(trace_callback);
  active_trace = nullptr;
}

std::vector<std::string> OpShapeTrace::ops() const {
  std::lock_guard<std::mutex> lock(state_->mutex);
  return state_->ops;
}

OpShapeTrace::HostWork::HostWork() {
  ++host_work_depth;
}

OpShapeTrace::HostWork::~HostWork() {
  --host_work_depth;
}

std::vector<std::string> data_dependent_ops(const std::vector<std::string>& trace) {
  const auto starts = [](const std::string& s, const char* prefix) {
    return s.rfind(prefix, 0) == 0;
  };
  std::vector<std::string> out;
  for (const auto& op : trace) {
    const bool value_sized = starts(op, "aten::nonzero") || starts(op, "aten::masked_select") ||
                             starts(op, "aten::_unique") || starts(op, "aten::unique") ||
                             starts(op, "aten::argwhere");
    const bool host_read = starts(op, "aten::_local_scalar_dense") || starts(op, "aten::item") ||
                           starts(op, "aten::is_nonzero");
    const bool bool_index = (starts(op, "aten::index(") || starts(op, "aten::index_put") ||
                             starts(op, "aten::_index_put_impl")) &&
                            op.find("Bool[") != std::string::npos;
    if (value_sized || host_read || bool_index) out.push_back(op);
  }
  return out;
}

}  // namespace trainer::engine
