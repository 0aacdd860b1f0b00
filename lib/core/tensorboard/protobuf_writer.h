// The few protobuf wire-format pieces an event file needs, encoded by hand.
//
// Why: TensorBoard's Event and Summary messages use only varints, 64-bit doubles, 32-bit floats
// and length-delimited fields; writing those bytes directly keeps the protobuf library (and its
// generated code) out of the build.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace trainer::core::tensorboard {

// Appends fields to a message's bytes, in the order called (protobuf readers accept any order).
class ProtoWriter {
 public:
  // Field with wire type 0 (int32, int64, uint64, bool, enum); negative values take 10 bytes.
  void varint_field(int field, int64_t value);
  // Field with wire type 1 (double), little-endian.
  void double_field(int field, double value);
  // Field with wire type 5 (float), little-endian.
  void float_field(int field, float value);
  // Field with wire type 2 (string, bytes, nested message): length varint, then the bytes.
  void bytes_field(int field, std::string_view bytes);

  const std::string& bytes() const { return bytes_; }

 private:
  void tag(int field, int wire_type);
  std::string bytes_;
};

// Appends `value` as a base-128 varint (7 bits per byte, low groups first).
void append_varint(std::string* out, uint64_t value);

// Appends an unsigned integer's bytes, lowest first (fixed-width protobuf fields, record framing).
template <typename Word>
void append_little_endian(std::string* out, Word word) {
  for (size_t i = 0; i < sizeof(Word); ++i) {
    out->push_back(static_cast<char>((word >> (8 * i)) & 0xFFu));
  }
}

}  // namespace trainer::core::tensorboard
