// See record.h.
// Tested by tests/core/test_tensorboard.cpp: TFRecord framing: length, masked crcs, data.
#include "core/tensorboard/record.h"

#include <cstdint>

#include "core/tensorboard/crc32c.h"
#include "core/tensorboard/protobuf_writer.h"

namespace trainer::core::tensorboard {
std::string frame_record(std::string_view data) {
  std::string out;
  out.reserve(data.size() + 16);
  append_little_endian(&out, static_cast<uint64_t>(data.size()));
  append_little_endian(&out, masked_crc32c(out));  // over the 8 length bytes
  out.append(data.data(), data.size());
  append_little_endian(&out, masked_crc32c(data));
  return out;
}

}  // namespace trainer::core::tensorboard
