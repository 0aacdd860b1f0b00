// See tensorboard_log.h.
#include "engine/log/tensorboard_log.h"

#include <spdlog/spdlog.h>

#include <cmath>

#include "core/tensorboard/event_file.h"
#include "data/image_codec.h"

namespace trainer::engine {

namespace tb = core::tensorboard;

std::vector<tb::ScalarValue> epoch_scalars(const EpochRecord& record, double epoch_seconds) {
  std::vector<tb::ScalarValue> scalars;
  for (const auto& [column, value] : record.cells()) {
    if (column == "epoch" || std::isnan(value)) continue;
    scalars.push_back({column, static_cast<float>(value)});
  }
  scalars.push_back({"time/epoch", static_cast<float>(epoch_seconds)});
  return scalars;
}

TensorBoardLog::TensorBoardLog(const std::filesystem::path& run_dir) {
  try {
    writer_ = std::make_unique<tb::EventFileWriter>(run_dir);
  } catch (const std::exception& e) {
    disable(e.what());
  }
}

TensorBoardLog::~TensorBoardLog() = default;

void TensorBoardLog::disable(const std::string& why) {
  spdlog::warn("TensorBoard events off for the rest of the run: {}", why);
  writer_.reset();
}

void TensorBoardLog::epoch(const EpochRecord& record, double epoch_seconds) {
  if (!writer_) return;
  try {
    writer_->write(record.epoch, epoch_scalars(record, epoch_seconds));
  } catch (const std::exception& e) {
    disable(e.what());
  }
}

void TensorBoardLog::image(const std::string& tag, const std::filesystem::path& file,
                           int64_t step) {
  if (!writer_) return;
  // Through the build's image codecs (data/image_codec.h): the GPU bundle's light build has no
  // OpenCV imgcodecs.
  std::vector<uint8_t> bytes, png;
  std::string error;
  cv::Mat pixels;
  if (data::read_file_bytes(file, &bytes)) pixels = data::decode_image_bgr(bytes, &error);
  if (!pixels.empty()) png = data::encode_image(".png", pixels, 0, &error);
  if (pixels.empty() || png.empty()) {
    spdlog::warn("TensorBoard: cannot read {}; image left out", file.string());
    return;
  }
  tb::ImageValue value{tag, pixels.rows, pixels.cols, pixels.channels(),
                       std::string(png.begin(), png.end())};
  try {
    writer_->write(step, {}, {value});
  } catch (const std::exception& e) {
    disable(e.what());
  }
}

}  // namespace trainer::engine
