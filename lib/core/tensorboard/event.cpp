// See event.h.
// Tested by tests/core/test_tensorboard.cpp: scalar, file-version and image events equal
//   hand-encoded messages.
#include "core/tensorboard/event.h"

#include "core/tensorboard/protobuf_writer.h"

namespace trainer::core::tensorboard {
namespace {

// Event fields.
constexpr int kWallTime = 1, kStep = 2, kFileVersionField = 3, kSummary = 5;
// Summary and Summary.Value fields.
constexpr int kValue = 1, kTag = 1, kSimpleValue = 2, kImage = 4;
// Summary.Image fields.
constexpr int kHeight = 1, kWidth = 2, kColorspace = 3, kEncoded = 4;

std::string encode_image(const ImageValue& image) {
  ProtoWriter w;
  w.varint_field(kHeight, image.height);
  w.varint_field(kWidth, image.width);
  w.varint_field(kColorspace, image.colorspace);
  w.bytes_field(kEncoded, image.encoded);
  return w.bytes();
}

}  // namespace

std::string encode_file_version_event(double wall_time) {
  ProtoWriter w;
  w.double_field(kWallTime, wall_time);
  w.bytes_field(kFileVersionField, kFileVersion);
  return w.bytes();
}

std::string encode_summary_event(double wall_time, int64_t step,
                                 const std::vector<ScalarValue>& scalars,
                                 const std::vector<ImageValue>& images) {
  ProtoWriter summary;
  for (const auto& s : scalars) {
    ProtoWriter value;
    value.bytes_field(kTag, s.tag);
    value.float_field(kSimpleValue, s.value);
    summary.bytes_field(kValue, value.bytes());
  }
  for (const auto& image : images) {
    ProtoWriter value;
    value.bytes_field(kTag, image.tag);
    value.bytes_field(kImage, encode_image(image));
    summary.bytes_field(kValue, value.bytes());
  }
  ProtoWriter event;
  event.double_field(kWallTime, wall_time);
  event.varint_field(kStep, step);
  event.bytes_field(kSummary, summary.bytes());
  return event.bytes();
}

}  // namespace trainer::core::tensorboard
