// Which ATen ops a piece of code runs, and in which floating dtypes their inputs arrive.
//
// Why: autocast decides op by op what runs in BF16 (CPU and CUDA keep different lists, and
// LibTorch versions move ops between them). Reading the lists is not proof; recording what
// actually ran is. The precision comparison (`trainer bench precision`) reports it, and the tests
// use it to prove that the loss, the assigner, the optimizer and the EMA never see a BF16 tensor.
#pragma once

#include <c10/core/ScalarType.h>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace trainer::engine {

struct OpDtypeCount {
  int64_t bf16_calls = 0;   // calls with at least one BF16 (or fp16) tensor input
  int64_t fp32_calls = 0;   // calls whose floating tensor inputs are all fp32 or fp64
  int64_t other_calls = 0;  // no floating tensor input (integer, bool, no tensors)
};

// While alive, records every ATen op dispatched on this thread (a thread-local RecordFunction
// callback; ops nested inside other ops are recorded too, so an autocast-wrapped op appears once
// with its original inputs and once with the cast ones). Not copyable; nesting two is allowed.
class OpDtypeCensus {
 public:
  OpDtypeCensus();
  ~OpDtypeCensus();
  OpDtypeCensus(const OpDtypeCensus&) = delete;
  OpDtypeCensus& operator=(const OpDtypeCensus&) = delete;

  // "aten::convolution" -> counts, so far.
  std::map<std::string, OpDtypeCount> counts() const;

  // The ops that received a low-precision input, except those that only move or cast data
  // (views, copies, cat, to, ...: see is_data_movement_op).
  std::vector<std::string> low_precision_compute_ops() const;

  struct State;  // the counts, shared with the thread's callback

 private:
  std::shared_ptr<State> state_;
};

// Ops that do no arithmetic on their values (shape, copy, cast, concatenate, index): a BF16 input
// to them loses nothing.
bool is_data_movement_op(const std::string& name);

}  // namespace trainer::engine
