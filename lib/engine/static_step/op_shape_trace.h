// The sequence of ATen ops a piece of code runs, each with its inputs' dtypes and shapes.
//
// Why: a training step that a CUDA graph can replay must run the same ops on the same shapes
// whatever the batch holds, and must never read a device value on the host. Two traced steps with
// different object counts prove the first when their traces are equal; the ops a trace contains
// prove the second (no `nonzero`, no `.item()`, no selection by a boolean mask).
#pragma once

#include <memory>
#include <string>
#include <vector>

namespace trainer::engine {

// While alive, records every ATen op dispatched on this thread (and the autograd threads it
// starts), in order, as "aten::name(dtype[shape], ...)": a thread-local RecordFunction callback,
// nested ops included. Not copyable; one at a time in a process (a second throws).
class OpShapeTrace {
 public:
  OpShapeTrace();
  ~OpShapeTrace();
  OpShapeTrace(const OpShapeTrace&) = delete;
  OpShapeTrace& operator=(const OpShapeTrace&) = delete;

  std::vector<std::string> ops() const;

  // Host work that prepares a step's inputs (packing labels whose count is the data's) is not
  // part of the step: no op is recorded while a HostWork lives on this thread.
  class HostWork {
   public:
    HostWork();
    ~HostWork();
    HostWork(const HostWork&) = delete;
    HostWork& operator=(const HostWork&) = delete;
  };

  struct State;

 private:
  std::shared_ptr<State> state_;
};

// The entries of `trace` that a static step must not contain: ops whose output size depends on
// values (nonzero, masked_select, unique), host reads (_local_scalar_dense, item), and indexing
// or index_put with a boolean mask.
std::vector<std::string> data_dependent_ops(const std::vector<std::string>& trace);

}  // namespace trainer::engine
