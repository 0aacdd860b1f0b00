// See reference_checkpoint.h.
// Tested by tests/parity/test_reference_checkpoint_parity.cpp: reference checkpoints of every task
//   read natively, weights equal their state_dict bit for bit (needs the reference).
#include "model/reference_checkpoint.h"

#include <ATen/ATen.h>

namespace trainer::model {

std::optional<ReferenceCheckpoint> read_reference_checkpoint(const TorchFile& file) {
  if (!is_reference_checkpoint(file.root())) return std::nullopt;
  ReferenceRecord record;
  try {
    record = read_reference_record(file.pickle());
  } catch (const PickleError& e) {
    file.fail(e.what());
  }
  ReferenceCheckpoint out;
  out.info = std::move(record.info);
  out.weights.reserve(record.state.size());
  for (const auto& [key, value] : record.state) {
    const at::Tensor view = file.tensor(*value);
    const at::Tensor widened = view.is_floating_point() ? view.to(at::kFloat) : view;
    out.weights.emplace_back(key, widened.contiguous().clone());  // off the file's storages
  }
  return out;
}

}  // namespace trainer::model
