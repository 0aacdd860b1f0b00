// Detections (COCO results entries as the validator makes them) as bytes and back, bit-exact.
//
// Why: a sharded validation sends each rank's detections to rank 0, which writes
// predictions.json and runs the COCO protocol on them; they must arrive exactly as one process
// would have made them (json text would round the doubles).
#pragma once

#include <vector>

#include "core/byte_stream.h"
#include "eval/coco_results.h"

namespace trainer::eval {

void write_detections(core::ByteWriter& out, const std::vector<Detection>& detections);
// Appends what write_detections wrote. Throws std::runtime_error on bytes that do not hold it.
void read_detections(core::ByteReader& in, std::vector<Detection>& detections);

}  // namespace trainer::eval
