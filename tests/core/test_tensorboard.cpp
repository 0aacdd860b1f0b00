// The event-file pieces byte for byte: CRC32C against published check values, varints and a
// whole Event message against bytes worked out by hand, and the TFRecord framing of one record.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "core/tensorboard/crc32c.h"
#include "core/tensorboard/event.h"
#include "core/tensorboard/protobuf_writer.h"
#include "core/tensorboard/record.h"

using namespace trainer::core::tensorboard;

namespace {

std::string bytes(std::initializer_list<unsigned> values) {
  std::string out;
  for (unsigned v : values) out.push_back(static_cast<char>(v));
  return out;
}

std::string varint(uint64_t value) {
  std::string out;
  append_varint(&out, value);
  return out;
}

}  // namespace

TEST_CASE("crc32c matches the Castagnoli check values") {
  CHECK(crc32c("") == 0u);
  CHECK(crc32c("123456789") == 0xE3069283u);
  CHECK(crc32c("abc") == 0x364B3FB7u);
  CHECK(crc32c(std::string(32, '\0')) == 0x8A9136AAu);    // RFC 3720's all-zero vector
  CHECK(crc32c(std::string(32, '\xFF')) == 0x62A8AB43u);  // and its all-ones vector
}

TEST_CASE("the TFRecord mask rotates right by 15 and adds 0xa282ead8") {
  CHECK(mask_crc(0) == 0xA282EAD8u);
  CHECK(mask_crc(0x00008000u) == 0xA282EAD9u);  // bit 15 rotates to bit 0
  CHECK(masked_crc32c("abc") == 0x21F1576Eu);   // TensorBoard's own masked_crc32c gives this
}

TEST_CASE("varints are base 128 with the low groups first") {
  CHECK(varint(0) == bytes({0x00}));
  CHECK(varint(1) == bytes({0x01}));
  CHECK(varint(127) == bytes({0x7F}));
  CHECK(varint(128) == bytes({0x80, 0x01}));
  CHECK(varint(300) == bytes({0xAC, 0x02}));
  CHECK(varint(~0ull) == bytes({0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01}));
  ProtoWriter w;
  w.varint_field(2, -1);  // int64 -1: ten bytes after the tag
  CHECK(w.bytes() == bytes({0x10, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01}));
}

TEST_CASE("a scalar event is the hand-encoded message") {
  // Event {wall_time: 1.5, step: 3, summary {value {tag: "a", simple_value: 0.5}}}
  const std::string want = bytes({
      0x09, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xF8, 0x3F,  // field 1, fixed64: 1.5
      0x10, 0x03,                                            // field 2, varint: 3
      0x2A, 0x0A,                                            // field 5, 10 bytes: Summary
      0x0A, 0x08,                                            //   field 1, 8 bytes: Value
      0x0A, 0x01, 0x61,                                      //     field 1: "a"
      0x15, 0x00, 0x00, 0x00, 0x3F,                          //     field 2, fixed32: 0.5f
  });
  CHECK(encode_summary_event(1.5, 3, {{"a", 0.5f}}) == want);
}

TEST_CASE("the file-version event and an image value are the hand-encoded messages") {
  const std::string version = encode_file_version_event(0.0);
  CHECK(version == bytes({0x09, 0, 0, 0, 0, 0, 0, 0, 0, 0x1A, 13}) + "brain.Event:2");

  ImageValue image{"im", 2, 3, 3, "PNG"};
  const std::string want = bytes({
                               0x09, 0,    0,    0,    0,    0,    0, 0, 0,  // wall_time 0
                               0x10, 0x07,                                   // step 7
                               0x2A, 19,                                     // Summary
                               0x0A, 17,                                     //   Value
                               0x0A, 0x02, 'i',  'm',                        //     tag "im"
                               0x22, 11,                                     //     field 4: Image
                               0x08, 0x02, 0x10, 0x03, 0x18, 0x03,  // height, width, colorspace
                               0x22, 0x03,                          // encoded, 3 bytes
                           }) +
                           "PNG";
  CHECK(encode_summary_event(0.0, 7, {}, {image}) == want);
}

TEST_CASE("one record is length, masked crc of the length, data, masked crc of the data") {
  const std::string record = frame_record("abc");
  REQUIRE(record.size() == 3 + 16);
  CHECK(record.substr(0, 8) == bytes({0x03, 0, 0, 0, 0, 0, 0, 0}));
  CHECK(record.substr(8, 4) == bytes({0xB0, 0x99, 0x49, 0x0E}));  // 0x0E4999B0, little-endian
  CHECK(record.substr(12, 3) == "abc");
  CHECK(record.substr(15, 4) == bytes({0x6E, 0x57, 0xF1, 0x21}));  // 0x21F1576E
  CHECK(frame_record("").size() == 16);
}
