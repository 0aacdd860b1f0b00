// TFRecord framing: how each Event is stored in an event file.
//
// Why: TensorBoard reads event files as TFRecords and rejects a record whose checksums do not
// match, so the framing must be exact: uint64 length (little-endian), masked CRC32C of those 8
// bytes, the data, masked CRC32C of the data.
#pragma once

#include <string>
#include <string_view>

namespace trainer::core::tensorboard {

// `data` framed as one TFRecord (data.size() + 16 bytes).
std::string frame_record(std::string_view data);

}  // namespace trainer::core::tensorboard
