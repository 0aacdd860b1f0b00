// TensorBoard's Event message (scalars, images, the file-version header) as protobuf bytes.
//
// Why: an event file is a sequence of Event records; TensorBoard's scalar and image dashboards
// read Summary values with a simple_value or an encoded image. Only the fields those two need are
// written: Event {wall_time = 1, step = 2, file_version = 3, summary = 5}, Summary {value = 1},
// Value {tag = 1, simple_value = 2, image = 4}, Image {height = 1, width = 2, colorspace = 3,
// encoded_image_string = 4}.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace trainer::core::tensorboard {

// The version string TensorBoard expects in a file's first event.
inline constexpr const char* kFileVersion = "brain.Event:2";

struct ScalarValue {
  std::string tag;  // "train/box_loss", ...
  float value = 0;
};

struct ImageValue {
  std::string tag;
  int height = 0;
  int width = 0;
  int colorspace = 3;   // channels: 1 grey, 3 RGB, 4 RGBA
  std::string encoded;  // PNG (or JPEG) file bytes
};

// The first event of a file: wall time and file_version only.
std::string encode_file_version_event(double wall_time);

// One event holding a Summary with `scalars` then `images` as its values.
std::string encode_summary_event(double wall_time, int64_t step,
                                 const std::vector<ScalarValue>& scalars,
                                 const std::vector<ImageValue>& images = {});

}  // namespace trainer::core::tensorboard
