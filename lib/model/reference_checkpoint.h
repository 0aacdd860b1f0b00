// A reference (Ultralytics) checkpoint read without Python: its weights with the reference's
// state-dict keys, floating tensors widened to fp32 (exactly: fp16 and bf16 values are fp32
// values), and the record of what model they belong to (model/reference_pickle.h).
//
// Why: every checkpoint people start from (the released yolo26n.pt ... yolo11x-obb.pt, and each
// best.pt / last.pt a reference user trained) pickles the model as Python objects, which only
// Python with ultralytics installed could load until now.
#pragma once

#include <optional>

#include "model/reference_pickle.h"
#include "model/torch_file.h"
#include "model/weights_io.h"

namespace trainer::model {

struct ReferenceCheckpoint {
  ReferenceInfo info;
  NamedTensorList weights;  // the reference's state-dict keys and order
};

// The checkpoint in `file`, or nullopt when it is not a reference checkpoint (e.g. our plain dict
// of tensors). Throws core::InputError (via file.fail) for a reference checkpoint whose module
// tree or tensors cannot be read.
std::optional<ReferenceCheckpoint> read_reference_checkpoint(const TorchFile& file);

}  // namespace trainer::model
