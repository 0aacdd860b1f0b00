// The settings of `trainer predict`, parsed from the reference's key=value arguments.
//
// Why its own struct: prediction shares no training keys, and the training config (core/config.h)
// is not the place for a source path or drawing widths. Keys, defaults and meanings are the
// reference predictor's (Ultralytics 8.4.190 `yolo predict`); `model` and `data` are ours, for
// weights that do not say which architecture and classes they belong to.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace trainer::predict {

// The reference's `nms` key: auto (null) runs YOLO26 on the one-to-many head with NMS, as 8.4.190
// does; false picks the NMS-free one-to-one top-k; YOLO11 always uses NMS.
enum class NmsChoice { kAuto, kOn, kOff };

struct PredictOptions {
  std::filesystem::path weights{};  // .pt weights or a .ckpt checkpoint (its EMA weights)
  std::string source{};             // image, folder, glob, .txt list or video
  // model name, when the weights do not say (e.g. yolo26n); a .pt/.ckpt path here is taken as
  // the weights, as `val` and the reference's users type it (model=runs/.../best.pt)
  std::string model{};
  std::filesystem::path data{};  // dataset yaml for class names (and pose's kpt_shape)
  int imgsz{640};                // unless given, the weights' run's (recorded_arguments.h)
  bool imgsz_given{false};
  double conf{0.25};
  double iou{0.7};
  int64_t max_det{300};
  std::string device{};  // "" = first CUDA device if present, else cpu
  int64_t batch{1};
  bool save{true};  // annotated images / video
  bool save_txt{false};
  bool save_conf{false};
  bool save_json{false};
  std::string project{};  // "" = runs/<task>
  std::string name{"predict"};
  bool exist_ok{false};
  int line_width{0};  // 0 = from the image size, as the reference
  int64_t vid_stride{1};
  bool half{false};  // reduced precision: BF16 autocast (CUDA), ignored on the CPU
  NmsChoice nms{NmsChoice::kAuto};
  bool agnostic_nms{false};
};

// Parses `key=value` arguments (YAML-style scalars: true/false, numbers). Throws
// core::ConfigError naming the key for an unknown key (with the closest valid one), a malformed
// or out-of-range value, or a missing weights= / source=.
PredictOptions parse_predict_args(const std::vector<std::string>& args);

}  // namespace trainer::predict
