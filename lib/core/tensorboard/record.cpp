// See record.h.
#include "core/tensorboard/record.h"

#include <cstdint>

#include "core/tensorboard/crc32c.h"

namespace trainer::core::tensorboard {
namespace {

template <typename Word>
void append_little_endian(std::string* out, Word word) {
  for (size_t i = 0; i < sizeof(Word); ++i) {
    out->push_back(static_cast<char>((word >> (8 * i)) & 0xFFu));
  }
}

}  // namespace

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
