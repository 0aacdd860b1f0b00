// Fine-tuning's weight transfer: copy what fits from another model's weights, by name.
//
// Why: weights trained on one dataset must seed a model for another. Unlike load_weights (which
// demands an exact fit), a key whose shape differs (the class layers when nc changes) or that the
// file lacks keeps the new model's initialisation, as the reference's intersect_dicts does.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model/weights_io.h"

namespace trainer::model {

struct TransferReport {
  int64_t transferred = 0;                    // model entries copied from the weights
  int64_t total = 0;                          // model entries (parameters and buffers)
  std::vector<std::string> shape_mismatches;  // model keys whose shape (or kind) differs
  std::vector<std::string> missing;           // model keys the weights lack
};

// Copies each entry of `weights` whose key names a parameter or buffer of `module` with the same
// shape (and both floating or both integer) into it; floating values take the target's dtype.
TransferReport transfer_weights(torch::nn::Module& module, const NamedTensorList& weights);

}  // namespace trainer::model
