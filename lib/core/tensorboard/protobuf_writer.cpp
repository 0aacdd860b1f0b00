// See protobuf_writer.h.
// Tested by tests/core/test_tensorboard.cpp: varint base-128 encoding and field encodings.
#include "core/tensorboard/protobuf_writer.h"

#include <cstring>

namespace trainer::core::tensorboard {
void append_varint(std::string* out, uint64_t value) {
  while (value >= 0x80u) {
    out->push_back(static_cast<char>((value & 0x7Fu) | 0x80u));
    value >>= 7;
  }
  out->push_back(static_cast<char>(value));
}

void ProtoWriter::tag(int field, int wire_type) {
  append_varint(&bytes_, (static_cast<uint64_t>(field) << 3) | static_cast<uint64_t>(wire_type));
}

void ProtoWriter::varint_field(int field, int64_t value) {
  tag(field, 0);
  append_varint(&bytes_, static_cast<uint64_t>(value));
}

void ProtoWriter::double_field(int field, double value) {
  tag(field, 1);
  uint64_t word = 0;
  std::memcpy(&word, &value, sizeof word);
  append_little_endian(&bytes_, word);
}

void ProtoWriter::float_field(int field, float value) {
  tag(field, 5);
  uint32_t word = 0;
  std::memcpy(&word, &value, sizeof word);
  append_little_endian(&bytes_, word);
}

void ProtoWriter::bytes_field(int field, std::string_view bytes) {
  tag(field, 2);
  append_varint(&bytes_, bytes.size());
  bytes_.append(bytes.data(), bytes.size());
}

}  // namespace trainer::core::tensorboard
